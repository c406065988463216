#!/usr/bin/python3
"""Golden vectors for src/stats/cluster_interval (run with /usr/bin/python3).

ratio_se: the linearized standard error of a ratio of sums over clusters equals the
cluster-robust standard error of the intercept of WLS(num/den ~ 1, weights=den) with one
cluster per observation (statsmodels cov_type="cluster", whose small-sample factor is
G/(G-1) * (N-1)/(N-K) = G/(G-1) here).
studentized: [est - q(1-a/2) se, est - q(a/2) se] with numpy.quantile (type 7) of the pivots.
"""
import json
import os

import numpy as np
import statsmodels.api as sm

rng = np.random.default_rng(20261201)
ratio_se = []
for g in [2, 3, 6, 16, 33, 100]:
    for _ in range(4):
        den = rng.integers(1, 16, g).astype(float)
        num = rng.binomial(den.astype(int), rng.uniform(0.05, 0.6, g)).astype(float)
        y = num / den
        fit = sm.WLS(y, np.ones(g), weights=den).fit(cov_type="cluster", cov_kwds={"groups": np.arange(g)})
        ratio_se.append({"num": num.tolist(), "den": den.tolist(), "estimate": float(fit.params[0]),
                         "se": float(fit.bse[0])})
studentized = []
for n in [5, 50, 1000]:
    t = rng.standard_t(5, n)
    est, se = float(rng.uniform(0.05, 0.5)), float(rng.uniform(0.01, 0.1))
    for level in [0.9, 0.95]:
        a = 1 - level
        lo_q, hi_q = np.quantile(t, [a / 2, 1 - a / 2])
        studentized.append({"t": t.tolist(), "estimate": est, "se": se, "level": level,
                            "low": est - hi_q * se, "high": est - lo_q * se})
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stats_cluster_interval.json")
with open(out, "w") as f:
    json.dump({"generator": "tests/reference/gen_cluster_interval.py", "ratio_se": ratio_se,
               "studentized": studentized}, f)
