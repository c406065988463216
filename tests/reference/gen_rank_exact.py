#!/usr/bin/python3
"""Golden p-values for the exact rank-correlation tests (issue 33, tester finding F5),
generated with Debian's scipy 1.10.

Run from the repository root:  /usr/bin/python3 tests/reference/gen_rank_exact.py
Reads tests/reference/core_rank.json (gen_core.py's 400 random x, y rows, with and
without ties, n = 3..79) and adds fixed cases; writes tests/reference/core_rank_exact.json:
  rows[]: x, y, and
    kendall_auto   = scipy.stats.kendalltau(x, y).pvalue (method='auto': exact without
                     ties when n <= 33 or min(C, D) <= 1, else asymptotic),
    kendall_exact  = whether scipy 1.10's 'auto' rule picked 'exact' (its source, copied),
    spearman_perm  = (n <= 10 only) scipy.stats.permutation_test((rx,), rho vs ry,
                     permutation_type='pairings', n_resamples=inf).pvalue: every pairing,
  kendall_table[]: [n, D, scipy.stats._mstats_basic._kendall_p_exact(n, n0 - D)].
tests/stats/rank_test.cc matches them to 1e-12 (relative).
"""
import itertools
import json
import math
import os

import numpy as np
import scipy
from scipy import stats
from scipy.stats import _mstats_basic

OUT = os.path.dirname(os.path.abspath(__file__))


def pearson_rows(a, b):
    """Pearson correlation of the rows of a with b (vectorized statistic)."""
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean()
    return (a * b).sum(axis=-1) / np.sqrt((a * a).sum(axis=-1) * (b * b).sum())


def spearman_perm(x, y):
    rx = stats.rankdata(x)
    ry = stats.rankdata(y)
    res = stats.permutation_test((rx,), lambda a, axis: pearson_rows(a, ry), permutation_type="pairings",
                                 n_resamples=np.inf, vectorized=True, batch=200000)
    # the observed statistic is scipy's spearmanr rho
    assert abs(res.statistic - stats.spearmanr(x, y).statistic) < 1e-12
    return float(res.pvalue)


def scipy_auto_is_exact(x, y):
    n = len(x)
    ties = len(set(x)) < n or len(set(y)) < n
    dis = sum(1 for i, j in itertools.combinations(range(n), 2) if (x[i] - x[j]) * (y[i] - y[j]) < 0)
    tot = n * (n - 1) // 2
    return (not ties) and (n <= 33 or min(dis, tot - dis) <= 1)


def row(x, y):
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    r = {"x": x, "y": y, "kendall_auto": float(stats.kendalltau(x, y).pvalue),
         "kendall_exact": scipy_auto_is_exact(x, y)}
    if len(x) <= 10:
        r["spearman_perm"] = spearman_perm(x, y)
    return r


rows = [row(r["x"], r["y"]) for r in json.load(open(os.path.join(OUT, "core_rank.json")))["rows"]]
# Fixed cases: perfect rankings (n = 3, 5, 10, 30, 60, both directions), one discordant
# pair at n = 60 (exact by the min(C, D) <= 1 rule), two at n = 40 (asymptotic).
for n in (3, 5, 10, 30, 60):
    rows.append(row(range(n), range(n)))
    rows.append(row(range(n), range(n, 0, -1)))
swap1 = list(range(60)); swap1[10], swap1[11] = swap1[11], swap1[10]
rows.append(row(range(60), swap1))
swap2 = list(range(40)); swap2[3], swap2[4] = swap2[4], swap2[3]; swap2[20], swap2[21] = swap2[21], swap2[20]
rows.append(row(range(40), swap2))

table = []
for n in range(1, 41):
    n0 = n * (n - 1) // 2
    for d in sorted(set([0, 1, 2, 3, n0 // 4, n0 // 3, n0 // 2, (n0 + 1) // 2, n0 - 1, n0]) & set(range(n0 + 1))):
        table.append([n, d, float(_mstats_basic._kendall_p_exact(n, n0 - d))])

with open(os.path.join(OUT, "core_rank_exact.json"), "w") as f:
    json.dump({"generator": "tests/reference/gen_rank_exact.py", "scipy": scipy.__version__, "rows": rows,
               "kendall_table": table}, f, indent=0, allow_nan=False)
    f.write("\n")
print(len(rows), "rows,", len(table), "table entries")
