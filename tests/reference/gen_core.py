#!/usr/bin/python3
"""Golden vectors for the statistics core (src/stats: proportion, paired, bootstrap
quantiles, multiplicity, rank), generated with Debian's scipy 1.10 and statsmodels 0.13.

Run from the repository root:  /usr/bin/python3 tests/reference/gen_core.py
Writes tests/reference/core_<name>.json; tests/stats/*_test.cc match them to 1e-9.
NaN is written as null. The seed is fixed, so re-running gives identical files.
Documented exceptions (the reference is not what noisefloor computes, on purpose):
  * mcnemar_chi2 with b == c: statsmodels squares |b - c| - 1 = -1 and reports
    p = P[chi2_1 >= 1 / (b + c)] < 1; noisefloor clamps |b - c| - 1 at 0 and gives p = 1
    (issue 3, "p = 1 when b = c"). Those rows carry "exception": true.
"""
import json
import os
import sys

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import ttost_paired

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261130)


def fnum(v):
    v = float(v)
    return None if np.isnan(v) else v


def write(name, rows):
    meta = {"generator": "tests/reference/gen_core.py", "scipy": scipy.__version__,
            "statsmodels": statsmodels.__version__, "rows": rows}
    with open(os.path.join(OUT, f"core_{name}.json"), "w") as f:
        json.dump(meta, f, indent=0, allow_nan=False)
        f.write("\n")
    print(f"core_{name}.json: {len(rows)} rows", file=sys.stderr)


def rand_counts(k):
    out = []
    for _ in range(k):
        n = int(rng.choice([1, 2, 5, 10, 30, 100, 1000, 5000]) * rng.integers(1, 4))
        x = int(rng.integers(0, n + 1))
        if rng.random() < 0.1:
            x = int(rng.choice([0, n]))
        out.append((x, n))
    return out


# Proportions: Wilson (clipped to [0, 1]) and Clopper-Pearson ("beta").
rows = []
for x, n in rand_counts(400):
    level = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
    wl, wh = proportion_confint(x, n, alpha=1 - level, method="wilson")
    cl, ch = proportion_confint(x, n, alpha=1 - level, method="beta")
    cl = 0.0 if x == 0 else cl
    ch = 1.0 if x == n else ch
    rows.append({"x": x, "n": n, "level": level, "wilson": [fnum(np.clip(wl, 0, 1)), fnum(np.clip(wh, 0, 1))],
                 "clopper_pearson": [fnum(cl), fnum(ch)]})
write("proportion", rows)

# Exact binomial test (scipy.stats.binomtest), three alternatives.
rows = []
for x, n in rand_counts(400):
    p0 = float(rng.choice([0.5, 0.5, 0.1, 0.25, 0.3, 0.75, 0.9, round(float(rng.uniform(0.01, 0.99)), 3)]))
    rows.append({"x": x, "n": n, "p0": p0,
                 "two_sided": stats.binomtest(x, n, p0).pvalue,
                 "less": stats.binomtest(x, n, p0, alternative="less").pvalue,
                 "greater": stats.binomtest(x, n, p0, alternative="greater").pvalue})
write("binom", rows)

# McNemar: exact (statsmodels mcnemar exact=True) and chi-square with correction.
rows = []
for _ in range(400):
    hi = int(rng.choice([3, 10, 40, 200]))
    b, c = int(rng.integers(0, hi)), int(rng.integers(0, hi))
    if rng.random() < 0.15:
        c = b
    table = [[5, b], [c, 5]]
    ex = mcnemar(table, exact=True).pvalue if b + c > 0 else 1.0
    row = {"b": b, "c": c, "exact": fnum(ex)}
    if b + c > 0:
        chi = mcnemar(table, exact=False, correction=True)
        chi0 = mcnemar(table, exact=False, correction=False)
        row.update({"chi2_cc": [fnum(chi.statistic), fnum(chi.pvalue)],
                    "chi2": [fnum(chi0.statistic), fnum(chi0.pvalue)], "exception": b == c})
    rows.append(row)
write("mcnemar", rows)

# TOST on paired 0/1 vectors (statsmodels ttost_paired).
rows = []
while len(rows) < 300:
    n = int(rng.choice([5, 20, 100, 400]))
    pa = rng.uniform(0.2, 0.95)
    a = (rng.random(n) < pa).astype(int)
    flip = rng.random(n) < rng.uniform(0.02, 0.3)
    b = np.where(flip, 1 - a, a)
    d = a - b
    if n < 2 or np.std(d) == 0:
        continue
    margin = float(rng.choice([0.02, 0.05, 0.1]))
    p, lo, up = ttost_paired(a.astype(float), b.astype(float), -margin, margin)
    rows.append({"a": a.tolist(), "b": b.tolist(), "margin": margin, "p_tost": float(p),
                 "p_lower": float(lo[1]), "p_upper": float(up[1])})
write("tost", rows)

# numpy.quantile (linear) for the percentile bootstrap.
rows = []
for _ in range(300):
    n = int(rng.integers(1, 60))
    v = np.round(rng.normal(size=n), 3) if rng.random() < 0.5 else rng.integers(0, 5, size=n).astype(float)
    q = float(rng.choice([0.0, 0.025, 0.05, 0.5, 0.95, 0.975, 1.0, float(rng.random())]))
    rows.append({"values": v.tolist(), "q": q, "quantile": float(np.quantile(v, q))})
write("quantile", rows)

# Multiplicity: BH and Holm on the non-NaN subset; NaN stays in place.
rows = []
for _ in range(400):
    m = int(rng.integers(1, 30))
    p = rng.random(m) ** rng.choice([1, 2, 4])
    if rng.random() < 0.3:
        p[rng.integers(0, m)] = 1.0
    if rng.random() < 0.3:
        p = np.round(p, 2)  # ties
    mask = rng.random(m) < 0.15
    pn = np.where(mask, np.nan, p)
    bh = np.full(m, np.nan)
    ho = np.full(m, np.nan)
    ok = ~np.isnan(pn)
    if ok.any():
        bh[ok] = multipletests(pn[ok], method="fdr_bh")[1]
        ho[ok] = multipletests(pn[ok], method="holm")[1]
    rows.append({"p": [fnum(v) for v in pn], "bh": [fnum(v) for v in bh], "holm": [fnum(v) for v in ho]})
write("multiplicity", rows)

# Rank correlation: Kendall tau-b (asymptotic p) and Spearman, with and without ties.
rows = []
while len(rows) < 400:
    n = int(rng.integers(3, 80))
    if rng.random() < 0.5:
        x = rng.integers(0, int(rng.integers(2, 8)), size=n).astype(float)
        y = rng.integers(0, int(rng.integers(2, 8)), size=n).astype(float)
    else:
        x = np.round(rng.normal(size=n), 4)
        y = np.round(0.5 * x + rng.normal(size=n), 4)
    if np.all(x == x[0]) or np.all(y == y[0]):
        continue
    kt = stats.kendalltau(x, y, method="asymptotic")
    sp = stats.spearmanr(x, y)
    rows.append({"x": x.tolist(), "y": y.tolist(), "kendall": [fnum(kt.statistic), fnum(kt.pvalue)],
                 "spearman": [fnum(sp.statistic), fnum(sp.pvalue)]})
write("rank", rows)
