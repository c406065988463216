#!/usr/bin/python3
"""Times noisefloor against numpy on the same inputs (statistics core).

    /usr/bin/python3 bench/compare_core.py [PATH/TO/stats_core_bench]

Regenerates the inputs of bench/stats_core_bench.cc bit for bit (same SplitMix64
stream), runs the C++ benchmark (--benchmark_format=json) and times the numpy
equivalent of a 10,000-resample cluster bootstrap of an instability floor over 1,000
vignettes x 100 draws: vectorised index draws (Generator.integers), gathered sums,
ratio, numpy.quantile (linear). Checks that both give the same estimate and intervals
that agree within Monte Carlo error (the resampling streams differ), then prints the
speed-up ratios. Use a Release build of the benchmark (cmake -DCMAKE_BUILD_TYPE=Release).
"""
import json
import subprocess
import sys
import time

import numpy as np

M64 = (1 << 64) - 1
CLUSTERS, DRAWS, RESAMPLES = 1000, 100, 10000


class SplitMix64:
    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


def floor_inputs():
    g = SplitMix64(3)
    num = np.zeros(CLUSTERS)
    den = np.full(CLUSTERS, DRAWS * (DRAWS - 1) / 2.0)
    for i in range(CLUSTERS):
        p_millis = (g.next() % 1000) * 300
        k = sum(1 for _ in range(DRAWS) if (g.next() % 1000000) < p_millis)
        num[i] = k * (DRAWS - k)
    return num, den


def numpy_bootstrap(num, den, seed=2026):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, CLUSTERS, size=(RESAMPLES, CLUSTERS))
    reps = num[idx].sum(axis=1) / den[idx].sum(axis=1)
    return num.sum() / den.sum(), np.quantile(reps, 0.025), np.quantile(reps, 0.975)


def best_of(fn, repeat=5):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build-release/bench/stats_core_bench"
    num, den = floor_inputs()
    py_s, (est, lo, hi) = best_of(lambda: numpy_bootstrap(num, den))
    out = subprocess.run([binary, "--benchmark_format=json", "--benchmark_repetitions=3",
                          "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    rows = [b for b in json.loads(out)["benchmarks"] if b.get("aggregate_name") == "median"]
    print(f"numpy: {py_s * 1e3:.1f} ms  estimate {est:.6f}  95% CI [{lo:.6f}, {hi:.6f}]")
    for b in rows:
        cpp_s = b["real_time"] / 1e3  # ms -> s
        assert abs(b["estimate"] - est) < 1e-12, "different inputs"
        width = hi - lo
        assert abs(b["low"] - lo) < 0.1 * width and abs(b["high"] - hi) < 0.1 * width, "intervals disagree"
        print(f"{b['run_name']}: {cpp_s * 1e3:.1f} ms  [{b['low']:.6f}, {b['high']:.6f}]  "
              f"speed-up vs numpy {py_s / cpp_s:.1f}x")


if __name__ == "__main__":
    main()
