#!/usr/bin/env python3
"""Compares the hf backend with the reference's HFLM (lm_eval + transformers) on the same
request list, at the LM level: per-request loglikelihoods and is_greedy, rolling loglikelihoods
and generate_until outputs.

Environment (offline from PyPI + Debian): apt-get install python3-torch (1.13.1);
  /usr/bin/python3 -m venv --system-site-packages .venv-hfref
  .venv-hfref/bin/pip install "transformers<4.48" "lm_eval==0.4.*"
Usage: .venv-hfref/bin/python scripts/compare_hf_reference.py [BUILD_DIR] MODEL_DIR [MODEL_DIR...]
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LL = [
    ["Once upon a time", ", there was a little girl named Lily."],
    ["Once upon a time", " there was a big dog."],
    ["Lily went to the park", " with her mom."],
    ["Tom had a big red ball. He", " liked to play with it."],
    ["The cat sat on the mat and", " looked at the bird."],
    ["One day, a little bird", " flew to the tree."],
    ["Question: What is 2+2?\nAnswer:", " 4"],
    ["Question: What is 2+2?\nAnswer:", " 5"],
    ["Question: What is 2+2?\nAnswer:", " four"],
    ["Once upon a time ", "there was a cat."],          # trailing space moves
    ["", "Once upon a time"],                           # empty context
    ["The sun was hot.", "\n\nThe end."],
    ["She said, \"Hello!\"", " and smiled."],
    ["A", " b c d e f g h i j k l m n o p q r s t u v w x y z"],
]
ROLLING = [
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park.",
    "The end.",
    "Tom and Sue went to the store. They bought apples, bananas and milk. Then they went home and ate"
    " lunch together. It was a happy day for everyone." * 3,
]
GEN = [
    ["Once upon a time", {"until": ["."], "max_gen_toks": 40}],
    ["Lily went to the park", {"until": ["\n", "Lily"], "max_gen_toks": 40}],
    ["Tom had a big red ball. He", {"until": [], "max_gen_toks": 30, "do_sample": False}],
    ["One day", {"until": ["!"], "max_gen_toks": 25}],
]


def build_driver(build):
    exe = os.path.join(build, "hf_reference_driver")
    src = os.path.join(ROOT, "scripts", "hf_reference_driver.cpp")
    lib = os.path.join(build, "liblmeval_hf.a")
    if os.path.exists(exe) and os.path.getmtime(exe) > max(os.path.getmtime(src), os.path.getmtime(lib)):
        return exe
    libs = [os.path.join(build, f"liblmeval_{m}.a") for m in ["hf", "models", "config", "data", "tokenizer", "template", "core"]]
    cmd = (["c++", "-O2", "-std=c++20", f"-I{ROOT}/include", f"-I{ROOT}/src", "-I/usr/include",
            "-I/usr/include/torch/csrc/api/include", src, "-o", exe] + libs +
           ["-Wl,--no-as-needed", "-ltorch", "-ltorch_cpu", "-lc10", "-Wl,--as-needed",
            "-lspdlog", "-lfmt", "-lpcre2-8", "-licuuc", "-lpthread", "-ldl", "-fopenmp", "-lsqlite3", "-lcurl", "-lyaml-cpp", "-lzstd", "-lsnappy", "-lz"])
    subprocess.run(cmd, check=True)
    return exe


def ours(exe, model):
    req = {"model_args": {"pretrained": model, "device": "cpu", "dtype": "float32", "batch_size": 4},
           "loglikelihood": LL, "rolling": ROLLING, "generate": GEN}
    p = subprocess.run([exe], input=json.dumps(req), capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])  # the results line follows the log


def for_transformers4(model):
    """A copy of the folder that transformers 4.47 reads as transformers 5 wrote it: 5.x writes
    tokenizer_config.json extra_special_tokens as a list (4.47 wants a dict) and rotary settings
    under rope_parameters (4.47 reads rope_theta / rope_scaling / partial_rotary_factor)."""
    import shutil
    import tempfile
    out = tempfile.mkdtemp(prefix="hfref_")
    for fn in os.listdir(model):
        if os.path.isfile(os.path.join(model, fn)):
            shutil.copy(os.path.join(model, fn), os.path.join(out, fn))
            os.chmod(os.path.join(out, fn), 0o644)
    tc = os.path.join(out, "tokenizer_config.json")
    if os.path.exists(tc):
        j = json.load(open(tc))
        if isinstance(j.get("extra_special_tokens"), list):
            del j["extra_special_tokens"]
        json.dump(j, open(tc, "w"))
    c = json.load(open(os.path.join(out, "config.json")))
    rp = c.get("rope_parameters")
    if isinstance(rp, dict):
        c.setdefault("rope_theta", rp.get("rope_theta", 10000.0))
        if "partial_rotary_factor" in rp:
            c.setdefault("partial_rotary_factor", rp["partial_rotary_factor"])
            c.setdefault("rotary_pct", rp["partial_rotary_factor"])
        c.setdefault("rotary_emb_base", rp.get("rope_theta", 10000.0))
        if rp.get("rope_type", "default") != "default":
            c["rope_scaling"] = dict(rp)
    json.dump(c, open(os.path.join(out, "config.json"), "w"))
    return out


def reference(model):
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    # Debian's torch 1.13 cannot import torch.distributed.fsdp under Python 3.11; generate() only
    # asks whether the model is FSDP-managed, which it is not.
    import transformers.generation.utils as gen_utils
    gen_utils.is_fsdp_managed_module = lambda *a, **k: False
    lm = HFLM(pretrained=for_transformers4(model), device="cpu", dtype="float32", batch_size=1)
    mk = lambda t, args: Instance(request_type=t, doc={}, arguments=args, idx=0)
    ll = lm.loglikelihood([mk("loglikelihood", tuple(r)) for r in LL], disable_tqdm=True)
    roll = lm.loglikelihood_rolling([mk("loglikelihood_rolling", (t,)) for t in ROLLING], disable_tqdm=True)
    gen = lm.generate_until([mk("generate_until", (c, dict(k))) for c, k in GEN], disable_tqdm=True)
    return {"loglikelihood": [[float(a), bool(b)] for a, b in ll], "rolling": [float(x) for x in roll],
            "generate": gen}


def main():
    args = sys.argv[1:]
    build = os.path.join(ROOT, "build-hf")
    if args and os.path.exists(os.path.join(args[0], "CMakeCache.txt")):
        build = args.pop(0)
    exe = build_driver(build)
    summary = []
    for model in args:
        try:
            b = reference(model)
        except Exception as e:  # e.g. Qwen3 needs transformers >= 4.51, which needs torch >= 2
            row = {"model": model, "reference_failed": f"{type(e).__name__}: {str(e)[:160]}"}
            summary.append(row)
            print(json.dumps(row, ensure_ascii=False), flush=True)
            continue
        a = ours(exe, model)
        d_ll = max(abs(x[0] - y[0]) for x, y in zip(a["loglikelihood"], b["loglikelihood"]))
        greedy_same = sum(x[1] == y[1] for x, y in zip(a["loglikelihood"], b["loglikelihood"]))
        d_roll = max(abs(x - y) for x, y in zip(a["rolling"], b["rolling"]))
        gen_same = sum(x == y for x, y in zip(a["generate"], b["generate"]))
        row = {"model": model, "loglikelihood_max_abs_diff": d_ll,
               "is_greedy_identical": f"{greedy_same}/{len(LL)}", "rolling_max_abs_diff": d_roll,
               "generations_identical": f"{gen_same}/{len(GEN)}"}
        for i, (x, y) in enumerate(zip(a["generate"], b["generate"])):
            if x != y:
                row.setdefault("generation_diffs", []).append({"i": i, "ours": x, "reference": y})
        summary.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
