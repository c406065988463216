#!/usr/bin/python3
"""`noisefloor run` end to end (store commit included) against `wrk`, on the same
zero-latency `noisefloor serve-sim`, in one run (issue 14 item 5).

    NOISEFLOOR_DATA=../shared/data /usr/bin/python3 bench/run_vs_wrk.py build/ci/noisefloor \
        [--draws 10000] [--concurrency 16] [--seconds 5] [--repeat 1] \
        [--curl-floor build/ci/bench/curl_floor_bench]

1. starts `noisefloor serve-sim --port 0` (one server for both clients);
2. `wrk -t2 -c<concurrency> -d<seconds>s` POSTs the request noisefloor sends for its first
   draw (read back from a one-draw run; a Lua script sets method, body, header) to
   /v1/chat/completions: the server's limit for the same requests on this box;
3. `noisefloor run` of a MedQA study (1,000 items x replicates = --draws, temperature 0.7,
   concurrency <concurrency>, no response cache) into a fresh store: draws/s over the
   whole process (start, plan, requests, parsing, group-committed store writes) and the
   client's CPU (user + system from wait4) per draw, and that less the start-up's CPU
   (the --max-draws 0 run) spread over the draws.
4. with --curl-floor, between the two: `curl_floor_bench` (bench/curl_floor_bench.cc), bare
   libcurl multi on 2 threads posting the same body on kept-alive connections, the reply
   thrown away, once with curl_multi_perform + curl_multi_poll (run's loop) and once with
   curl_multi_socket_action on epoll: what the HTTP library alone costs per request, before any JSON or store.
Prints the start-up cost (--max-draws 0, wall and CPU), then per pair both rates, noisefloor's share of
wrk's, the client CPU per request / draw, the server's CPU per request / draw (from
/proc/PID/stat) and the load average (1 min) at the start of each measurement; --repeat N
interleaves N pairs and the last line gives the medians. Exits 1 unless every planned
draw was stored once with no API error. wrk is Debian's `wrk` (apt-get install wrk); it
is a bench-only dependency.
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("noisefloor")
    ap.add_argument("--draws", type=int, default=10000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=1, help="wrk / noisefloor pairs, interleaved")
    ap.add_argument("--curl-floor", help="path of bench/curl_floor_bench: also time bare libcurl per pair")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk not found: apt-get install wrk")
    data = os.environ.get("NOISEFLOOR_DATA")
    if not data:
        sys.exit("set NOISEFLOOR_DATA (the MedQA test set is read from it)")
    nf = os.path.abspath(args.noisefloor)
    work = tempfile.mkdtemp(prefix="nf-wrk-bench-")
    sim = subprocess.Popen([nf, "serve-sim", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    try:
        line = sim.stdout.readline()
        m = re.search(r"(http://\S+)", line)
        if not m:
            sys.exit(f"serve-sim did not say where it listens: {line!r}")
        base = m.group(1).rstrip("/")
        tick = os.sysconf("SC_CLK_TCK")

        def server_cpu_s():  # serve-sim's user + system CPU so far (/proc/PID/stat fields 14, 15)
            with open(f"/proc/{sim.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick

        def run_wrk():
            load = os.getloadavg()[0]
            srv0 = server_cpu_s()
            proc = subprocess.Popen(["wrk", "-t2", f"-c{args.concurrency}", f"-d{args.seconds}s", "-s", lua,
                                     base + "/chat/completions"], stdout=subprocess.PIPE, text=True)
            out = proc.stdout.read()
            _, status, ru = os.wait4(proc.pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                sys.exit(f"wrk failed:\n{out}")
            non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
            if non2xx:
                sys.exit(f"wrk got {non2xx.group(1)} error responses:\n{out}")
            total = int(re.search(r"(\d+) requests in", out).group(1))
            srv = (server_cpu_s() - srv0) / max(1, total) * 1e6
            return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), load, \
                (ru.ru_utime + ru.ru_stime) / max(1, total) * 1e6, srv

        items = 1000
        reps = max(1, args.draws // items)
        study = os.path.join(work, "study.yaml")
        with open(study, "w") as f:
            f.write(f"""name: wrk-bench
seed: 1
task: mcq
dataset:
  format: medqa
  path: {data}/medqa/medqa_usmle_4options_test.jsonl
  limit: {items}
  id_field: realidx
subjects:
  - name: sim
    backend: openai
    model: sim-mcq-1
    base_url: {base}
    concurrency: {args.concurrency}
conditions: [none]
configs:
  temperature: [0.7]
replicates: {reps}
analyses:
  floor: {{}}
""")
        draws = items * reps

        def run_nf(k):
            store = os.path.join(work, f"run{k}.sqlite")
            load = os.getloadavg()[0]
            srv0 = server_cpu_s()
            t0 = time.perf_counter()
            proc = subprocess.Popen([nf, "run", study, "--store", store, "--quiet", "--no-cache"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            err = proc.stderr.read()
            _, status, ru = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            if os.waitstatus_to_exitcode(status) != 0:
                sys.exit(f"noisefloor run failed:\n{err}")
            con = sqlite3.connect(store)
            stored, api = con.execute("SELECT count(*), sum(status = 'api_error') FROM draws").fetchone()
            con.close()
            if stored != draws or api:
                sys.exit(f"noisefloor run stored {stored} draws of {draws}, {api} api errors")
            return draws / wall, wall, ru, load, (server_cpu_s() - srv0) / draws * 1e6

        # The fixed cost inside the end-to-end time: the same run stopped before its first
        # draw (study, dataset, items and plan written to a fresh store).
        t0 = time.perf_counter()
        proc = subprocess.Popen([nf, "run", study, "--store", os.path.join(work, "startup.sqlite"), "--quiet",
                                 "--no-cache", "--max-draws", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru0 = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit("noisefloor run --max-draws 0 failed")
        startup = time.perf_counter() - t0
        startup_cpu = ru0.ru_utime + ru0.ru_stime
        print(f"start-up of noisefloor run (--max-draws 0): {startup:.2f} s wall, {startup_cpu:.2f} s CPU", flush=True)

        # wrk sends the request noisefloor sends for its first draw (same model, prompt,
        # decoding, seed), read back from a one-draw run: the server's limit for the same
        # requests, not for a shorter prompt.
        one = os.path.join(work, "one.sqlite")
        subprocess.run([nf, "run", study, "--store", one, "--quiet", "--no-cache", "--max-draws", "1"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        con = sqlite3.connect(one)
        body = con.execute("SELECT request FROM draws ORDER BY id LIMIT 1").fetchone()[0]
        con.close()
        lua = os.path.join(work, "post.lua")
        with open(lua, "w") as f:
            f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                    f"wrk.body = {json.dumps(body)}\n")
        body_file = os.path.join(work, "body.json")
        with open(body_file, "w") as f:
            f.write(body)

        def run_curl_floor():
            load = os.getloadavg()[0]
            srv0 = server_cpu_s()
            n = max(draws, 20000)
            rows = []
            for api in ("poll", "socket"):
                out = subprocess.run([os.path.abspath(args.curl_floor), "--url", base + "/chat/completions", "--body",
                                  body_file, "--requests", str(n), "--concurrency", str(args.concurrency),
                                  "--threads", "2", "--api", api], capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"curl_floor_bench failed:\n{out.stdout}{out.stderr}")
                rate = float(re.search(r"= (\d+) requests/s", out.stdout).group(1))
                cpu = float(re.search(r"([\d.]+) us CPU per request", out.stdout).group(1))
                rows.append((api, rate, cpu, (server_cpu_s() - srv0) / n * 1e6, load))
                srv0, load = server_cpu_s(), os.getloadavg()[0]
            return rows

        # wrk, noisefloor, wrk, noisefloor ...: interleaved so that both see the same
        # background load; the share is taken per pair and the median pair is reported.
        pairs = []
        for k in range(args.repeat):
            w = run_wrk()
            c = run_curl_floor() if args.curl_floor else None
            n = run_nf(k)
            pairs.append((w, n))
            (wrk_rps, wload, wrk_cpu, wrk_srv), (nf_rate, wall, ru, nload, nf_srv) = w, n
            cpu_us = (ru.ru_utime + ru.ru_stime) / draws * 1e6
            print(f"[{k + 1}/{args.repeat}] wrk (-c{args.concurrency}, {args.seconds} s)       : {wrk_rps:9.0f} requests/s"
                  f" ({wrk_cpu:.1f} us wrk CPU, {wrk_srv:.1f} us server CPU per request)   (load average {wload:.2f})")
            for api, rate, cpu, srv, cload in c or []:
                print(f"[{k + 1}/{args.repeat}] bare libcurl multi ({api:6s})   : {rate:9.0f} requests/s ({cpu:.1f} us "
                      f"client CPU, {srv:.1f} us server CPU per request; {100 * rate / wrk_rps:.1f} % of wrk)"
                      f"   (load average {cload:.2f})")
            print(f"[{k + 1}/{args.repeat}] noisefloor run (concurrency {args.concurrency}): {nf_rate:9.0f} draws/s end to "
                  f"end ({draws} draws, each stored once, no API error, {wall:.2f} s, store included)   (load average {nload:.2f})")
            print(f"[{k + 1}/{args.repeat}] client CPU per draw             : {cpu_us:9.1f} us (user "
                  f"{ru.ru_utime / draws * 1e6:.1f} + system {ru.ru_stime / draws * 1e6:.1f}; server {nf_srv:.1f} us per draw;"
                  f" {cpu_us - startup_cpu / draws * 1e6:.1f} us beyond the start-up's CPU)")
            print(f"[{k + 1}/{args.repeat}] noisefloor / wrk                : {100 * nf_rate / wrk_rps:9.1f} %", flush=True)
        shares = sorted(100 * n[0] / w[0] for w, n in pairs)
        cpus = sorted((n[2].ru_utime + n[2].ru_stime) / draws * 1e6 for _, n in pairs)
        print(f"median over {args.repeat}: noisefloor / wrk {shares[len(shares) // 2]:.1f} %, "
              f"client CPU per draw {cpus[len(cpus) // 2]:.1f} us "
              f"({cpus[len(cpus) // 2] - startup_cpu / draws * 1e6:.1f} us beyond the start-up's CPU)")
    finally:
        sim.terminate()
        sim.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
