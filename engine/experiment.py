"""Run a workload through a real engine and keep everything it did: requests, snapshots, metrics."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from engine.config import EngineConfig
from engine.llm_engine import LLMEngine
from engine.loader import LoadedModel
from engine.metrics import summarize
from engine.request import Request
from engine.snapshot import StepSnapshot
from engine.trace import TraceRequest
from engine.workload import Workload, generate


@dataclass
class RunResult:
    config: EngineConfig
    requests: list[Request]
    trace_requests: list[TraceRequest]
    snapshots: list[StepSnapshot]
    summary: dict


def engine_config_for(workload: Workload | None, **overrides) -> EngineConfig:
    """The workload's suggested settings, then the caller's (None means: keep the default)."""
    settings = dict(workload.engine_hints) if workload else {}
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return EngineConfig(**settings)


def workload_requests(loaded: LoadedModel, workload: Workload, seed: int) -> list[TraceRequest]:
    tok = loaded.tokenizer
    bos = tok.bos_token_id if getattr(tok, "add_bos", False) else None
    return generate(workload, tok.encode, seed, bos)


def run_requests(loaded: LoadedModel, trace_requests: list[TraceRequest], config: EngineConfig,
                 on_step: Callable[[StepSnapshot], None] | None = None, max_steps: int = 100_000) -> RunResult:
    engine = LLMEngine(loaded, config)
    requests = [engine.add_request(r.prompt_token_ids, r.sampling_params, request_id=r.request_id,
                                   arrival_step=r.arrival_step, request_class=r.request_class,
                                   priority=r.priority, slo=r.slo) for r in trace_requests]
    snapshots = engine.run_until_done(on_step, max_steps)
    summary = summarize(requests, snapshots, config.max_num_seqs, config.max_num_batched_tokens)
    return RunResult(engine.config, requests, trace_requests, snapshots, summary)


def run_workload(loaded: LoadedModel, workload: Workload, config: EngineConfig, seed: int = 0,
                 on_step: Callable[[StepSnapshot], None] | None = None) -> RunResult:
    return run_requests(loaded, workload_requests(loaded, workload, seed), config, on_step)
