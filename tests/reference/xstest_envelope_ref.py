#!/usr/bin/python3
"""Independent reference for the envelope over the published XSTest v2 labels.

Run at test time by tests/cli/envelope_published_test.cc (never writes a copy of the data):
    /usr/bin/python3 tests/reference/xstest_envelope_ref.py XSTEST_DIR
Prints JSON: for config = scorer and config = (prompt type, scorer), the full-compliance
count and item count per (model, config), per model pair n_plus / n_minus / n_ties, the
number of reachable total orders (ties broken alphabetically) and tau_R (mean of
scipy.stats.kendalltau over configuration pairs). Reads the CSV files with pandas, not
with scripts/xstest-to-long, so the two paths are independent.
"""
import glob
import itertools
import json
import os
import sys

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

src = sys.argv[1]
frames = []
for p in sorted(glob.glob(os.path.join(src, "xstest_v2_completions_*_gpteval.csv"))):
    model = os.path.basename(p)[len("xstest_v2_completions_"):-len("_gpteval.csv")]
    g = pd.read_csv(p)
    s = pd.read_csv(p.replace("_gpteval.csv", "_streval.csv"))
    g = g[~g["type"].str.startswith("contrast_")]
    s = s[~s["type"].str.startswith("contrast_")]
    for scorer, d, col in (("human", g, "final_label"), ("gpt4", g, "gpt4_label"), ("strmatch", s, "strmatch_label")):
        frames.append(pd.DataFrame({"model": model, "type": d["type"].values, "scorer": scorer,
                                    "full": (d[col] == "1_full_compliance").astype(int).values}))
data = pd.concat(frames)
out = {}
for name, keys in (("scorer", ["scorer"]), ("type_scorer", ["type", "scorer"])):
    cells = data.groupby(["model"] + keys)["full"].agg(["sum", "count"]).reset_index()
    cells["config"] = cells.apply(lambda r: ",".join(f"{k}={r[k]}" for k in keys) if len(keys) > 1
                                  else f"scorer={r['scorer']}", axis=1)
    score = cells.pivot(index="config", columns="model", values="sum") / cells.pivot(index="config", columns="model",
                                                                                       values="count")
    models = sorted(score.columns)
    pairs = []
    for a, b in itertools.combinations(models, 2):
        d = score[a] - score[b]
        pairs.append({"a": a, "b": b, "n_plus": int((d > 0).sum()), "n_minus": int((d < 0).sum()),
                      "n_ties": int((d == 0).sum())})
    orders = set()
    for cfg, row in score.iterrows():
        orders.add(" > ".join(sorted(models, key=lambda m: (-row[m], m))))
    taus = [kendalltau(score.loc[c1, models].values, score.loc[c2, models].values).correlation
            for c1, c2 in itertools.combinations(score.index, 2)]
    out[name] = {"cells": [{"model": r["model"], "config": r["config"], "full": int(r["sum"]), "n": int(r["count"])}
                           for _, r in cells.iterrows()],
                 "pairs": pairs, "reachable": len(orders), "tau_r": float(np.mean(taus)), "n_configs": len(score)}
json.dump(out, sys.stdout)
