#!/usr/bin/env python3
"""Golden numbers for src/stats (paired tests, item analysis, bootstrap ranks) from scipy/statsmodels.

Writes tests/stats/goldens/paired.json: every input (score vectors, clusters, the bootstrap resample
indices) and what scipy / statsmodels / numpy compute from it. The C++ tests feed the same inputs to
lmeval::stats and compare to within 1e-9.

Run with a venv holding scipy, statsmodels and numpy:
  python3 -m venv .venv-compare
  .venv-compare/bin/pip install scipy statsmodels numpy
  .venv-compare/bin/python scripts/gen_paired_goldens.py
"""
import json
import os
import random
import sys

import numpy as np
import scipy
import statsmodels
import statsmodels.api as sm
from scipy import optimize, stats
from statsmodels.stats.contingency_tables import mcnemar

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "stats", "goldens", "paired.json")


def fl(x):
    """JSON-safe float: NaN/inf become null."""
    x = float(x)
    return x if np.isfinite(x) else None


def mcnemar_cases():
    cases = []
    for b, c in [(0, 0), (5, 0), (0, 7), (3, 3), (12, 30), (30, 12), (100, 140), (2000, 2100), (1, 2), (57, 58)]:
        res = mcnemar([[10, b], [c, 20]], exact=True)
        cases.append({"b": b, "c": c, "p": fl(res.pvalue)})
    return cases


def mde80(se):
    """The d with P(reject | true difference d) = 0.8 for a two-sided 5% z-test with standard error se."""
    z = stats.norm.ppf(0.975)
    f = lambda d: stats.norm.cdf(d / se - z) + stats.norm.cdf(-d / se - z) - 0.8
    return optimize.brentq(f, 0, 10 * se, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)


def paired_t_cases(rng):
    cases = []
    for n, binary in [(10, False), (57, True), (250, True), (300, False), (2, False)]:
        if binary:
            a = (rng.random(n) < 0.55).astype(float)
            b = np.where(rng.random(n) < 0.8, a, 1 - a)
        else:
            a = rng.normal(0.5, 0.2, n)
            b = a + rng.normal(0.03, 0.1, n)
        res = stats.ttest_rel(b, a)
        ci = res.confidence_interval(0.95)
        d = b - a
        se = stats.sem(d)
        cases.append({
            "a": a.tolist(), "b": b.tolist(),
            "diff": fl(d.mean()), "se": fl(se), "t": fl(res.statistic), "df": fl(res.df), "p": fl(res.pvalue),
            "ci_low": fl(ci.low), "ci_high": fl(ci.high),
            "correlation": fl(stats.pearsonr(a, b).statistic),
            # minimum detectable difference at 80% power, two-sided 5%, both rejection tails counted
            "mde80": fl(mde80(se)),
        })
    return cases


def clustered_cases(rng):
    cases = []
    # The last case draws from its own generator so that the cases after it keep their inputs.
    for n, groups, r in [(60, 12, rng), (200, 23, rng), (45, 45, rng), (400, 80, np.random.default_rng(9))]:
        rng = r
        cluster = np.sort(rng.integers(0, groups, n))
        # remap to dense ids in order of first appearance
        _, dense = np.unique(cluster, return_inverse=True)
        shock = rng.normal(0, 0.3, groups)[cluster]
        a = (rng.random(n) < 0.5 + 0.2 * np.tanh(shock)).astype(float)
        b = (rng.random(n) < 0.55 + 0.2 * np.tanh(shock)).astype(float)
        d = b - a
        g = len(np.unique(dense))
        # Below 30 clusters lm-eval uses the t distribution with G - 1 df (statsmodels' use_t=True).
        fit = sm.OLS(d, np.ones((n, 1))).fit(cov_type="cluster", cov_kwds={"groups": dense}, use_t=bool(g < 30))
        ci = fit.conf_int(0.05)[0]
        cases.append({
            "a": a.tolist(), "b": b.tolist(), "cluster": dense.tolist(),
            "diff": fl(fit.params[0]), "se": fl(fit.bse[0]), "z": fl(fit.tvalues[0]), "p": fl(fit.pvalues[0]),
            "ci_low": fl(ci[0]), "ci_high": fl(ci[1]), "clusters": int(g),
            "df": fl(fit.df_resid_inference) if g < 30 else None,
        })
    return cases


def item_analysis_case(rng):
    runs, items = 6, 25
    ability = np.linspace(-1, 1, runs)
    hardness = rng.normal(0, 1, items)
    p = 1 / (1 + np.exp(-(ability[:, None] * 2 - hardness[None, :])))
    scores = (rng.random((runs, items)) < p).astype(float)
    scores[:, 3] = 0.0  # an item no run gets right
    scores[:, 4] = 1.0  # an item every run gets right
    totals = scores.sum(axis=1)
    difficulty, discrimination = [], []
    for i in range(items):
        col = scores[:, i]
        difficulty.append(fl(col.mean()))
        if col.std() == 0:
            discrimination.append(None)
        else:
            discrimination.append(fl(stats.pointbiserialr(col, totals).statistic))
    rs = []
    undefined = 0
    for i in range(items):
        for j in range(i + 1, items):
            if scores[:, i].std() == 0 or scores[:, j].std() == 0:
                undefined += 1
                continue
            rs.append(stats.pearsonr(scores[:, i], scores[:, j]).statistic)
    rs = np.array(rs)
    return {
        "scores": scores.tolist(), "totals": totals.tolist(), "difficulty": difficulty, "discrimination": discrimination,
        "inter_item": {"pairs": int(len(rs)), "undefined": undefined, "mean": fl(rs.mean()), "min": fl(rs.min()),
                       "q25": fl(np.percentile(rs, 25)), "median": fl(np.percentile(rs, 50)),
                       "q75": fl(np.percentile(rs, 75)), "max": fl(rs.max())},
    }


def python_resamples(n, count, seed):
    """The resample set lm-eval draws: random.Random(seed).choices(range(n), k=n), `count` times."""
    r = random.Random(seed)
    return [r.choices(range(n), k=n) for _ in range(count)]


def wins(means):
    runs = means.shape[1]
    return [[int((means[:, r] > means[:, s]).sum()) for s in range(runs)] for r in range(runs)]


def bootstrap_case(rng):
    runs, items, groups, count, seed = 4, 40, 9, 300, 20240601
    quality = np.array([0.45, 0.5, 0.52, 0.7])
    scores = (rng.random((runs, items)) < quality[:, None]).astype(float)
    cluster = np.sort(rng.integers(0, groups, items))
    _, cluster = np.unique(cluster, return_inverse=True)
    g = int(cluster.max()) + 1
    item_res = python_resamples(items, count, seed)
    cluster_res = python_resamples(g, count, seed + 1)
    idx = np.array(item_res)
    item_means = np.stack([scores[r][idx].mean(axis=1) for r in range(runs)], axis=1)
    sums = np.stack([np.bincount(cluster, weights=scores[r], minlength=g) for r in range(runs)])
    sizes = np.bincount(cluster, minlength=g).astype(float)
    cidx = np.array(cluster_res)
    cluster_means = np.stack([sums[r][cidx].sum(axis=1) / sizes[cidx].sum(axis=1) for r in range(runs)], axis=1)
    d = scores[3] - scores[0]
    d_means = d[idx].mean(axis=1)
    d_sums = np.bincount(cluster, weights=d, minlength=g)
    d_cluster_means = d_sums[cidx].sum(axis=1) / sizes[cidx].sum(axis=1)
    return {
        "scores": scores.tolist(), "cluster": cluster.tolist(), "seed": seed, "cluster_seed": seed + 1,
        "item_resamples": item_res, "cluster_resamples": cluster_res,
        "item_wins": wins(item_means), "cluster_wins": wins(cluster_means),
        # percentile interval of the mean paired difference (run 4 - run 1), numpy's default linear rule
        "diff_interval": [fl(np.percentile(d_means, 2.5)), fl(np.percentile(d_means, 97.5))],
        "diff_cluster_interval": [fl(np.percentile(d_cluster_means, 2.5)), fl(np.percentile(d_cluster_means, 97.5))],
    }


def main():
    rng = np.random.default_rng(8)
    golden = {
        "generator": "scripts/gen_paired_goldens.py",
        "versions": {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
                     "statsmodels": statsmodels.__version__},
        "mcnemar": mcnemar_cases(),
        "paired_t": paired_t_cases(rng),
        "clustered": clustered_cases(rng),
        "item_analysis": item_analysis_case(rng),
        "bootstrap": bootstrap_case(rng),
        "normal_quantiles": {"z975": fl(stats.norm.ppf(0.975)), "z80": fl(stats.norm.ppf(0.8))},
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(golden, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
