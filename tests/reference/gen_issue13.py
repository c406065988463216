#!/usr/bin/python3
"""Golden vectors for issue 13: weighted kappa on a declared scale, McNemar mid-p,
Fleiss kappa and Gwet AC1 over several raters on a declared category set.

Run with Debian's python3 (numpy, scipy 1.10, statsmodels 0.13):
    /usr/bin/python3 tests/reference/gen_issue13.py
Writes tests/reference/issue13_scales.json, read by tests/stats/agreement_scales_golden_test.cc
and tests/stats/paired_mid_p_test.cc. Seeded: re-running gives the same file.

References:
- Weighted kappa: statsmodels.stats.inter_rater.cohens_kappa(table, weights=scale, wt=...)
  on the FULL K x K table of the declared scale (unused values included), weights by
  scale value.
- McNemar mid-p: scipy.stats.binom, min(1, 2 * (cdf(m) - pmf(m) / 2)), m = min(b, c).
- Fleiss kappa: statsmodels.stats.inter_rater.fleiss_kappa on the items x q count table
  (declared categories nobody chose are zero columns).
- Gwet AC1 (multi-rater, declared q): numpy formula of Gwet (2014) ch. 4 below
  (statsmodels has no AC1); checked against the issue's 0.713376.
"""
import json
import warnings
import os

import numpy as np
from scipy.stats import binom
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(13)


def gwet_multi(counts, q):
    counts = np.asarray(counts, dtype=float)
    r = counts.sum(1)
    two = r >= 2
    pa = (counts[two] * (counts[two] - 1)).sum(1) / (r[two] * (r[two] - 1))
    one = r >= 1
    pi = (counts[one] / r[one][:, None]).mean(0)
    pe = (pi * (1 - pi)).sum() / (q - 1)
    return (pa.mean() - pe) / (1 - pe)


def weighted_case(r1, r2, scale):
    k = len(scale)
    t = np.zeros((k, k))
    for a, b in zip(r1, r2):
        t[a, b] += 1
    out = {"a": [int(v) for v in r1], "b": [int(v) for v in r2], "scale": [float(v) for v in scale]}
    for wt in ("linear", "quadratic"):
        out[wt] = float(cohens_kappa(t, weights=np.asarray(scale, float), wt=wt).kappa)
    out["none"] = float(cohens_kappa(t).kappa)
    return out


weighted = []
# The issue's case: judge scores 1-5, nobody used 3.
run1 = [1, 2, 2, 4, 5, 5, 4, 2, 1, 5, 4, 2]
run2 = [1, 2, 4, 4, 5, 4, 5, 2, 2, 5, 4, 1]
weighted.append(weighted_case([v - 1 for v in run1], [v - 1 for v in run2], [1, 2, 3, 4, 5]))
while len(weighted) < 120:
    k = int(rng.integers(2, 8))
    if rng.random() < 0.5:
        scale = list(range(1, k + 1))
    else:
        scale = sorted(set(np.round(rng.uniform(0, 10, k), 2).tolist()))
        k = len(scale)
        if k < 2:
            continue
    n = int(rng.integers(5, 60))
    used = rng.choice(k, size=max(1, int(rng.integers(1, k + 1))), replace=False)
    r1 = rng.choice(used, n)
    r2 = np.where(rng.random(n) < 0.6, r1, rng.choice(used, n))
    t_case = weighted_case(r1, r2, scale)
    if not all(np.isfinite(t_case[w]) for w in ("linear", "quadratic", "none")):
        continue
    weighted.append(t_case)

mid_p = []
for b, c in [(3, 11), (5, 5), (0, 0), (0, 4), (1, 1), (2, 9), (10, 30), (40, 41), (0, 25), (100, 130)]:
    m, n = min(b, c), b + c
    p = 1.0 if n == 0 else min(1.0, 2 * (binom.cdf(m, n, 0.5) - 0.5 * binom.pmf(m, n, 0.5)))
    mid_p.append({"b": b, "c": c, "mid_p": float(p)})

multi = []
issue = [[5, 0, 0, 0], [4, 1, 0, 0], [0, 5, 0, 0], [0, 4, 1, 0], [1, 0, 4, 0], [0, 0, 5, 0], [5, 0, 0, 0],
         [3, 2, 0, 0]]
multi.append({"counts": issue, "q": 4, "fleiss": float(fleiss_kappa(np.array(issue))),
              "ac1": float(gwet_multi(issue, 4))})
while len(multi) < 100:
    q = int(rng.integers(2, 7))
    raters = int(rng.integers(2, 8))
    items = int(rng.integers(3, 40))
    used = int(rng.integers(1, q + 1))
    probs = rng.dirichlet(np.ones(used))
    counts = np.zeros((items, q), dtype=int)
    for i in range(items):
        counts[i, :used] = rng.multinomial(raters, probs)
    fk = float(fleiss_kappa(counts))
    ac = float(gwet_multi(counts, q))
    if not (np.isfinite(fk) and np.isfinite(ac)):
        continue
    multi.append({"counts": counts.tolist(), "q": q, "fleiss": fk, "ac1": ac})

with open(os.path.join(HERE, "issue13_scales.json"), "w") as f:
    json.dump({"generator": "tests/reference/gen_issue13.py", "weighted": weighted, "mid_p": mid_p, "multi": multi}, f,
              separators=(",", ":"))
