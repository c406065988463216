#!/usr/bin/python3
"""Reference values for tests/metrics/judge_panel_test.cc (seed 004 §2.6, Table 5).

Reads the released votes in place ($NOISEFLOOR_DATA/missing-info-judges/votes.jsonl, or
../shared/data beside the repository; nothing is copied into the repository) and fits the
vote-level logistic models with statsmodels 0.13 (Debian python3-statsmodels):
  shared:      label ~ C(subject) + C(judge) + same_provider
  focus:       label ~ C(subject) + C(judge) + same_gpt55 + same_others
  per_subject: label ~ C(subject) + C(judge) + one same-provider term per subject
and the exact permutation p over the 24 bijections of own judges to subjects.
Run once: /usr/bin/python3 tests/reference/gen_judges.py ; the printed values are pinned
in judge_panel_test.cc (kStatsmodels*).
"""
import itertools, json, os, sys
import pandas as pd
import statsmodels.formula.api as smf

root = os.environ.get("NOISEFLOOR_DATA") or os.path.join(os.path.dirname(__file__), "../../../shared/data")
rows = [json.loads(l) for l in open(os.path.join(root, "missing-info-judges/votes.jsonl"))]
def prov(s):
    return ("openai" if s.startswith("gpt") else "anthropic" if s.startswith(("opus", "claude"))
            else "xai" if s.startswith("grok") else "google")
v = pd.DataFrame([dict(subject=r["subject_model"], judge=j, label=int(x), same=int(prov(r["subject_model"]) == j))
                  for r in rows for j, x in r["votes"].items() if x is not None])
out = {"n": len(v)}
m = smf.logit("label ~ C(subject) + C(judge) + same", v).fit(disp=0, tol=1e-12)
out["shared"] = {"coef": m.params["same"], "se": m.bse["same"], "llf": m.llf}
v["same_gpt"] = v.same * v.subject.str.startswith("gpt")
v["same_oth"] = v.same - v.same_gpt
m = smf.logit("label ~ C(subject) + C(judge) + same_gpt + same_oth", v).fit(disp=0, tol=1e-12)
out["focus"] = {"gpt": m.params["same_gpt"], "gpt_se": m.bse["same_gpt"], "others": m.params["same_oth"],
                "others_se": m.bse["same_oth"]}
subs = sorted(v.subject.unique())
for i, s in enumerate(subs):
    v[f"s{i}"] = v.same * (v.subject == s)
m = smf.logit("label ~ C(subject) + C(judge) + " + " + ".join(f"s{i}" for i in range(len(subs))), v).fit(disp=0, tol=1e-12)
out["per_subject"] = {s: m.params[f"s{i}"] for i, s in enumerate(subs)}
judges = {s: prov(s) for s in subs}
own = [judges[s] for s in subs]
stats = []
for perm in itertools.permutations(range(len(subs))):
    v["sp"] = [int(own[perm[subs.index(s)]] == j) for s, j in zip(v.subject, v.judge)]
    stats.append(smf.logit("label ~ C(subject) + C(judge) + sp", v).fit(disp=0).params["sp"])
obs = out["shared"]["coef"]
out["permutation_at_least"] = sum(1 for s in stats if s >= obs - 1e-9)
out["permutation_total"] = len(stats)
json.dump(out, sys.stdout, indent=1)
print()
