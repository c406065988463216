#!/usr/bin/python3
"""Golden vectors for src/stats/{agreement,linear_model,logistic}.

Run with Debian's python3 (numpy, scipy 1.10, statsmodels 0.13, pandas):
    /usr/bin/python3 tests/reference/gen_models.py
Writes tests/reference/models_{fleiss,pairs,krippendorff,anova,logit}.json, read by
tests/stats/{agreement,linear_model,logistic}_golden_test.cc. Seeded: re-running gives
the same files.

References and where they are our own (documented, because statsmodels lacks them):
- Fleiss kappa, equal raters per item: statsmodels.stats.inter_rater.fleiss_kappa.
- Fleiss kappa, unequal raters per item: statsmodels requires equal counts, so the
  reference is `fleiss_unequal` below: the convention of src/stats/agreement.h (P_i =
  sum n_ij(n_ij-1)/(n_i(n_i-1)), items with n_i < 2 dropped, p_j over their ratings).
- Cohen kappa: statsmodels.stats.inter_rater.cohens_kappa on the K x K table.
- Scott's pi and raw agreement: numpy formulas below. Gwet AC1: `gwet_ac1` below
  (Gwet 2008), checked against the published 90/5/5/0 -> 0.889503 example.
- Krippendorff alpha (nominal): `kripp_alpha` below, enumerating every ordered pair of
  values within a unit (Krippendorff 2011), not the coincidence-count shortcut used in C++.
- ANOVA: statsmodels.formula.api.ols + statsmodels.stats.anova.anova_lm(typ=2).
- Logistic: statsmodels.discrete.discrete_model.Logit, Newton to tol 1e-13.
"""
import json
import os
import warnings

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261130)


def dump(name, cases):
    with open(os.path.join(HERE, name), "w") as f:
        json.dump({"generator": "tests/reference/gen_models.py", "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    print(name, len(cases))


def fleiss_unequal(counts):
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=1)
    keep = n >= 2
    c, n = counts[keep], n[keep]
    p_i = (c * (c - 1)).sum(axis=1) / (n * (n - 1))
    p_j = c.sum(axis=0) / c.sum()
    pe = (p_j ** 2).sum()
    return (p_i.mean() - pe) / (1 - pe)


def gen_fleiss():
    cases = []
    while len(cases) < 400:
        items = int(rng.integers(3, 40))
        k = int(rng.integers(2, 6))
        equal = len(cases) < 300
        probs = rng.dirichlet(np.ones(k) * rng.uniform(0.3, 3))
        counts = []
        for _ in range(items):
            m = int(rng.integers(2, 7)) if not equal else None
            counts.append(rng.multinomial(m if m else 0, probs).tolist())
        if equal:
            raters = int(rng.integers(2, 7))
            counts = [rng.multinomial(raters, rng.dirichlet(probs * 5 + 0.1)).tolist() for _ in range(items)]
        else:
            counts = [rng.multinomial(int(rng.integers(0, 7)), rng.dirichlet(probs * 5 + 0.1)).tolist()
                      for _ in range(items)]
        arr = np.array(counts)
        tot = arr[arr.sum(axis=1) >= 2].sum(axis=0)
        if (tot > 0).sum() < 2:
            continue
        kappa = float(fleiss_kappa(arr, method="fleiss")) if equal else float(fleiss_unequal(arr))
        cases.append({"k": k, "counts": counts, "equal": equal, "kappa": kappa})
    dump("models_fleiss.json", cases)


def gwet_ac1(a, b, k):
    po = np.mean(a == b)
    pi = np.array([(np.mean(a == j) + np.mean(b == j)) / 2 for j in range(k)])
    pe = (pi * (1 - pi)).sum() / (k - 1)
    return (po - pe) / (1 - pe)


def gen_pairs():
    cases = []
    while len(cases) < 300:
        n = int(rng.integers(5, 80))
        k = int(rng.integers(2, 6))
        a = rng.integers(0, k, n)
        agree = rng.uniform(0, 1)
        b = np.where(rng.uniform(size=n) < agree, a, rng.integers(0, k, n))
        miss_a = rng.uniform(size=n) < 0.1
        ok = ~miss_a
        aa, bb = a[ok], b[ok]
        kk = int(max(aa.max(), bb.max()) + 1)
        table = np.zeros((kk, kk))
        for x, y in zip(aa, bb):
            table[x, y] += 1
        pa, pb = table.sum(1) / table.sum(), table.sum(0) / table.sum()
        if np.isclose((pa * pb).sum(), 1) or len(aa) == 0:
            continue
        pi = (pa + pb) / 2
        po = np.trace(table) / table.sum()
        scott = (po - (pi ** 2).sum()) / (1 - (pi ** 2).sum())
        cases.append({
            "a": [None if m else int(v) for v, m in zip(a, miss_a)],
            "b": [int(v) for v in b],
            "k": k,
            "cohen": float(cohens_kappa(table).kappa),
            "scott": float(scott),
            "gwet": float(gwet_ac1(aa, bb, k)),
            "raw": float(po),
        })
    dump("models_pairs.json", cases)


def kripp_alpha(units):
    vals = sorted({v for u in units for v in u if v is not None})
    o = {(c, d): 0.0 for c in vals for d in vals}
    for u in units:
        vs = [v for v in u if v is not None]
        m = len(vs)
        if m < 2:
            continue
        for i in range(m):
            for j in range(m):
                if i != j:
                    o[(vs[i], vs[j])] += 1.0 / (m - 1)
    nc = {c: sum(o[(c, d)] for d in vals) for c in vals}
    n = sum(nc.values())
    do = sum(o[(c, d)] for c in vals for d in vals if c != d)
    de = sum(nc[c] * nc[d] for c in vals for d in vals if c != d)
    return 1 - (n - 1) * do / de


def gen_kripp():
    cases = []
    while len(cases) < 300:
        items = int(rng.integers(3, 30))
        raters = int(rng.integers(2, 6))
        k = int(rng.integers(2, 5))
        truth = rng.integers(0, k, items)
        rel = rng.uniform(0, 1)
        table = []
        for i in range(items):
            row = []
            for _ in range(raters):
                if rng.uniform() < 0.2:
                    row.append(None)
                else:
                    row.append(int(truth[i] if rng.uniform() < rel else rng.integers(0, k)))
            table.append(row)
        pair_vals = {v for u in table if sum(x is not None for x in u) >= 2 for v in u if v is not None}
        if len(pair_vals) < 2:
            continue
        cases.append({"ratings": table, "alpha": float(kripp_alpha(table))})
    dump("models_krippendorff.json", cases)


def gen_anova():
    cases = []
    while len(cases) < 300:
        la, lb = int(rng.integers(2, 5)), int(rng.integers(2, 4))
        interact = bool(rng.integers(0, 2))
        numeric = bool(rng.integers(0, 3) == 0)
        rows = []
        for i in range(la):
            for j in range(lb):
                for _ in range(int(rng.integers(1, 5))):
                    rows.append((f"a{i}", f"b{j}"))
        n = len(rows)
        d = pd.DataFrame(rows, columns=["a", "b"])
        ea = rng.normal(0, 1, la)
        eb = rng.normal(0, 1, lb)
        d["x"] = rng.normal(0, 1, n)
        d["y"] = [ea[int(r[0][1:])] + eb[int(r[1][1:])] for r in rows] + rng.normal(0, 1, n) + (0.5 * d["x"] if numeric else 0)
        formula = "y ~ C(a) + C(b)" + (" + x" if numeric else "") + (" + C(a):C(b)" if interact else "")
        fit = smf.ols(formula, d).fit()
        if fit.df_resid < 1:
            continue
        t = anova_lm(fit, typ=2)
        sst = float(((d.y - d.y.mean()) ** 2).sum())
        terms = []
        for name, r in t.iterrows():
            if name == "Residual":
                continue
            terms.append({"term": name.replace("C(a)", "a").replace("C(b)", "b"), "sum_sq": float(r.sum_sq),
                          "df": int(round(r.df)), "f": float(r.F), "p": float(r["PR(>F)"])})
        cases.append({"a": d.a.tolist(), "b": d.b.tolist(), "x": d.x.tolist() if numeric else None,
                      "y": d.y.tolist(), "interaction": interact, "terms": terms, "rss": float(fit.ssr),
                      "df_resid": int(fit.df_resid), "ss_total": sst})
    dump("models_anova.json", cases)


def gen_logit():
    cases = []
    while len(cases) < 200:
        la, lb = int(rng.integers(2, 5)), int(rng.integers(2, 5))
        n = int(rng.integers(60, 200))
        numeric = bool(rng.integers(0, 2))
        a = rng.integers(0, la, n)
        b = rng.integers(0, lb, n)
        x = rng.normal(0, 1, n)
        eta = rng.normal(0, 0.7, la)[a] + rng.normal(0, 0.7, lb)[b] + (0.8 * x if numeric else 0)
        y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
        d = pd.DataFrame({"a": [f"a{v}" for v in a], "b": [f"b{v}" for v in b], "x": x, "y": y})
        if any(g.y.nunique() < 2 for _, g in d.groupby("a")) or any(g.y.nunique() < 2 for _, g in d.groupby("b")):
            continue
        if d.a.nunique() < la or d.b.nunique() < lb:
            continue
        formula = "y ~ C(a) + C(b)" + (" + x" if numeric else "")
        try:
            res = smf.logit(formula, d).fit(method="newton", tol=1e-13, maxiter=200, disp=0)
        except Exception:  # noqa: BLE001 - perfect separation raised by statsmodels
            continue
        if not res.mle_retvals["converged"]:
            continue
        names = [s.replace("C(a)", "a").replace("C(b)", "b") for s in res.params.index]
        cases.append({"a": d.a.tolist(), "b": d.b.tolist(), "x": x.tolist() if numeric else None,
                      "y": y.tolist(), "names": names, "coef": res.params.tolist(), "se": res.bse.tolist(),
                      "z": res.tvalues.tolist(), "p": res.pvalues.tolist(), "llf": float(res.llf),
                      "llnull": float(res.llnull)})
    dump("models_logit.json", cases)


if __name__ == "__main__":
    gen_fleiss()
    gen_pairs()
    gen_kripp()
    gen_anova()
    gen_logit()
