#!/usr/bin/python3
"""The Python side of bench/http_bench.cc: an httpx asyncio client (Debian's python3-httpx)
sending the same chat/completions requests to the same serve-sim at the same concurrency.

    http_bench_httpx.py URL DRAWS CONCURRENCY  ->  one JSON line on stdout
"""
import asyncio
import json
import resource
import sys
import time

import httpx

SYSTEM = "Answer with the letter of the single best option."
USER = ("A 45-year-old man has crushing chest pain radiating to the left arm. What is the next step?\n"
        "A. Aspirin and an ECG\nB. Discharge home\nC. Oral antibiotics\nD. Abdominal ultrasound\nAnswer:")


def body(i):
    return {"model": "sim-mcq-1", "messages": [{"role": "system", "content": SYSTEM},
                                               {"role": "user", "content": USER}],
            "temperature": 0.7, "top_p": 1.0, "max_tokens": 16, "seed": i}


def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


async def main(url, draws, concurrency):
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=120, trust_env=False) as client:
        for i in range(200):  # warm-up, not measured
            await client.post(url + "/chat/completions", json=body(-1 - i))
        counter = iter(range(draws))
        failed = 0

        async def worker():
            nonlocal failed
            for i in counter:
                r = await client.post(url + "/chat/completions", json=body(i))
                if r.status_code != 200 or not r.json()["choices"][0]["message"]["content"]:
                    failed += 1

        c0, t0 = cpu(), time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall, used = time.perf_counter() - t0, cpu() - c0
    print(json.dumps({"httpx": httpx.__version__, "draws_per_s": draws / wall,
                      "cpu_us_per_draw": 1e6 * used / draws, "failed": failed}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
