#!/usr/bin/env python3
"""What the half-precision comparisons (compare_half_precision.py, half_precision_ties.py) share:
the dtypes they compare, a dtype's unit in the last place, the scripts they drive (loaded by
path: they are scripts, not a package) and lm-eval's driver, built once for a build folder.

Environment: torch 2.15.0, transformers 5.23.0, lm-eval 0.4.13 (CPU), as compare_hf_zoo.py.
Not run by itself.
"""
import importlib.util
import math
import os
import sys
from types import SimpleNamespace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTYPES = ("float16", "bfloat16")


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ulp(x, dtype, at_zero):
    """The spacing of `dtype`'s numbers at x (float16: 10 fraction bits, bfloat16: 7); `at_zero`
    where x is 0 (each caller has its own)."""
    if x == 0:
        return at_zero
    return 2.0 ** (math.floor(math.log2(abs(x))) - (10 if dtype == "float16" else 7))


def drivers(build):
    """compare_hf_reference (cmp: the requests, the reference's side), compare_hf_zoo (zoo: the
    models, both sides' runs), gen_hf_arch_fixtures (fix: the architectures' configs) and exe,
    lm-eval's driver built in `build`."""
    cmp = load_script("compare_hf_reference")
    zoo = load_script("compare_hf_zoo")
    fix = load_script("gen_hf_arch_fixtures")
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    return SimpleNamespace(cmp=cmp, zoo=zoo, fix=fix, exe=cmp.build_driver(build))
