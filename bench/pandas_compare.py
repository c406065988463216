#!/usr/bin/python3
"""Whole-process benchmark: `noisefloor import draws` + `noisefloor analyze` against the
pandas + numpy script a user would otherwise write, in one run, on the same workload.

    /usr/bin/python3 bench/pandas_compare.py build/ci/noisefloor [--scales 1,10] [--workdir DIR]
    /usr/bin/python3 bench/pandas_compare.py build/ci/noisefloor --scales 100 --skip-pandas   # 100M values

Workload (issue 14): 100,000 draws x 10 outcomes = 1,000,000 outcome values, 10,000 items
in 1,000 clusters, 10 replicates per item, one subject / config / condition, binary values
(each item has its own probability of a 1); written as a long CSV of about 34 MB
(subject,item,cluster,condition,config,replicate,outcome,value). Scale 10 makes the items
(and so draws and clusters) ten times as many; by default the run does scale 1 (1M values)
and scale 10 (10M) one after the other and prints a summary of both. Scale 100 (100M values,
a 3.6 GB CSV) is for noisefloor alone (--skip-pandas): pandas needs tens of GB there.

Timed, each in its own child process (wall clock; CPU = user + system and peak RSS from GNU
time's %U %S %M; on a shared machine compare the CPU seconds, which other load barely moves):
  noisefloor: `import draws FILE --store S` then `analyze --store S --analysis floor
              --analysis majority_floor --resamples 10000` (majority floor R' = 3);
  pandas:     read_csv, groupby (item, outcome) -> n, ones; floor = sum k(n-k) / sum C(n,2)
              per outcome and pooled; majority floor R' = 3 counted exactly over every pair of
              disjoint 3-subsets (closed form from the counts, no enumeration); cluster
              bootstrap of each ratio with 10,000 resamples (one shared index matrix).
Checks: discordant, comparisons, items, clusters and rate equal for every row (floor and
majority floor, each outcome and pooled); the bootstrap intervals agree to 0.01 (the two
resampling streams differ, so only within Monte Carlo error). Exit 1 if they differ.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from math import comb

import numpy as np
import pandas as pd

RESAMPLES = 10000
VOTE = 3


def generate(path, scale, seed=20261201):
    """Writes the long CSV in chunks of 10,000 items (bounded memory at any scale); returns rows."""
    rng = np.random.default_rng(seed)
    n_items, reps, n_out = 10000 * scale, 10, 10
    item_fmt = "i{:05d}" if n_items <= 100000 else "i{:06d}"
    cluster_fmt = "c{:04d}" if n_items <= 10000 else "c{:05d}"
    rows = 0
    with open(path, "w", newline="") as f:
        f.write("subject,item,cluster,condition,config,replicate,outcome,value\n")
        for start in range(0, n_items, 10000):
            n = min(10000, n_items - start)
            p = rng.beta(0.3, 0.3, size=(n, n_out))  # most items near-stable, some noisy
            item = np.repeat(np.arange(start, start + n), reps * n_out)
            rep = np.tile(np.repeat(np.arange(reps), n_out), n)
            out = np.tile(np.arange(n_out), n * reps)
            val = (rng.random(item.size) < p[item - start, out]).astype(np.int8)
            item_names = np.array([item_fmt.format(i) for i in range(start, start + n)])
            cluster_names = np.array([cluster_fmt.format(i // 10) for i in range(start, start + n)])
            df = pd.DataFrame({
                "subject": "m",
                "item": item_names[item - start],
                "cluster": cluster_names[item - start],
                "condition": "none",
                "config": "default",
                "replicate": rep,
                "outcome": np.array([f"o{o}" for o in range(n_out)])[out],
                "value": val,
            })
            df.to_csv(f, index=False, header=False)
            rows += item.size
    return rows


def run_child(argv):
    """Runs argv under /usr/bin/time; returns (wall seconds, peak RSS MiB, CPU seconds).
    The peak RSS comes from GNU time (%M), not from this process's wait4: a child forked
    from this (large, after generating the data) Python keeps the parent's RSS as its
    ru_maxrss across exec."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", rss.name] + argv, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
        err = proc.stderr.decode(errors="replace")
        if proc.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{err}")
        kib, user, system = rss.read().strip().splitlines()[-1].split()
    return wall, int(kib) / 1024.0, float(user) + float(system)


# ---- the pandas / numpy equivalent (runs in a child: --pandas-child CSV OUT.json) ----

def majority_counts(n, k, r):
    """Ordered pairs of disjoint r-subsets of n binary replicates with k ones: (both
    votes decided and different, both decided). r odd -> every vote is decided."""
    disc = comp = 0
    for a in range(r + 1):  # ones in A
        wa = comb(k, a) * comb(n - k, r - a)
        if wa == 0 or 2 * a == r:
            continue
        for b in range(r + 1):  # ones in B, from what A left
            wb = comb(k - a, b) * comb(n - k - (r - a), r - b)
            if wb == 0 or 2 * b == r:
                continue
            comp += wa * wb
            if (2 * a > r) != (2 * b > r):
                disc += wa * wb
    return disc // 2, comp // 2


def pandas_child(csv, out_json):
    df = pd.read_csv(csv, dtype={"subject": "category", "item": "category", "cluster": "category",
                                 "condition": "category", "config": "category", "outcome": "category",
                                 "replicate": np.int32, "value": np.float64})
    if not df["value"].isin([0.0, 1.0]).all():
        sys.exit("pandas equivalent handles binary values only")
    g = df.groupby(["subject", "config", "condition", "outcome", "item"], observed=True, sort=True)
    per = g.agg(n=("value", "size"), k=("value", "sum"), cluster=("cluster", "first")).reset_index()
    n = per["n"].to_numpy(np.int64)
    k = per["k"].to_numpy(np.int64)
    # plain floor per item: C(n,2) - C(k,2) - C(n-k,2) = k (n - k)
    per["d1"] = k * (n - k)
    per["c1"] = n * (n - 1) // 2
    # majority floor R' = 3 from a (n, k) table
    table = {}
    for nk in set(zip(n.tolist(), k.tolist())):
        table[nk] = majority_counts(nk[0], nk[1], VOTE) if nk[0] >= 2 * VOTE else (0, 0)
    dm = np.array([table[x][0] for x in zip(n.tolist(), k.tolist())], dtype=np.int64)
    cm = np.array([table[x][1] for x in zip(n.tolist(), k.tolist())], dtype=np.int64)
    per["d3"], per["c3"] = dm, cm
    per["unan"] = (per["d1"] == 0).astype(np.int64)

    clusters = per["cluster"].cat.categories
    rng = np.random.default_rng(1)
    ncl = len(clusters)
    idx = rng.integers(0, ncl, size=(RESAMPLES, ncl))

    def boot(num_by_cl, den_by_cl):
        nb = num_by_cl[idx].sum(axis=1)
        db = den_by_cl[idx].sum(axis=1)
        ok = db > 0
        ratio = nb[ok] / db[ok]
        return float(np.quantile(ratio, 0.025)), float(np.quantile(ratio, 0.975))

    rows = []
    for (subj, cfg, cond), cell in per.groupby(["subject", "config", "condition"], observed=True, sort=True):
        for vote, dcol, ccol in ((1, "d1", "c1"), (VOTE, "d3", "c3")):
            used = cell[cell[ccol] > 0]
            parts = [(str(o), sub) for o, sub in used.groupby("outcome", observed=True, sort=True)]
            parts.append(("pooled", used))
            for name, sub in parts:
                codes = sub["cluster"].cat.codes.to_numpy()
                num = np.bincount(codes, weights=sub[dcol].to_numpy(np.float64), minlength=ncl)
                den = np.bincount(codes, weights=sub[ccol].to_numpy(np.float64), minlength=ncl)
                present = np.bincount(codes, minlength=ncl) > 0
                lo, hi = boot(num[present], den[present])
                d, c = int(sub[dcol].sum()), int(sub[ccol].sum())
                rows.append({"subject": str(subj), "config": str(cfg), "condition": str(cond), "outcome": name,
                             "vote_size": vote, "discordant": d, "comparisons": c, "rate": d / c,
                             "items": int(sub["item"].nunique()) if name == "pooled" else len(sub),
                             "clusters": int(present.sum()), "unanimous_cells": int(sub["unan"].sum()),
                             "ci_low": lo, "ci_high": hi})
    with open(out_json, "w") as f:
        json.dump(rows, f)


def compare(nf_results, pd_rows):
    with open(nf_results) as f:
        res = json.load(f)
    nf_rows = {}
    for a in ("floor", "majority_floor"):
        for r in res["analyses"][a]["rows"]:
            nf_rows[(r["subject"], r["config"], r["condition"], r["outcome"], r.get("vote_size", 1))] = r
    bad, worst_ci = [], 0.0
    for p in pd_rows:
        key = (p["subject"], p["config"], p["condition"], p["outcome"], p["vote_size"])
        r = nf_rows.pop(key, None)
        if r is None:
            bad.append(f"{key}: missing in noisefloor's results")
            continue
        for f in ("discordant", "comparisons", "items", "clusters", "unanimous_cells"):
            if r[f] != p[f]:
                bad.append(f"{key}: {f} noisefloor {r[f]} pandas {p[f]}")
        if r["rate"] != p["rate"]:
            bad.append(f"{key}: rate noisefloor {r['rate']!r} pandas {p['rate']!r}")
        for f in ("ci_low", "ci_high"):
            worst_ci = max(worst_ci, abs(r[f] - p[f]))
            if abs(r[f] - p[f]) > 0.01:
                bad.append(f"{key}: {f} noisefloor {r[f]} pandas {p[f]}")
    bad += [f"{k}: only in noisefloor's results" for k in nf_rows]
    return bad, len(pd_rows), worst_ci


def run_scale(args, work, scale):
    """One workload: generate (kept in the work directory), noisefloor, pandas, compare.
    Returns a summary dict."""
    csv = os.path.join(work, f"draws_x{scale}.csv")
    if not os.path.exists(csv):
        t = time.perf_counter()
        rows = generate(csv, scale)
        print(f"generated {rows:,} outcome rows, {os.path.getsize(csv) / 1e6:.1f} MB in {time.perf_counter() - t:.1f} s")
    store = os.path.join(work, f"bench_x{scale}.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    out = os.path.join(work, f"out_x{scale}")
    nf = os.path.abspath(args.noisefloor)
    values = 1000000 * scale
    print(f"== {values:,} outcome values (scale {scale})")
    ti, ri, ci = run_child([nf, "import", "draws", csv, "--store", store])
    ta, ra, ca = run_child([nf, "analyze", "--store", store, "--out", out, "--analysis", "floor",
                            "--analysis", "majority_floor", "--resamples", str(RESAMPLES)])
    print(f"noisefloor import  : {ti:7.2f} s  CPU {ci:7.2f} s  peak RSS {ri:7.0f} MiB")
    print(f"noisefloor analyze : {ta:7.2f} s  CPU {ca:7.2f} s  peak RSS {ra:7.0f} MiB")
    print(f"noisefloor total   : {ti + ta:7.2f} s  CPU {ci + ca:7.2f} s  peak RSS {max(ri, ra):7.0f} MiB")
    summary = {"values": values, "nf_wall": ti + ta, "nf_cpu": ci + ca, "nf_rss": max(ri, ra)}
    if not args.skip_pandas:
        pj = os.path.join(work, f"pandas_rows_x{scale}.json")
        tp, rp, cp = run_child([sys.executable, os.path.abspath(__file__), "--pandas-child", csv, pj])
        print(f"pandas + numpy     : {tp:7.2f} s  CPU {cp:7.2f} s  peak RSS {rp:7.0f} MiB  (whole script: read_csv, "
              f"groupby, floors, bootstrap)")
        with open(pj) as f:
            pd_rows = json.load(f)
        bad, n, worst = compare(os.path.join(out, "results.json"), pd_rows)
        if bad:
            print("DIFFERENT FLOORS:\n  " + "\n  ".join(bad[:20]))
            sys.exit(1)
        print(f"same floors: {n} rows (floor + majority floor R'={VOTE}, each outcome and pooled): counts and rates "
              f"equal, bootstrap intervals within {worst:.4f}")
        print(f"ratio pandas / noisefloor (end to end): wall {tp / (ti + ta):.2f}x, CPU {cp / (ci + ca):.2f}x")
        summary.update({"pd_wall": tp, "pd_cpu": cp, "pd_rss": rp})
    if not args.keep:  # the store (hundreds of MB at scale 10); the CSV stays for the next run
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(store + suffix):
                os.remove(store + suffix)
    return summary


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--pandas-child":
        pandas_child(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("noisefloor", help="path to the noisefloor binary (a Release build)")
    ap.add_argument("--scales", default="1,10",
                    help="comma-separated workloads in millions of outcome values (default 1,10; 100 = 100M)")
    ap.add_argument("--scale", type=int, help="one workload only (same as --scales N)")
    ap.add_argument("--workdir", help="where the CSVs and stores go (default: a temporary directory, removed); "
                                      "CSVs already there are reused")
    ap.add_argument("--keep", action="store_true", help="keep the stores (the CSVs stay in --workdir anyway)")
    ap.add_argument("--skip-pandas", action="store_true", help="time noisefloor only")
    args = ap.parse_args()
    scales = [args.scale] if args.scale else [int(x) for x in args.scales.split(",")]
    work = args.workdir or tempfile.mkdtemp(prefix="nf-pandas-bench-")
    os.makedirs(work, exist_ok=True)
    results = [run_scale(args, work, s) for s in scales]
    print("\nsummary (wall clock; CPU = user + system):")
    for r in results:
        line = (f"  {r['values']:>11,} values: noisefloor {r['nf_wall']:6.2f} s (CPU {r['nf_cpu']:6.2f} s, "
                f"{r['nf_rss']:5.0f} MiB)")
        if "pd_wall" in r:
            line += (f" | pandas {r['pd_wall']:6.2f} s (CPU {r['pd_cpu']:6.2f} s, {r['pd_rss']:5.0f} MiB)"
                     f" | pandas / noisefloor: wall {r['pd_wall'] / r['nf_wall']:.2f}x, "
                     f"CPU {r['pd_cpu'] / r['nf_cpu']:.2f}x")
        print(line)
    if not args.workdir:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
