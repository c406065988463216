#!/usr/bin/python3
"""Times noisefloor against statsmodels/numpy on the same inputs (agreement + models).

    /usr/bin/python3 bench/compare_models.py [PATH/TO/stats_models_bench]

Regenerates the inputs of bench/stats_models_bench.cc bit for bit (same SplitMix64
streams), runs the C++ benchmark (--benchmark_format=json), times the Python equivalent:
  - Fleiss kappa over 100,000 items: statsmodels.stats.inter_rater.fleiss_kappa;
  - 1,000 bootstrap refits of an 800-row fixed-effects logistic regression:
    statsmodels.discrete.discrete_model.Logit(y, X).fit() on numpy arrays (Newton, the
    statsmodels default; design built once, rows resampled by the same indices),
checks that both computed the same values, and prints the speed-up ratios. Both sides
are timed in CPU seconds (Google Benchmark cpu_time; time.process_time for Python, which
counts every BLAS thread), so a loaded machine does not skew the ratio.
Use a Release build of the benchmark (cmake -DCMAKE_BUILD_TYPE=Release).
"""
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import statsmodels.api as sm
from statsmodels.stats.inter_rater import fleiss_kappa

warnings.simplefilter("ignore")
M64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


ITEMS, RATERS, CATS, ROWS, REFITS = 100000, 5, 3, 800, 1000


def fleiss_counts():
    g = SplitMix64(1)
    counts = np.zeros((ITEMS, CATS), dtype=np.int64)
    for i in range(ITEMS):
        truth = g.next() % CATS
        for _ in range(RATERS):
            u = g.next()
            cat = truth if (u % 100) < 60 else (u >> 32) % CATS
            counts[i, cat] += 1
    return counts


def logit_data():
    g = SplitMix64(2)
    x = np.zeros((ROWS, 8))
    y = np.zeros(ROWS)
    for i in range(ROWS):
        subject, judge = i % 4, (i // 4) % 4
        x[i, 0] = 1.0
        if subject > 0:
            x[i, subject] = 1.0
        if judge > 0:
            x[i, 3 + judge] = 1.0
        x[i, 7] = 1.0 if subject == judge else 0.0
        p = 0.35 + 0.1 * subject - 0.05 * judge + 0.1 * x[i, 7]
        y[i] = 1.0 if (g.next() % 1000) < p * 1000.0 else 0.0
    idx = np.array([g.next() % ROWS for _ in range(REFITS * ROWS)], dtype=np.int64).reshape(REFITS, ROWS)
    return x, y, idx


def best_of(fn, repeats):
    best, value = float("inf"), None
    for _ in range(repeats):
        t0 = time.process_time()  # CPU time of every thread, like Google Benchmark's cpu_time
        value = fn()
        best = min(best, time.process_time() - t0)
    return best, value


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "bench", "stats_models_bench")
    out = subprocess.run([binary, "--benchmark_format=json", "--benchmark_min_time=0.5"], check=True,
                         capture_output=True, text=True).stdout
    cpp = {b["name"]: b for b in json.loads(out)["benchmarks"]}

    counts = fleiss_counts()
    t_fleiss, kappa = best_of(lambda: fleiss_kappa(counts, method="fleiss"), 5)

    x, y, idx = logit_data()

    def refits():
        vals, failed = [], 0
        for b in range(REFITS):
            try:
                res = sm.Logit(y[idx[b]], x[idx[b]]).fit(disp=0)
                vals.append(res.params[7])
            except Exception:  # noqa: BLE001 - perfect separation
                failed += 1
        return float(np.mean(vals)), failed

    t_logit, (mean_same, failed) = best_of(refits, 1)

    rows = [("Fleiss kappa, 100,000 items", cpp["BM_FleissKappa100k"], t_fleiss,
             ("kappa", kappa, cpp["BM_FleissKappa100k"]["kappa"])),
            ("1,000 bootstrap refits, 800-row logit", cpp["BM_LogitBootstrap1000"], t_logit,
             ("mean same_provider", mean_same, cpp["BM_LogitBootstrap1000"]["mean_same_provider"]))]
    print(f"{'benchmark':40s} {'noisefloor':>12s} {'python':>12s} {'ratio':>8s}  check")
    for name, b, t_py, (what, v_py, v_cpp) in rows:
        t_cpp = b["cpu_time"] / 1e3  # ms -> s (CPU time: the 2-core dev machine is shared)
        print(f"{name:40s} {t_cpp * 1e3:10.2f}ms {t_py * 1e3:10.2f}ms {t_py / t_cpp:7.1f}x  "
              f"{what}: python {v_py:.10f} vs noisefloor {v_cpp:.10f}")
    print(f"(python logit refits failed: {failed}; noisefloor: {int(cpp['BM_LogitBootstrap1000']['failed_refits'])})")


if __name__ == "__main__":
    main()
