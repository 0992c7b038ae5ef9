#!/usr/bin/env python3
"""Float16 and bfloat16 checkpoints run with dtype=auto, lm-eval's hf backend against the
reference (lm_eval's HFLM over transformers) on the same CPU: one line per architecture and
dtype with the largest per-request loglikelihood difference, is_greedy agreement, the largest
rolling loglikelihood difference and how many greedy generations are identical.

The models are scripts/compare_hf_zoo.py's zoo (every architecture lm-eval runs natively, tiny
random weights from fixed seeds, the stories260K tokenizer), saved once per dtype with the
config's dtype set to it, so that dtype=auto resolves to it on both sides. The requests are
scripts/compare_hf_reference.py's. Both sides run batch_size 1.

Environment: torch 2.15.0, transformers 5.23.0, lm-eval 0.4.13 (CPU), as compare_hf_zoo.py.
lm-eval reproduces torch's AVX2 kernels, so on a machine with more the script makes the
reference take those (unless set): ATEN_CPU_CAPABILITY=avx2 (torch's own kernels) and
ONEDNN_MAX_CPU_ISA=AVX2 (on a CPU with AVX512_BF16 torch's bfloat16 matrix products are oneDNN's
JIT kernels otherwise: docs/fidelity.md).
Usage: python scripts/compare_half_precision.py BUILD_DIR ZOO_DIR [ARCH ...]
"""
import json
import os
import sys

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")  # before torch is imported
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
import torch  # noqa: E402

from half_precision_setup import DTYPES, drivers, ulp  # noqa: E402


def save_as(src, dtype, out):
    """The float32 zoo model of `src` saved in `dtype`, its config saying so."""
    import transformers
    model = transformers.AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32)
    model = model.to(getattr(torch, dtype))
    model.config.dtype = getattr(torch, dtype)
    model.save_pretrained(out, safe_serialization=True)
    for fn in os.listdir(src):
        if fn.startswith("tokenizer") or fn == "special_tokens_map.json":
            with open(os.path.join(src, fn), "rb") as a, open(os.path.join(out, fn), "wb") as b:
                b.write(a.read())
    return out


def main():
    build, zoo, only = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    drv = drivers(build)
    zoo_mod, fix, cmp, exe = drv.zoo, drv.fix, drv.cmp, drv.exe
    os.makedirs(zoo, exist_ok=True)
    for name, spec in zoo_mod.zoo_specs(fix).items():
        if only and name not in only:
            continue
        try:
            f32 = zoo_mod.make_model(fix, name, spec, zoo)
        except Exception as e:  # noqa: BLE001 - one line per architecture, whatever fails
            print(json.dumps({"arch": name, "failed": f"{type(e).__name__}: {str(e)[:200]}"}), flush=True)
            continue
        for dtype in DTYPES:
            row = {"arch": name, "dtype": dtype}
            try:
                d = save_as(f32, dtype, f32 + "_" + dtype)
                b = zoo_mod.reference(cmp, d, dtype="auto")
                a = zoo_mod.ours_bs1(exe, d, dtype="auto")
            except Exception as e:  # noqa: BLE001
                row["failed"] = f"{type(e).__name__}: {str(e)[:300]}"
                print(json.dumps(row), flush=True)
                continue
            pairs = list(zip(a["loglikelihood"], b["loglikelihood"]))
            row["ll_max_abs_diff"] = float(f"{max(abs(x[0] - y[0]) for x, y in pairs):.3g}")
            # HFLM's sums are rounded to the dtype: the difference in units of the sum's last place.
            row["ll_max_ulps"] = max(abs(x[0] - y[0]) / ulp(y[0], dtype, 1.0) for x, y in pairs)
            row["is_greedy_same"] = f"{sum(x[1] == y[1] for x, y in pairs)}/{len(pairs)}"
            row["rolling_max_abs_diff"] = float(
                f"{max(abs(x - y) for x, y in zip(a['rolling'], b['rolling'])):.3g}")
            row["generations_same"] = f"{sum(x == y for x, y in zip(a['generate'], b['generate']))}/{len(cmp.GEN)}"
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
