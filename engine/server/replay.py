"""The same load, sent on the same wall-clock schedule, through an in-process LLMEngine.

It returns what the load client returns (per-request results and a timeline of running, waiting
and KV usage), so a lab page can put the in-process run beside the HTTP one in the same figures.
Here the timeline is read from the engine after every step rather than scraped every 0.5 s.
"""
from __future__ import annotations

import time
from contextlib import contextmanager

import torch

from engine.config import EngineConfig
from engine.core.llm_engine import LLMEngine
from engine.core.request import ServiceClass
from engine.sampling_params import SamplingParams
from engine.server.bench_report import RequestResult, build_report
from engine.server.loadgen import BenchRequest, LoadSpec, send_times


@contextmanager
def torch_threads(n: int | None):
    """Run with n intra-op threads (None: leave as is), as the server process was started with."""
    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run_in_process(loaded, config: EngineConfig, requests: list[BenchRequest], spec: LoadSpec,
                   max_seconds: float = 600.0, num_threads: int | None = None) -> dict:
    with torch_threads(num_threads):
        return _run(loaded, config, requests, spec, max_seconds)


def _run(loaded, config: EngineConfig, requests: list[BenchRequest], spec: LoadSpec, max_seconds: float) -> dict:
    engine = LLMEngine(loaded, config)
    times = send_times(len(requests), spec.request_rate, spec.burstiness, spec.seed)
    order = sorted(range(len(requests)), key=lambda i: times[i])
    sent: dict[str, tuple[int, float]] = {}  # request id -> (index, send time since t0)
    timeline, t0, next_i = [], time.perf_counter(), 0
    while next_i < len(order) or engine.has_unfinished():
        now = time.perf_counter() - t0
        if now > max_seconds:
            raise RuntimeError(f"the in-process run took over {max_seconds:.0f} s")
        while next_i < len(order) and times[order[next_i]] <= now:
            i = order[next_i]
            r = requests[i]
            params = SamplingParams(temperature=spec.temperature, max_tokens=r.max_tokens, ignore_eos=spec.ignore_eos)
            added = engine.add_request(r.prompt, params, priority=r.priority, service=ServiceClass(r.request_class))
            sent[added.request_id] = (i, time.perf_counter() - t0)
            next_i += 1
        if not engine.has_unfinished():
            time.sleep(min(0.01, max(0.0, times[order[next_i]] - now)))
            continue
        engine.step()
        bm, sched = engine.block_manager, engine.scheduler  # read as the server's gauges read them
        timeline.append({"t": time.perf_counter() - t0, "kind": "lab", "running": len(sched.running),
                         "waiting": len(sched.waiting) + len(engine.pending),
                         "kv_usage": 1 - bm.num_free_blocks / bm.num_blocks, "preemptions": None})
    results = [RequestResult(r.request_class) for r in requests]
    offset = (time.perf_counter() - t0) - engine.now()  # the engine stamps times on its own clock
    preemptions = 0
    for rid, (i, start) in sent.items():
        q, res = engine.requests[rid], results[i]
        preemptions += q.num_preemptions
        res.start, res.prompt_len, res.output_tokens = start, q.num_prompt_tokens, q.num_output_tokens
        if q.error or not q.token_times:
            res.error = q.error or "no token"
            continue
        token_times = [t + offset for t in q.token_times]
        res.success = True
        res.token_times = token_times
        res.ttft = token_times[0] - start
        res.itl = [b - a for a, b in zip(token_times, token_times[1:])]
        res.latency = token_times[-1] - start
    duration = max((r.start + r.latency for r in results if r.success), default=0.0)
    report = build_report(results, duration, spec.slos, spec.percentiles)
    return {"model": loaded.name, "num_prompts": len(requests), "request_rate": spec.request_rate, **report,
            "timeline": timeline, "engine_kind": "lab", "preemptions": preemptions,
            "requests": [r.to_dict() for r in results]}
