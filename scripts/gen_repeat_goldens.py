#!/usr/bin/env python3
"""Golden numbers for the between/within-question variance of sampled answers (`repeats`).

Writes tests/stats/goldens/repeats.json: score matrices x[i][k] (question i, sampled answer k) and
what two independent computations give for them:
  - numpy: the sample variance (ddof=1) of the question means, the mean of the questions' own
    sample variances (ddof=1), between = var_of_means - within/K, se = sqrt(var_of_means/n);
  - statsmodels: a one-way random-effects model fitted by REML (MixedLM, y ~ 1 with a random
    intercept per question): its random-intercept variance (cov_re), residual variance (scale) and
    the intercept's standard error (bse). For a balanced design with a non-negative ANOVA estimate
    these equal between, within and se; the fit is numerical, so they agree to its tolerance.

Run with a venv holding numpy and statsmodels (default .venv-compare in the repo):
  python3 -m venv .venv-compare
  .venv-compare/bin/pip install numpy statsmodels
  .venv-compare/bin/python scripts/gen_repeat_goldens.py
"""
import json
import os
import warnings

import numpy as np
import statsmodels
import statsmodels.formula.api as smf

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "stats", "goldens", "repeats.json")


def case(name, x):
    x = np.asarray(x, dtype=float)
    n, k = x.shape
    means = x.mean(axis=1)
    var_of_means = means.var(ddof=1)
    within = x.var(axis=1, ddof=1).mean()
    out = {"name": name, "x": x.tolist(), "n": n, "k": k, "mean": float(means.mean()),
           "var_of_means": float(var_of_means), "within": float(within),
           "between": float(var_of_means - within / k), "se": float(np.sqrt(var_of_means / n))}
    if out["between"] > 0:
        y = x.reshape(-1)
        q = np.repeat(np.arange(n), k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = smf.mixedlm("y ~ 1", {"y": y, "q": q}, groups=q).fit(reml=True)
        out["mixedlm"] = {"between": float(fit.cov_re.iloc[0, 0]), "within": float(fit.scale),
                          "se": float(fit.bse_fe.iloc[0])}
    return out


def main():
    rng = np.random.default_rng(20241101)
    cases = []
    # 0/1 scores: per-question probability from a logistic model, K answers sampled per question.
    for n, k, sd in [(40, 4, 1.5), (60, 8, 0.8), (25, 2, 2.5)]:
        p = 1 / (1 + np.exp(-(0.2 + sd * rng.standard_normal(n))))
        cases.append(case(f"bernoulli_n{n}_k{k}", (rng.random((n, k)) < p[:, None]).astype(float)))
    # Continuous scores (e.g. a similarity metric): normal question effects plus normal noise.
    x = 0.5 + 0.2 * rng.standard_normal((30, 1)) + 0.1 * rng.standard_normal((30, 5))
    cases.append(case("normal_n30_k5", x))
    # Almost no question effect: the unbiased between estimate comes out negative.
    x = (rng.random((20, 3)) < 0.5).astype(float)
    c = case("pure_noise_n20_k3", x)
    cases.append(c)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"generator": "scripts/gen_repeat_goldens.py", "numpy": np.__version__,
                   "statsmodels": statsmodels.__version__, "cases": cases}, f, indent=1)
        f.write("\n")
    for c in cases:
        print(c["name"], "between", c["between"], "mixedlm" in c and c["mixedlm"])


if __name__ == "__main__":
    main()
