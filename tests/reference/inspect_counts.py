#!/usr/bin/python3
"""A direct count of Inspect AI .eval logs, independent of noisefloor's reader: opens each
zip with zipfile, reads samples/*.json with json, maps C/I/P/N to 1/0/0.5/0, and prints one
JSON object per model: draws, successes, accuracy over all draws, the floor's discordant
replicate pairs and comparisons (per sample: C(n,2) minus the agreeing pairs), per-sample
strict majorities, and for every two models b, c and the exact two-sided McNemar p on the
samples' majorities (binomial, math.comb). Used at test time by tests/cli/import_inspect_test.cc:

    python3 tests/reference/inspect_counts.py LOG.eval...
"""
import itertools
import json
import math
import sys
import zipfile

VALUE = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
models = {}
for path in sys.argv[1:]:
    with zipfile.ZipFile(path) as z:
        header = json.loads(z.read("header.json"))
        model = header["eval"]["model"]
        per_item = models.setdefault(model, {})
        for name in z.namelist():
            if not (name.startswith("samples/") and name.endswith(".json")):
                continue
            s = json.loads(z.read(name))
            (scorer, score), = s["scores"].items()
            per_item.setdefault(str(s["id"]), {})[s["epoch"]] = VALUE[score["value"]]


def majority(vals):
    ones = sum(1 for v in vals if v == 1.0)
    zeros = len(vals) - ones
    return 1 if ones > zeros else 0 if zeros > ones else None


out = {"models": {}, "pairs": []}
for model, items in models.items():
    allv = [v for eps in items.values() for v in eps.values()]
    disc = comp = 0
    for eps in items.values():
        vals = list(eps.values())
        n = len(vals)
        comp += n * (n - 1) // 2
        agree = sum(k * (k - 1) // 2 for k in (vals.count(x) for x in set(vals)))
        disc += n * (n - 1) // 2 - agree
    out["models"][model] = {"draws": len(allv), "successes": int(sum(allv)), "accuracy": sum(allv) / len(allv),
                            "discordant": disc, "comparisons": comp, "items": len(items),
                            "majority": {i: majority(list(eps.values())) for i, eps in items.items()}}
for a, b in itertools.combinations(sorted(models), 2):
    ma, mb = out["models"][a]["majority"], out["models"][b]["majority"]
    common = sorted(set(ma) & set(mb))
    bc = sum(1 for i in common if ma[i] == 1 and mb[i] == 0)
    cc = sum(1 for i in common if ma[i] == 0 and mb[i] == 1)
    n = bc + cc
    p = 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, k) for k in range(min(bc, cc) + 1)) / 2 ** n)
    out["pairs"].append({"a": a, "b": b, "items": len(common), "b_count": bc, "c_count": cc, "p_value": p})
print(json.dumps(out))
