"""A class that fires a burst at `engine serve` without a concurrency limit (as `vllm bench serve` users do):
1,000 concurrent streaming requests against `--max-waiting 256`. Backpressure, not a restart: the engine core is
never restarted, every answer is either a complete stream (200, ending in [DONE]) or an immediate 503 with
Retry-After, and afterwards nothing is running or waiting and no KV block is held."""
import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests import aio_support
from engine.server.metric_reader import read_metrics
from engine.server.thread import free_port

pytestmark = [pytest.mark.server, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
BURST, MAX_WAITING = 1000, 256


async def stream_one(client: httpx.AsyncClient, url: str, i: int) -> tuple[int, bool, str | None]:
    """(status, a complete stream, Retry-After)."""
    body = {"model": "tiny", "prompt": f"request {i}: once upon a time", "max_tokens": 8, "stream": True,
            "ignore_eos": True}
    async with client.stream("POST", f"{url}/v1/completions", json=body) as r:
        text = "".join([chunk async for chunk in r.aiter_text()])
        return r.status_code, r.status_code == 200 and text.rstrip().endswith("data: [DONE]"), \
            r.headers.get("retry-after")


async def burst(url: str) -> list[tuple[int, bool, str | None]]:
    limits = httpx.Limits(max_connections=BURST, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(300.0)) as client:
        return await asyncio.gather(*(stream_one(client, url, i) for i in range(BURST)))


def test_a_burst_of_a_thousand_streams_gets_answers_or_503s_and_never_restarts_the_core():
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "engine", "serve", "--model", "tiny", "--port", str(port),
                               "--max-num-seqs", "16", "--max-waiting", str(MAX_WAITING)], cwd=ROOT,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        assert "serving tiny on http://127.0.0.1:" in server.stderr.readline()
        answers = aio_support.run(burst(url))
        statuses = {s: sum(1 for a in answers if a[0] == s) for s in {a[0] for a in answers}}
        print(f"\n{BURST} streams: {statuses}")
        assert set(statuses) <= {200, 503}, statuses
        assert all(complete for status, complete, _ in answers if status == 200), "a 200 stream was cut short"
        assert all(retry for status, _, retry in answers if status == 503), "a 503 without Retry-After"
        assert statuses.get(200, 0) >= MAX_WAITING  # everything within the waiting limit is served
        health = httpx.get(f"{url}/health").json()
        assert health["restarts"] == 0 and health["last_failure"] is None, health
        sample = read_metrics(httpx.get(f"{url}/metrics").text)
        assert (sample.running, sample.waiting, sample.kv_usage) == (0, 0, 0)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log = server.stderr.read()
    assert "restarting it" not in log, log[-3000:]
