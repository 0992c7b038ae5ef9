#!/usr/bin/env python3
"""Golden numbers for the inference of `lm-eval compare` and `lm-eval power` from scipy/statsmodels.

Writes tests/stats/goldens/inference.json:
  - mcnemar_difference: statsmodels' exact McNemar p-value and the Clopper-Pearson interval of the
    discordant share (proportion_confint(method="beta")), mapped to the difference of accuracies
    (m/n)(2*pi - 1) as src/stats/paired.cpp does;
  - power / items_needed: statsmodels' NormalIndPower with ratio=0 (one-sample z test, both tails);
  - holm / fdr_bh: statsmodels' multipletests adjusted p-values;
  - kendall: scipy's kendalltau (tau-b) of checkpoint order against scores, ties included.

Run with a venv holding scipy, statsmodels and numpy (default .venv-compare in the repo):
  python3 -m venv .venv-compare
  .venv-compare/bin/pip install scipy statsmodels numpy
  .venv-compare/bin/python scripts/gen_inference_goldens.py
"""
import json
import os
import sys

import numpy as np
import scipy
import statsmodels
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_confint

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "stats", "goldens", "inference.json")


def fl(x):
    x = float(x)
    return x if np.isfinite(x) else None


def mcnemar_difference_cases():
    cases = []
    # (only_a, only_b, n): the 4 vs 0 of 10, boundaries, thousands of discordant pairs.
    for b, c, n in [(4, 0, 10), (0, 4, 10), (0, 6, 57), (1, 8, 40), (15, 5, 40), (5, 15, 40), (12, 30, 300),
                    (100, 140, 1000), (2000, 2100, 14042), (0, 1, 1), (3, 3, 20), (7, 0, 7)]:
        m = b + c
        p = mcnemar([[0, b], [c, 0]], exact=True).pvalue
        lo, hi = proportion_confint(c, m, alpha=0.05, method="beta")
        cases.append({"only_a": b, "only_b": c, "n": n, "p": fl(p), "diff": (c - b) / n,
                      "ci_low": fl(m / n * (2 * lo - 1)), "ci_high": fl(m / n * (2 * hi - 1))})
    return cases


def power_cases():
    cases = []
    for d, sd, n, alpha, power in [(0.03, 0.5, 1000, 0.05, 0.8), (0.01, 0.3, 14042, 0.05, 0.9),
                                   (0.1, 0.7, 40, 0.01, 0.8), (-0.05, 0.45, 250, 0.05, 0.95), (0.2, 1.3, 100, 0.1, 0.5)]:
        analysis = NormalIndPower()
        cases.append({"d": d, "sd": sd, "n": n, "alpha": alpha, "power": power,
                      "power_at_n": fl(analysis.power(effect_size=d / sd, nobs1=n, alpha=alpha, ratio=0)),
                      "items_needed": fl(analysis.solve_power(effect_size=abs(d) / sd, alpha=alpha, power=power, ratio=0))})
    return cases


def multipletests_cases(rng):
    cases = []
    families = [[0.01, 0.04, 0.03, 0.2, 0.5], [0.001] * 3 + [0.049, 0.051], list(rng.uniform(0, 0.2, 57)),
                [0.3], [0.02, 0.02, 0.02, 0.9]]
    for p in families:
        p = [float(x) for x in p]
        cases.append({"p": p, "holm": [fl(x) for x in multipletests(p, method="holm")[1]],
                      "fdr_bh": [fl(x) for x in multipletests(p, method="fdr_bh")[1]]})
    return cases


def kendall_cases(rng):
    from scipy import stats
    cases = []
    for y in [[0.2, 0.25, 0.24, 0.3, 0.31], [0.5, 0.5, 0.4, 0.6], list(rng.uniform(0, 1, 12)), [0.3, 0.2, 0.1],
              [0.25, 0.25, 0.3, 0.3, 0.3, 0.2]]:
        x = list(range(len(y)))
        cases.append({"x": x, "y": [float(v) for v in y], "tau": fl(stats.kendalltau(x, y).statistic)})
    return cases


def main():
    rng = np.random.default_rng(18)
    golden = {
        "generator": "scripts/gen_inference_goldens.py",
        "versions": {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
                     "statsmodels": statsmodels.__version__},
        "mcnemar_difference": mcnemar_difference_cases(),
        "power": power_cases(),
        "multipletests": multipletests_cases(rng),
        "kendall": kendall_cases(np.random.default_rng(7)),
    }
    with open(OUT, "w") as f:
        json.dump(golden, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
