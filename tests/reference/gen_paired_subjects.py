#!/usr/bin/python3
"""Golden vectors for the paired_subjects analysis (src/metrics/paired_subjects.h),
computed with numpy, statsmodels 0.13 (mcnemar exact, multipletests holm).

Run from the repository root:  /usr/bin/python3 tests/reference/gen_paired_subjects.py
Writes tests/reference/paired_subjects.json; tests/metrics/paired_subjects_test.cc feeds
the same rows to compute_paired_subjects and matches every number to 1e-12.
Per case: subjects x items x replicates of 0/1 outcomes (some items missing for some
subjects, even replicate counts so majorities can tie). The reference computes, per
subject, the mean over all draws; per pair, on the items both answered, each item's
strict majority (a tie is undetermined), b = #(a 1, b 0), c = #(a 0, b 1), the exact
McNemar p (statsmodels) and Holm over every pair of the case.
"""
import itertools
import json
import os

import numpy as np
import statsmodels
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

OUT = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261201)


def majority(v):
    ones = sum(v)
    zeros = len(v) - ones
    return 1 if ones > zeros else 0 if zeros > ones else None


cases = []
# The last case gives each subject its own accuracy level, so some pairs differ clearly.
for case, (n_subjects, n_items, reps) in enumerate([(2, 12, 1), (3, 20, 3), (3, 25, 4), (4, 30, 5), (3, 40, 3)]):
    rows = []
    data = {}
    for s in range(n_subjects):
        subject = f"s{s}"
        for i in range(n_items):
            if rng.random() < 0.1:  # this subject did not answer this item
                continue
            p = [0.9, 0.2, 0.55][s] if case == 4 else rng.uniform(0.05, 0.95)
            r_here = reps if rng.random() > 0.2 else max(1, reps - 1)
            vals = [int(rng.random() < p) for _ in range(r_here)]
            data.setdefault(subject, {})[f"i{i:02d}"] = vals
            for r, v in enumerate(vals):
                rows.append({"subject": subject, "item": f"i{i:02d}", "replicate": r, "value": v})
    subjects = []
    for s in sorted(data):
        allv = [v for vals in data[s].values() for v in vals]
        subjects.append({"subject": s, "draws": len(allv), "items": len(data[s]), "mean": float(np.mean(allv)),
                         "successes": int(sum(allv))})
    pairs = []
    for a, b in itertools.combinations(sorted(data), 2):
        common = sorted(set(data[a]) & set(data[b]))
        va = [v for i in common for v in data[a][i]]
        vb = [v for i in common for v in data[b][i]]
        bc = cc = und = 0
        for i in common:
            ma, mb = majority(data[a][i]), majority(data[b][i])
            if ma is None or mb is None:
                und += 1
            elif ma == 1 and mb == 0:
                bc += 1
            elif ma == 0 and mb == 1:
                cc += 1
        p = 1.0 if bc + cc == 0 else float(mcnemar([[0, bc], [cc, 0]], exact=True).pvalue)
        pairs.append({"a": a, "b": b, "items": len(common), "mean_a": float(np.mean(va)), "mean_b": float(np.mean(vb)),
                      "b_count": bc, "c_count": cc, "undetermined": und, "p_value": p})
    holm = multipletests([p["p_value"] for p in pairs], method="holm")[1]
    for p, q in zip(pairs, holm):
        p["p_holm"] = float(q)
    cases.append({"case": case, "rows": rows, "subjects": subjects, "pairs": pairs})

with open(os.path.join(OUT, "paired_subjects.json"), "w") as f:
    json.dump({"generator": "tests/reference/gen_paired_subjects.py", "statsmodels": statsmodels.__version__,
               "cases": cases}, f, indent=0)
    f.write("\n")
