#!/usr/bin/env python3
"""Packs the lm_eval_cpp Python package of a build folder into a wheel (issue 33, point 5).

    cmake --build build --target lmeval_pymodule lm-eval
    python3 scripts/build_wheel.py [--build build] [--out dist]
    pip install dist/lm_eval_cpp-*.whl

The wheel holds python/lm_eval_cpp, the extension build/python/lm_eval_cpp/_lmeval*.so, a copy
of tasks/ and the hf plugins of the build (their libtorch stays the machine's own: the wheel is
for the machine, or one like it, that built it). Its tag is the running interpreter's
(cpXY-cpXY-linux_<arch>): build and install with the same Python.
"""

import argparse
import base64
import hashlib
import os
import sys
import sysconfig
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGINS = ("liblmeval_hf_cpu.so", "liblmeval_hf_cuda.so", "liblmeval_hf_transformers.so")


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        for line in f:
            if line.startswith("project(lmeval VERSION "):
                return line.split()[2]
    sys.exit("CMakeLists.txt: no `project(lmeval VERSION x.y.z` line")


def members(build):
    """(archive name, source file) of everything the wheel holds."""
    pkg = os.path.join(build, "python", "lm_eval_cpp")
    ext = [n for n in os.listdir(pkg) if n.startswith("_lmeval") and n.endswith(".so")] \
        if os.path.isdir(pkg) else []
    if not ext:
        sys.exit(f"{pkg}: no _lmeval*.so: build the lmeval_pymodule target first")
    out = [(f"lm_eval_cpp/{n}", os.path.join(pkg, n)) for n in ext]
    src = os.path.join(ROOT, "python", "lm_eval_cpp")
    out += [(f"lm_eval_cpp/{n}", os.path.join(src, n)) for n in sorted(os.listdir(src))
            if n.endswith(".py")]
    tasks = os.path.join(ROOT, "tasks")
    for folder, dirs, files in os.walk(tasks):
        dirs.sort()
        for n in sorted(files):
            path = os.path.join(folder, n)
            out.append(("lm_eval_cpp/tasks/" + os.path.relpath(path, tasks), path))
    out += [(f"lm_eval_cpp/plugins/{n}", os.path.join(build, n)) for n in PLUGINS
            if os.path.exists(os.path.join(build, n))]
    return out


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "dist"))
    args = ap.parse_args()
    ver = version()
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    tag = f"{py}-{py}-{plat}"
    info = f"lm_eval_cpp-{ver}.dist-info"
    os.makedirs(args.out, exist_ok=True)
    wheel = os.path.join(args.out, f"lm_eval_cpp-{ver}-{tag}.whl")
    meta = {
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: lm-eval-cpp\nVersion: {ver}\n"
            "Summary: lm-eval's C++ evaluator: simple_evaluate and TaskManager of "
            "lm-evaluation-harness 0.4.13\nLicense: MIT\n"
            f"Requires-Python: =={sys.version_info.major}.{sys.version_info.minor}.*\n"),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: lm-eval scripts/build_wheel.py\n"
            f"Root-Is-Purelib: false\nTag: {tag}\n"),
    }
    records = []
    with zipfile.ZipFile(wheel + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
        for name, path in members(args.build):
            with open(path, "rb") as f:
                data = f.read()
            info_ = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info_.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info_.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info_, data)
            records.append(record_line(name, data))
        for name, text in meta.items():
            z.writestr(name, text)
            records.append(record_line(name, text.encode()))
        records.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    os.replace(wheel + ".tmp", wheel)
    print(wheel)


if __name__ == "__main__":
    main()
