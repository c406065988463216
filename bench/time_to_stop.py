#!/usr/bin/env python3
"""Time from a model server's death or hang to `noisefloor run`'s exit (docs/backends.md
"A server that goes down mid-run", "A server that hangs").

Starts `serve-sim --latency-ms 5`, runs a 10,000-draw MedQA study against it (one openai
subject, every setting at its default unless given), and 3 s into the run either SIGKILLs
the server (`kill`: connections refused) or SIGSTOPs it (`stop`: connections accepted,
nothing answered). Prints the seconds from the signal to the run's exit, the exit code, the
stored draws by status and the run's stderr.

usage: NOISEFLOOR_DATA=../shared/data bench/time_to_stop.py BINARY kill|stop CONCURRENCY
           [--timeout-s S] [-- extra run flags, e.g. --no-event-loop]
"""
import argparse
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("mode", choices=["kill", "stop"])
    ap.add_argument("concurrency", type=int)
    ap.add_argument("--timeout-s", type=float, default=None, help="subject timeout_s (default: the study default)")
    ap.add_argument("--after-s", type=float, default=3.0, help="seconds into the run at which the server is signalled")
    ap.add_argument("extra", nargs="*", help="extra `run` flags (after --)")
    a = ap.parse_args()
    data = os.path.abspath(os.environ.get("NOISEFLOOR_DATA", "../shared/data"))
    d = tempfile.mkdtemp(prefix="time-to-stop-")
    timeout = f"    timeout_s: {a.timeout_s}\n" if a.timeout_s is not None else ""
    with open(f"{d}/study.yaml", "w") as f:
        f.write(f"""name: time-to-stop
seed: 1
task: mcq
dataset:
  format: medqa
  path: {data}/medqa/medqa_usmle_4options_test.jsonl
  limit: 1000
  id_field: realidx
subjects:
  - name: http
    backend: openai
    model: sim-mcq-1
    base_url: ${{SIM_URL}}
    concurrency: {a.concurrency}
{timeout}conditions: [none]
configs:
  temperature: [0, 0.7]
replicates: 5
analyses:
  floor: {{}}
bootstrap: {{resamples: 50, seed: 1, level: 0.95}}
""")
    sim = subprocess.Popen([a.binary, "serve-sim", "--port", "0", "--latency-ms", "5"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    url = re.search(r"http://\S+", sim.stdout.readline()).group(0)
    with open(f"{d}/run.err", "w") as err:
        run = subprocess.Popen([a.binary, "run", f"{d}/study.yaml", "--quiet", "--no-cache", "--store",
                                f"{d}/s.sqlite"] + a.extra, env=dict(os.environ, SIM_URL=url), stderr=err)
        time.sleep(a.after_s)
        os.kill(sim.pid, signal.SIGKILL if a.mode == "kill" else signal.SIGSTOP)
        t0 = time.time()
        rc = run.wait()
        waited = time.time() - t0
    if a.mode == "stop":
        os.kill(sim.pid, signal.SIGCONT)
    sim.kill()
    sim.wait()
    rows = dict(sqlite3.connect(f"{d}/s.sqlite").execute("SELECT status, count(*) FROM draws GROUP BY status"))
    print(f"{a.mode} concurrency={a.concurrency} timeout_s={a.timeout_s or 'default'} flags={' '.join(a.extra) or '-'}: "
          f"exit {rc} {waited:.1f} s after the signal; stored {rows}")
    with open(f"{d}/run.err") as f:
        sys.stdout.write(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
