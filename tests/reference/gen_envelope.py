#!/usr/bin/python3
"""Golden vectors for src/metrics/envelope (seed 003 §4, App. F).

Run with Debian's python3 (numpy, scipy 1.10, statsmodels 0.13, pandas):
    /usr/bin/python3 tests/reference/gen_envelope.py
Writes tests/reference/envelope_grid.json, read by tests/metrics/envelope_test.cc.
Deterministic (no random numbers).

A hand-built grid of 3 models x (template t1,t2) x (fewshot 0,3,5) with known pairwise
signs, and the same grid with one cell removed (unbalanced). For each case:
- tau_R: mean of scipy.stats.kendalltau (tau-b) over every pair of configurations whose
  three scores are all present;
- the variance partition: statsmodels ols + anova_lm(typ=2) of
  score ~ C(model) + C(template) + C(fewshot) + the three two-way interactions; shares are
  SS_group / (sum of every row's sum_sq incl. Residual), omega^2 (Hays) per axis is
  (SS - df MSE) / (SST + MSE) with SST the corrected total sum of squares.
"""
import itertools
import json
import os
import warnings

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from scipy.stats import kendalltau
from statsmodels.stats.anova import anova_lm

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))

GRID = {  # config -> (A, B, C)
    "fewshot=0,template=t1": (0.80, 0.60, 0.40),
    "fewshot=3,template=t1": (0.70, 0.70, 0.50),
    "fewshot=5,template=t1": (0.75, 0.65, 0.55),
    "fewshot=0,template=t2": (0.50, 0.60, 0.30),
    "fewshot=3,template=t2": (0.45, 0.55, 0.65),
    "fewshot=5,template=t2": (0.60, 0.40, 0.50),
}
MODELS = ["A", "B", "C"]


def case(name, drop):
    rows = []
    for cfg, scores in GRID.items():
        ax = dict(p.split("=") for p in cfg.split(","))
        for m, s in zip(MODELS, scores):
            if (m, cfg) in drop:
                continue
            rows.append({"model": m, "config": cfg, "template": ax["template"], "fewshot": ax["fewshot"], "score": s})
    d = pd.DataFrame(rows)
    full = [c for c in GRID if all((m, c) not in drop for m in MODELS)]
    taus = []
    for c1, c2 in itertools.combinations(full, 2):
        taus.append(kendalltau(GRID[c1], GRID[c2]).correlation)
    fit = smf.ols("score ~ C(model) + C(template) + C(fewshot) + C(model):C(template) + C(model):C(fewshot)"
                  " + C(template):C(fewshot)", data=d).fit()
    t = anova_lm(fit, typ=2)
    denom = t["sum_sq"].sum()
    mse = t.loc["Residual", "sum_sq"] / t.loc["Residual", "df"]
    sst = float(((d["score"] - d["score"].mean()) ** 2).sum())
    ss = lambda term: float(t.loc[term, "sum_sq"])
    inter = ss("C(model):C(template)") + ss("C(model):C(fewshot)") + ss("C(template):C(fewshot)")
    omega = {a: (ss(f"C({a})") - t.loc[f"C({a})", "df"] * mse) / (sst + mse) for a in ["template", "fewshot"]}
    return {
        "name": name,
        "cells": rows,
        "tau_r": float(np.mean(taus)),
        "tau_pairs": len(taus),
        "shares": {"model": ss("C(model)") / denom,
                   "implementation": (ss("C(template)") + ss("C(fewshot)")) / denom,
                   "interaction": inter / denom,
                   "residual": ss("Residual") / denom},
        "rho": (ss("C(template)") + ss("C(fewshot)")) / ss("C(model)"),
        "omega_sq": omega,
        "df_resid": int(t.loc["Residual", "df"]),
    }


cases = [case("balanced", set()), case("one_cell_missing", {("C", "fewshot=5,template=t2")})]
with open(os.path.join(HERE, "envelope_grid.json"), "w") as f:
    json.dump({"generator": "tests/reference/gen_envelope.py", "cases": cases}, f, indent=1)
