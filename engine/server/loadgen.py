"""`python -m engine loadgen`: a load client in the shape of `vllm bench serve`.

    python -m engine loadgen --base-url http://127.0.0.1:8000 --workload chat-and-reports \
        --num-prompts 40 --request-rate 4 --max-concurrency 16 --goodput ttft:500 --save-result out.json

Prompts come from the lab's workload presets (their classes, prompt and output lengths); send times
from --request-rate and --burstiness, as vllm bench serve draws them. Streaming, so TTFT and ITL are
measured here at the client. /metrics is scraped every 0.5 s into a timeline (vLLM or SGLang names).
The client is aiohttp, as vllm bench serve's. On the 2-core machine the client shares with the server, httpx took
over twice its CPU for the same 32 streams, and the 32 requests of a burst reached the server's handler over
40-210 ms from the first, against 12-29 ms (bench/serve_overhead.py measures the server through this client).
"""
from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

from engine.server.bench_report import RequestResult, build_report, format_report, parse_goodput
from engine.server.metric_reader import read_metrics

SCRAPE_INTERVAL_S = 0.5
ENDPOINTS = ("/v1/completions", "/v1/chat/completions")


@dataclass
class BenchRequest:
    prompt: str
    max_tokens: int
    request_class: str
    priority: int = 0


@dataclass
class LoadSpec:
    base_url: str
    model: str | None = None  # None: the first model /v1/models lists
    endpoint: str = "/v1/completions"
    request_rate: float = float("inf")
    burstiness: float = 1.0
    max_concurrency: int | None = None
    seed: int = 0
    ignore_eos: bool = True
    temperature: float = 0.0
    slos: dict = field(default_factory=dict)  # goodput: {"ttft": ms, "tpot": ms, "e2el": ms}
    percentiles: tuple = (99,)


def bench_requests(workload_name: str, num_prompts: int | None = None, seed: int = 0) -> list[BenchRequest]:
    """The preset's requests as text: prompt lengths are counted in bytes (the tiny model's tokens)."""
    from engine.models.tokenizer import ByteTokenizer
    from engine.lab.workload import generate, preset

    wl = preset(workload_name)
    total = sum(c.count for c in wl.classes)
    if num_prompts:
        wl = wl.scaled(num_prompts / total)
    tok = ByteTokenizer()
    drawn = generate(wl, tok.encode, seed)[:num_prompts or None]
    return [BenchRequest(tok.decode(r.prompt_token_ids), r.sampling_params.max_tokens, r.request_class, r.priority)
            for r in drawn]


def trace_requests(path: str, num_prompts: int | None = None) -> list[BenchRequest]:
    """A recorded trace's requests, in arrival order: its prompt text where recorded, else its token ids
    read as bytes (right for the byte-level tiny model only)."""
    from engine.models.tokenizer import ByteTokenizer
    from engine.lab.trace import read_trace

    tok = ByteTokenizer()
    reqs = sorted(read_trace(path).requests, key=lambda r: r.arrival_step)[:num_prompts or None]
    return [BenchRequest(r.prompt or tok.decode(r.prompt_token_ids), r.sampling_params.max_tokens, r.request_class,
                         r.priority) for r in reqs]


def send_times(n: int, rate: float, burstiness: float, seed: int) -> list[float]:
    """Seconds after the start: all at 0 for an infinite rate, else gamma gaps (1 = Poisson) of mean 1/rate."""
    if rate == float("inf"):
        return [0.0] * n
    if rate <= 0 or burstiness <= 0:
        raise ValueError("--request-rate and --burstiness must be positive")
    rng, t, out = random.Random(seed), 0.0, []
    for _ in range(n):
        out.append(t)
        t += rng.gammavariate(burstiness, 1 / (rate * burstiness))
    return out


def check_base_url(base_url: str) -> None:
    """An EngineError unless the address is http(s) with a host (aiohttp's own refusal names only the URL)."""
    from urllib.parse import urlsplit

    from engine.messages import EngineError

    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EngineError("loadgen.base_url", value=base_url)


READ_BUFSIZE = 2 ** 20  # the longest line read whole: an SSE chunk holds one step's text, far less


async def discover_model(session, base_url: str) -> str:
    async with session.get(base_url.rstrip("/") + "/v1/models", raise_for_status=True) as r:
        return (await r.json())["data"][0]["id"]


def _payload(req: BenchRequest, spec: LoadSpec, model: str) -> dict:
    body = {"model": model, "max_tokens": req.max_tokens, "temperature": spec.temperature, "stream": True,
            "stream_options": {"include_usage": True}, "ignore_eos": spec.ignore_eos, "priority": req.priority}
    if spec.endpoint == "/v1/chat/completions":
        body["messages"] = [{"role": "user", "content": req.prompt}]
    else:
        body["prompt"] = req.prompt
    return body


async def send_one(session, url: str, body: dict, result: RequestResult, t0: float) -> None:
    start = time.perf_counter()
    result.start = start - t0
    last = start
    try:
        async with session.post(url, json=body) as resp:
            if resp.status != 200:
                text = (await resp.read()).decode(errors="replace")
                result.error = f"HTTP {resp.status}: {text[:200]}"
                return
            async for raw in resp.content:
                line = raw.decode(errors="replace").strip()
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                chunk = json.loads(data)
                if chunk.get("error"):
                    result.error = str(chunk["error"].get("message", chunk["error"]))[:200]
                    return
                if chunk.get("usage"):
                    result.prompt_len = chunk["usage"].get("prompt_tokens", 0)
                    result.output_tokens = chunk["usage"].get("completion_tokens", result.output_tokens)
                choices = chunk.get("choices") or []
                if not choices or not _is_token(choices[0]):
                    continue
                now = time.perf_counter()
                if not result.token_times:
                    result.ttft = now - start
                else:
                    result.itl.append(now - last)
                last = now
                result.token_times.append(now - t0)
                result.output_tokens = max(result.output_tokens, len(result.token_times))
        result.latency = time.perf_counter() - start
        result.success = bool(result.token_times)
        if not result.success:
            result.error = "the stream ended without a token"
    except Exception as e:  # one failed request is a failed request, not a failed benchmark
        result.error = f"{type(e).__name__}: {e}"[:200]


def _is_token(choice: dict) -> bool:
    if "delta" in choice:
        delta = choice["delta"]
        return "content" in delta and not delta.get("role") and (delta["content"] or not choice.get("finish_reason"))
    return bool(choice.get("text")) or not choice.get("finish_reason")


async def scrape(session, base_url: str, t0: float, timeline: list, stop: asyncio.Event, on_sample) -> None:
    import aiohttp

    url = base_url.rstrip("/") + "/metrics"
    while True:
        try:
            async with session.get(url, timeout=aiohttp.ClientTimeout(total=2.0)) as r:
                text = await r.text() if r.status == 200 else None
            if text is not None:
                sample = read_metrics(text)
                sample.t = time.perf_counter() - t0
                timeline.append(sample.to_dict())
                if on_sample:
                    on_sample()
        except Exception:  # a server without /metrics still gets benchmarked
            pass
        if stop.is_set():
            return
        try:
            await asyncio.wait_for(stop.wait(), SCRAPE_INTERVAL_S)
        except asyncio.TimeoutError:
            pass


async def run_load(spec: LoadSpec, requests: list[BenchRequest],
                   on_progress: Callable[[list[RequestResult], list[dict]], None] | None = None,
                   progress_bar: bool = False) -> dict:
    """Send the requests, scrape /metrics meanwhile; returns the report plus everything measured."""
    import aiohttp

    check_base_url(spec.base_url)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, connect=10.0),
                                     connector=aiohttp.TCPConnector(limit=0), read_bufsize=READ_BUFSIZE) as session:
        model = spec.model or await discover_model(session, spec.base_url)
        url = spec.base_url.rstrip("/") + spec.endpoint
        times = send_times(len(requests), spec.request_rate, spec.burstiness, spec.seed)
        results = [RequestResult(r.request_class) for r in requests]
        timeline: list[dict] = []
        gate = asyncio.Semaphore(spec.max_concurrency) if spec.max_concurrency else None
        bar = _bar(len(requests)) if progress_bar else None
        done: list[RequestResult] = []
        t0 = time.perf_counter()

        def report_progress():
            if on_progress:
                on_progress(done, timeline)

        async def one(req: BenchRequest, result: RequestResult, at: float):
            await asyncio.sleep(max(0.0, at - (time.perf_counter() - t0)))
            if gate:
                async with gate:
                    await send_one(session, url, _payload(req, spec, model), result, t0)
            else:
                await send_one(session, url, _payload(req, spec, model), result, t0)
            done.append(result)
            if bar:
                bar.update(1)
            report_progress()

        stop = asyncio.Event()
        scraper = asyncio.create_task(scrape(session, spec.base_url, t0, timeline, stop, report_progress))
        await asyncio.gather(*(one(r, res, at) for r, res, at in zip(requests, results, times)))
        duration = time.perf_counter() - t0
        stop.set()
        await scraper
        if bar:
            bar.close()
    report = build_report(results, duration, spec.slos, spec.percentiles)
    return {"model": model, "base_url": spec.base_url, "endpoint": spec.endpoint,
            "request_rate": spec.request_rate, "burstiness": spec.burstiness, "max_concurrency": spec.max_concurrency,
            "num_prompts": len(requests), **report, "timeline": timeline,
            "engine_kind": next((s["kind"] for s in timeline if s["kind"] != "unknown"), "unknown"),
            "requests": [r.to_dict() for r in results]}


def _bar(total: int):
    from tqdm import tqdm
    return tqdm(total=total, file=sys.stderr, unit="req")


# --- the CLI -----------------------------------------------------------------------------------
def add_loadgen_parser(sub) -> None:
    from engine.lab.workload import PRESETS

    p = sub.add_parser("loadgen", help="load-test an OpenAI-compatible server (the shape of `vllm bench serve`)")
    p.add_argument("--base-url", default="http://127.0.0.1:8000")
    p.add_argument("--endpoint", choices=ENDPOINTS, default="/v1/completions")
    p.add_argument("--model", default=None, help="default: the first model the server lists")
    p.add_argument("--workload", choices=list(PRESETS), default="chat-and-reports")
    p.add_argument("--trace-in", metavar="FILE.jsonl", help="send a recorded trace's requests instead of --workload")
    p.add_argument("--num-prompts", type=int, default=None, help="default: the workload's own count")
    p.add_argument("--request-rate", type=float, default=float("inf"), help="requests/s; inf sends all at once")
    p.add_argument("--burstiness", type=float, default=1.0, help="1 = Poisson; < 1 burstier, > 1 steadier")
    p.add_argument("--max-concurrency", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ignore-eos", action="store_true", help="generate exactly max_tokens (the workload's lengths)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--goodput", nargs="+", metavar="KEY:MS", help="SLOs for goodput, e.g. ttft:500 tpot:50 e2el:5000")
    p.add_argument("--metric-percentiles", default="99", help="comma-separated, e.g. 50,90,99")
    p.add_argument("--save-result", metavar="FILE.json", help="write the report, timeline and every request")
    p.set_defaults(func=cmd_loadgen)


def cmd_loadgen(args) -> int:
    import aiohttp

    try:
        slos = parse_goodput(args.goodput)
        percentiles = tuple(float(p) for p in args.metric_percentiles.split(","))
        spec = LoadSpec(args.base_url, args.model, args.endpoint, args.request_rate, args.burstiness,
                        args.max_concurrency, args.seed, args.ignore_eos, args.temperature, slos, percentiles)
        requests = (trace_requests(args.trace_in, args.num_prompts) if args.trace_in
                    else bench_requests(args.workload, args.num_prompts, args.seed))
        result = asyncio.run(run_load(spec, requests, progress_bar=True))
    except (ValueError, OSError, aiohttp.ClientError) as e:  # TraceError is a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(format_report(result, percentiles))
    kind = result["engine_kind"]
    peak = max((s["running"] or 0 for s in result["timeline"]), default=0)
    print(f"server: {kind} metrics, {len(result['timeline'])} scrapes, peak running {peak:g}")
    if args.save_result:
        with open(args.save_result, "w") as f:
            json.dump(result, f, indent=1)
    return 0 if result["failed"] == 0 else 1
