#!/usr/bin/env python3
"""Golden numbers for tests/stats from independent implementations (mpmath, scipy, statsmodels).

Usage: python3 -m venv .venv-stats && .venv-stats/bin/pip install scipy statsmodels mpmath
       .venv-stats/bin/python scripts/gen_stats_goldens.py   (writes tests/stats/goldens/intervals.json)

Floats are written with repr (shortest round trip), so the C++ tests read exactly scipy's doubles.
"""
import json
import os
import sys

import mpmath as mp
import numpy as np
import scipy
import scipy.special
import scipy.stats
import statsmodels

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "stats", "goldens", "intervals.json")

PROBS = [1e-300, 1e-100, 1e-20, 1e-10, 1e-6, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.25, 0.3, 0.4,
         0.45, 0.49, 0.4999, 0.5, 0.5001, 0.6, 0.75, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 1 - 1e-6,
         1 - 1e-10]
DFS = [0.5, 1, 1.5, 2, 3, 4, 5, 7, 9, 10, 19, 29, 30, 49, 99, 120, 399, 999, 9999, 1e5]
XS = [-1e5, -100.0, -40.0, -37.5, -20.0, -10.0, -8.0, -5.0, -3.0, -2.0, -1.959963984540054, -1.0, -0.5,
      -0.1, -1e-5, 0.0, 1e-8, 0.3, 1.0, 1.5, 2.0, 2.5, 3.0, 6.0, 9.0, 30.0, 1e3]


def num(x):
    """JSON has no infinities: they are written as the strings "inf" / "-inf"."""
    x = float(x)
    return x if np.isfinite(x) else ("inf" if x > 0 else "-inf")


# The distribution functions are computed with mpmath at 40 digits, not with scipy: scipy's
# own values are off by far more than 1e-12 in places (scipy 1.17: t.cdf(1e-8, 1) = 0.500000004743
# instead of 0.500000003183, t.ppf(0.4999, 4) wrong in the 9th digit, t.ppf(1e-300, 3) = -inf).
# scipy is still compared below, loosely, as a check on this script itself.
mp.mp.dps = 40


def mp_t_cdf(x, df):
    x, df = mp.mpf(x), mp.mpf(df)
    if mp.isinf(df):
        return mp.ncdf(x)
    tail = mp.betainc(df / 2, mp.mpf(1) / 2, 0, df / (df + x * x), regularized=True) / 2
    return tail if x < 0 else 1 - tail


def mp_lower_quantile(log_cdf, p, guess):
    """The x < 0 with log_cdf(x) = log p, by Newton on s = log(-x); checked by its residual."""
    p = mp.mpf(p)
    s = mp.findroot(lambda s: log_cdf(-mp.exp(s)) - mp.log(p), mp.log(-guess))
    x = -mp.exp(s)
    assert abs(log_cdf(x) - mp.log(p)) < mp.mpf(10) ** -30, (p, x)
    return x


def mp_quantile(cdf, p, guess_fn):
    if p == 0.5:
        return mp.mpf(0)
    if p < 0.5:
        return mp_lower_quantile(lambda x: mp.log(cdf(x)), p, guess_fn(p))
    return -mp_lower_quantile(lambda x: mp.log(cdf(x)), 1 - mp.mpf(p), guess_fn(1 - p))


def t_guess(p, df):
    g = float(scipy.stats.t.ppf(p, df))
    if not np.isfinite(g) or g >= 0:  # scipy fails in far tails: start from the power-law tail
        g = -float(p * df * float(mp.beta(df / 2, 0.5)) / df ** (df / 2)) ** (-1 / df)
    return g


def check_close(ours, scipy_value, what):
    if np.isfinite(scipy_value) and abs(scipy_value) > 0:
        assert abs(ours - scipy_value) <= 1e-6 * abs(scipy_value) or abs(ours - scipy_value) < 1e-300, \
            (what, ours, scipy_value)


def distributions():
    out = {"normal_cdf": [], "normal_quantile": [], "t_cdf": [], "t_quantile": [], "incomplete_beta": []}
    for x in XS:
        out["normal_cdf"].append([x, num(mp.ncdf(x))])
    for p in PROBS:
        q = mp_quantile(mp.ncdf, p, lambda p: float(scipy.stats.norm.ppf(p)))
        check_close(float(q), scipy.stats.norm.ppf(p), ("norm.ppf", p))
        out["normal_quantile"].append([p, num(q)])
    for df in DFS:
        print("df", df, file=sys.stderr, flush=True)
        for x in XS:
            if abs(x) >= 40 and df >= 999:  # far below the smallest double; mpmath is slow to find 0
                continue
            v = mp_t_cdf(x, df)
            out["t_cdf"].append([x, df, num(v)])
        for p in PROBS:
            q = mp_quantile(lambda x: mp_t_cdf(x, df), p, lambda p: t_guess(p, df))
            out["t_quantile"].append([p, df, num(q)])
    for a, b in [(0.5, 0.5), (0.5, 10.0), (2.0, 3.0), (10.0, 0.5), (50.0, 50.0), (1e3, 0.5), (0.1, 7.0),
                 (500.0, 300.0)]:
        for x in [1e-10, 0.001, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999, 1 - 1e-6, 1 - 1e-9]:
            v = mp.betainc(a, b, 0, x, regularized=True)
            check_close(float(v), scipy.special.betainc(a, b, x), ("betainc", a, b, x))
            out["incomplete_beta"].append([x, a, b, num(v)])
    return out


def intervals():
    """Wilson (statsmodels), t (scipy), CR1 clustered SE (statsmodels OLS), MDE, percentiles (numpy)."""
    from statsmodels.regression.linear_model import OLS
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_confint
    from scipy.optimize import brentq

    out = {"wilson": [], "clopper_pearson": [], "t_interval": [], "clustered": [], "mde": [], "percentile": []}
    for count, n in [(0, 10), (1, 10), (5, 10), (10, 10), (37, 100), (503, 1000), (1, 1), (2, 40), (98, 99),
                     (6032, 10042), (0, 1), (3, 7)]:
        for conf in (0.95, 0.9):
            lo, hi = proportion_confint(count, n, alpha=1 - conf, method="wilson")
            out["wilson"].append([count, n, conf, float(lo), float(hi)])
            lo, hi = proportion_confint(count, n, alpha=1 - conf, method="beta")
            out["clopper_pearson"].append([count, n, conf, float(lo), float(hi)])
    for mean, se, df in [(0.5, 0.1, 9), (0.123, 0.0042, 999), (12.5, 3.25, 1), (0.7, 0.02, 2.5), (0.3, 0.01, 99999)]:
        for conf in (0.95, 0.99):
            lo, hi = scipy.stats.t.interval(conf, df, loc=mean, scale=se)
            out["t_interval"].append([mean, se, df, conf, float(lo), float(hi)])
    rng = np.random.default_rng(20261122)
    cases = []
    sizes = rng.integers(1, 12, size=30)
    groups = [f"passage-{g}" for g, k in enumerate(sizes) for _ in range(k)]
    cases.append(("binary_uneven", (rng.random(len(groups)) < 0.6).astype(float), groups))
    cases.append(("continuous", rng.normal(0.4, 1.3, size=len(groups)), groups))
    cases.append(("own_cluster", rng.normal(size=25), [str(i) for i in range(25)]))
    cases.append(("two_clusters", (rng.random(15) < 0.5).astype(float), ["a"] * 6 + ["b"] * 9))
    shuffled = list(groups)
    rng.shuffle(shuffled)
    cases.append(("interleaved", (rng.random(len(shuffled)) < 0.3).astype(float), shuffled))
    for name, xs, g in cases:
        codes = {k: i for i, k in enumerate(dict.fromkeys(g))}
        fit = OLS(xs, np.ones(len(xs))).fit(cov_type="cluster", cov_kwds={"groups": np.array([codes[k] for k in g])})
        out["clustered"].append({"name": name, "xs": [float(x) for x in xs], "clusters": list(g),
                                 "stderr": float(fit.bse[0]), "n_clusters": len(codes)})
    for n, sd in [(100, 0.5), (1000, 0.45), (40, 1.0), (14042, 0.4), (10, 2.0)]:
        for alpha, power in [(0.05, 0.8), (0.01, 0.9)]:
            se = sd * np.sqrt(2 / n)
            crit = scipy.stats.norm.isf(alpha / 2)
            f = lambda d: scipy.stats.norm.cdf(d / se - crit) + scipy.stats.norm.cdf(-d / se - crit) - power
            mde = brentq(f, 0, 20 * se, xtol=1e-300, rtol=1e-15)
            d_sm = NormalIndPower().solve_power(effect_size=None, nobs1=n, alpha=alpha, power=power, ratio=1)
            # statsmodels solves the same equation only to about 1e-5 (its solver's tolerance), so it
            # checks this script's equation, while the golden is the tight brentq root.
            assert abs(d_sm * sd - mde) <= 1e-4 * mde, (n, sd, d_sm * sd, mde)
            out["mde"].append([n, sd, alpha, power, float(mde)])
    for m in (1, 2, 37, 1000):
        xs = rng.normal(size=m)
        for conf in (0.95, 0.9):
            lo, hi = np.percentile(xs, [100 * (0.5 - conf / 2), 100 * (0.5 + conf / 2)])
            out["percentile"].append({"xs": [float(x) for x in xs], "confidence": conf, "low": float(lo),
                                      "high": float(hi)})
    return out


def main():
    data = {"generator": "scripts/gen_stats_goldens.py",
            "versions": {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
                         "statsmodels": statsmodels.__version__, "mpmath": mp.__version__}}
    data.update(distributions())
    data.update(intervals())
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, allow_nan=False)
        f.write("\n")


if __name__ == "__main__":
    main()
