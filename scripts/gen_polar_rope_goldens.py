#!/usr/bin/env python3
"""Makes tests/fixtures/hf_arch/polar_rope.json: torch's complex64 products x * freqs_cis over
runs of n complex numbers, as DeepSeek-V2's and Llama 4's apply_rotary_emb multiply them
(freqs_cis = torch.polar(ones, angles)), for the C++ test HfPolarRope
(tests/models/hf/polar_rope_test.cpp) of rope.hpp's rotate_pairs_polar.

torch's CPU mul kernel rounds an element by where it lies in the TensorIterator's contiguous
run: the vectorized steps (8 numbers) multiply and subtract/add with each product rounded, the
scalar remainder with fused multiply-adds, so the goldens hold one run per length, each computed
as one tensor of n numbers. Values are float32 bit patterns (uint32).

Environment: torch 2.15.0 (CPU), ATEN_CPU_CAPABILITY=avx2 unless set.
Usage: python scripts/gen_polar_rope_goldens.py
"""
import json
import os

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")  # before torch is imported
import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LENGTHS = (1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 19, 23, 37)
ROWS = 8  # runs per length


def bits(t):
    return t.contiguous().view(torch.int32).reshape(-1).numpy().astype(np.uint32).tolist()


def main():
    g = torch.Generator().manual_seed(0)
    cases = []
    for n in LENGTHS:
        x = torch.randn(ROWS, n, 2, generator=g)
        angle = torch.rand(ROWS, n, generator=g) * 64.0
        freqs = torch.polar(torch.ones_like(angle), angle)
        # One run of n per product: each row multiplied on its own.
        out = torch.stack([torch.view_as_real(torch.view_as_complex(x[r]) * freqs[r])
                           for r in range(ROWS)])
        cases.append({"n": n, "x": bits(x), "cos": bits(freqs.real), "sin": bits(freqs.imag),
                      "out": bits(out)})
    doc = {"meta": {"torch": torch.__version__,
                    "cpu_capability": torch.backends.cpu.get_cpu_capability(),
                    "script": "scripts/gen_polar_rope_goldens.py", "rows": ROWS},
           "cases": cases}
    path = os.path.join(ROOT, "tests", "fixtures", "hf_arch", "polar_rope.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
