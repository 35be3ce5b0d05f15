"""What the HTTP server costs: the same workload through LLM.generate and through `python -m engine serve`
driven by `python -m engine loadgen`'s client, in one run.

    python bench/serve_overhead.py [--model tiny] [--workload uniform] [--num-prompts 32] [--max-num-seqs 8]

Prints output tokens/s of each path and their ratio (goal: the server keeps >= 90 % on the tiny model).
Every request is sent at once (request rate inf) and ignores EOS, so both paths generate exactly the
same tokens with the same batch limits, and both engines keep step counters, not cache pictures. The
server runs as it would in use: its API process, and the engine core in a process of its own.
Both run torch on one thread: on a shared 2-core machine two OpenMP threads per process make
small matrix products up to 20x slower, which would swamp what is being measured. The two paths
take turns, ten each (--repeats), so a busy neighbour slows both alike. Two ratios: of the two bests, and the
median of each turn's own ratio (the two runs of a turn are a couple of seconds apart, so a host that slows
down for half a minute slows both runs of the turns it spans: the paired median is the steadier of the two).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["OMP_NUM_THREADS"] = "1"  # before torch loads: the same threading as the server process

import torch  # noqa: E402

from engine import LLM, SamplingParams  # noqa: E402
from engine.server.loadgen import LoadSpec, run_load, bench_requests  # noqa: E402
from engine.server.thread import free_port  # noqa: E402

REPEATS = 10  # a neighbour on a shared host slows single runs by up to a third: the best of ten is steadier


def offline_run(llm: LLM, requests) -> float:
    params = [SamplingParams(temperature=0.0, max_tokens=r.max_tokens, ignore_eos=True) for r in requests]
    start = time.perf_counter()
    outputs = llm.generate([r.prompt for r in requests], params)
    return sum(len(o.token_ids) for o in outputs) / (time.perf_counter() - start)


def http_run(url: str, requests) -> float:
    result = asyncio.run(run_load(LoadSpec(url, ignore_eos=True), requests))
    if result["failed"]:
        raise SystemExit(f"{result['failed']} requests failed: {result.get('errors')}")
    return result["output_throughput"]


def start_server(model: str, max_num_seqs: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "engine", "serve", "--model", model, "--port", str(port),
                               "--max-num-seqs", str(max_num_seqs)], cwd=ROOT,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            urllib.request.urlopen(url + "/health", timeout=1)
            return server, url
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the server did not come up")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="tiny")
    p.add_argument("--workload", default="uniform")
    p.add_argument("--num-prompts", type=int, default=32)
    p.add_argument("--max-num-seqs", type=int, default=8)
    p.add_argument("--repeats", type=int, default=REPEATS, help="turns each path takes (its best is compared)")
    args = p.parse_args()
    torch.set_num_threads(1)
    requests = bench_requests(args.workload, args.num_prompts, seed=0)
    print(f"{args.model}, workload {args.workload}: {len(requests)} requests, "
          f"{sum(r.max_tokens for r in requests)} output tokens, max_num_seqs {args.max_num_seqs}")
    llm = LLM(args.model, snapshots=False, max_num_seqs=args.max_num_seqs)  # counters only, as the server
    server, url = start_server(args.model, args.max_num_seqs)
    try:
        offline_run(llm, requests[:2]), http_run(url, requests[:2])  # warm-up: first calls pay one-time costs
        direct, http = [], []
        for turn in range(args.repeats):  # which path goes first alternates: neither always follows a quiet spell
            if turn % 2:
                http.append(http_run(url, requests))
                direct.append(offline_run(llm, requests))
            else:
                direct.append(offline_run(llm, requests))
                http.append(http_run(url, requests))
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"LLM.generate:             {max(direct):8.1f} output tok/s  (runs: {', '.join(f'{x:.0f}' for x in direct)})")
    print(f"HTTP server + loadgen:    {max(http):8.1f} output tok/s  (runs: {', '.join(f'{x:.0f}' for x in http)})")
    print(f"ratio (server / offline): {max(http) / max(direct):.1%} of the bests, "
          f"{statistics.median(h / d for h, d in zip(http, direct)):.1%} the median of the turns' own")


if __name__ == "__main__":
    main()
