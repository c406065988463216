#!/usr/bin/env bash
# Draws/s of N `noisefloor worker` processes sharing one PostgreSQL study, all calling one
# zero-latency `serve-sim` (docs/store.md "PostgreSQL", Measured). Run under a server:
#   scripts/with-postgres bench/worker_serve_sim.sh build/ci/noisefloor [WORKERS] [REPLICATES] [BATCH]
# Prints the wall time and draws/s of the workers together, and for reference one
# `noisefloor run` process on SQLite with the same thread count per worker.
set -euo pipefail
bin="$(realpath "$1")"
workers="${2:-4}"
reps="${3:-20}"
batch="${4:-16}"
threads=2
: "${NOISEFLOOR_PG_URL:?run under scripts/with-postgres}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(mktemp -d /tmp/nf-worker-bench.XXXXXX)"
sim_pid=""
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

"$bin" serve-sim --port 0 >"$dir/sim.out" 2>"$dir/sim.err" &
sim_pid=$!
for _ in $(seq 100); do grep -q http "$dir/sim.out" 2>/dev/null && break; sleep 0.05; done
url="$(grep -o 'http://[^ ]*' "$dir/sim.out")"
cat >"$dir/study.yaml" <<YAML
name: worker-bench
seed: 7
dataset: {format: medqa, path: $root/data/sample-mcq.jsonl}
subjects:
  - {name: sim-http, backend: openai, base_url: "$url", model: sim-mcq-1, concurrency: $threads}
conditions: [none, shuffle, remove_answer, remove_context]
configs: {temperature: [0, 0.7]}
replicates: $reps
analyses: {floor: {}}
YAML
planned=$((24 * 4 * 2 * reps))
schema="nfbench_$$"
sep='?'; case "$NOISEFLOOR_PG_URL" in *\?*) sep='&';; esac
store="${NOISEFLOOR_PG_URL}${sep}options=-csearch_path%3D${schema}"

t0=$(date +%s.%N)
pids=()
for w in $(seq "$workers"); do
  "$bin" worker "$dir/study.yaml" --store "$store" --quiet --threads "$threads" --batch "$batch" --no-cache \
    2>"$dir/w$w.err" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "a worker failed:"; cat "$dir"/w*.err; exit 1; }; done
t1=$(date +%s.%N)
psql "$NOISEFLOOR_PG_URL" -qAtc "DROP SCHEMA $schema CASCADE" >/dev/null 2>&1 || true
python3 - "$t0" "$t1" "$planned" "$workers" "$threads" "$batch" <<'PY'
import sys
t0, t1, n, w, th, b = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
print(f"{w} workers x {th} threads, batch {b}: {n} draws in {t1 - t0:.2f} s = {n / (t1 - t0):.0f} draws/s")
PY

t0=$(date +%s.%N)
"$bin" run "$dir/study.yaml" --store "$dir/one.sqlite" --quiet --threads "$threads" --no-cache
t1=$(date +%s.%N)
python3 - "$t0" "$t1" "$planned" "$threads" <<'PY'
import sys
t0, t1, n, th = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print(f"reference: one run process on SQLite, {th} threads: {n} draws in {t1 - t0:.2f} s = {n / (t1 - t0):.0f} draws/s")
PY
