"""The soak: random workloads on random engine knobs, with the block accounting checked after every step.

One `SoakCase` is a workload (prompts sharing prefixes, lengths, arrivals, priorities, SLOs) on
one engine configuration (either batcher, any policy, either layout, swap or recompute, prefix
caching on or off, chunked prefill, caches small enough to force preemption), plus aborts at
random steps. `run_case` steps it to the end and returns every broken invariant it saw:
- the block manager's own books (ref counts = block tables, no block free and owned, none lost);
- a block held by two requests only through the prefix cache;
- the CPU swap pool balances against the swapped-out requests' `cpu_block_table`s;
- only running requests hold device blocks, only queued ones hold swap blocks;
- every request ends exactly once (finished, rejected or aborted), and at the end all memory is free;
- optionally, greedy tokens equal a no-cache recompute of the same prompt (the oracle).
`bench/soak.py` runs thousands of cases; a hypothesis slice of the same code runs in the tests.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import torch

from engine.config import POLICIES, EngineConfig
from engine.core.llm_engine import LLMEngine
from engine.models.loaded import LoadedModel
from engine.core.request import SLO, FinishReason, ServiceClass
from engine.sampling_params import SamplingParams


@dataclass
class SoakRequest:
    prompt_token_ids: list[int]
    max_tokens: int
    arrival_step: int = 0
    priority: int = 0
    slo: SLO = field(default_factory=SLO)


@dataclass
class SoakCase:
    config: EngineConfig
    requests: list[SoakRequest]
    abort_rate: float = 0.0  # chance per step that one unfinished request is aborted
    seed: int = 0  # drives the aborts
    check_oracle: bool = False


@dataclass
class SoakResult:
    steps: int = 0
    aborts: int = 0
    preemptions: int = 0
    rejected: int = 0
    swapped_blocks: int = 0
    cached_tokens: int = 0
    oracle_checked: int = 0
    violations: list[str] = field(default_factory=list)


def random_case(rng: random.Random, vocab_size: int, oracle: bool = False) -> SoakCase:
    """A random workload on random knobs; small caches on purpose, so that preemption happens."""
    block_size = rng.choice([1, 2, 4, 8, 16])
    chunked = rng.random() < 0.8
    max_model_len = rng.choice([32, 64, 128])
    config = EngineConfig(
        block_size=block_size, num_blocks=max(2, rng.randint(12, 160) // block_size), max_num_seqs=rng.randint(1, 6),
        max_num_batched_tokens=rng.randint(4, 64) if chunked else max_model_len, max_model_len=max_model_len,
        batcher=rng.choice(["continuous", "continuous", "static"]), policy=rng.choice(POLICIES),
        kv_layout=rng.choice(["paged", "paged", "contiguous"]), preemption_mode=rng.choice(["recompute", "swap"]),
        enable_chunked_prefill=chunked, long_prefill_token_threshold=rng.choice([0, 0, 3, 8]),
        enable_prefix_caching=rng.random() < 0.5, max_wait_steps=rng.choice([0, 0, 2]),
        contiguous_reserve=rng.choice(["max_tokens", "max_model_len"]), num_swap_blocks=rng.choice([None, 0, 4, 16]),
        priority_aging_steps=rng.choice([1, 5, 100]))
    stems = [[rng.randrange(3, vocab_size) for _ in range(rng.randint(0, 24))] for _ in range(2)]
    requests = []
    for _ in range(rng.randint(1, 10)):
        own = [rng.randrange(3, vocab_size) for _ in range(rng.randint(1, 16))]
        prompt = rng.choice(stems)[:rng.randint(0, 24)] + own
        slo = SLO(ttft_steps=rng.choice([None, 3, 10]), latency_steps=rng.choice([None, 20, 60]))
        requests.append(SoakRequest(prompt, rng.randint(1, 30), rng.randint(0, 6), rng.randint(0, 2), slo))
    return SoakCase(config, requests, abort_rate=rng.choice([0.0, 0.0, 0.03, 0.1]), seed=rng.randrange(2**31),
                    check_oracle=oracle)


def check_step(engine: LLMEngine) -> list[str]:
    """Every accounting invariant of the engine as it stands between two steps."""
    bad = []
    bm, sched = engine.block_manager, engine.scheduler
    try:
        bm.check_invariants()
    except AssertionError as e:
        bad.append(f"block manager: {e}")
    running = {r.request_id for r in sched.running}
    holding = {rid for rid, r in bm.holders.items() if r.block_table}
    if not holding <= running:
        bad.append(f"requests hold device blocks without running: {sorted(holding - running)}")
    counts = Counter(b for r in bm.holders.values() for b in r.block_table)
    cached = bm.block_views().cached
    for block_id, n in counts.items():
        if n > 1 and not cached[block_id]:
            bad.append(f"block {block_id} is owned by {n} requests but is not a prefix-cache block")
    swap_tables = [b for r in sched.waiting for b in r.cpu_block_table]
    if len(swap_tables) != len(set(swap_tables)):
        bad.append("a swap block is in two cpu_block_tables")
    if bm.swap_pool.num_free + len(swap_tables) != bm.swap_pool.num_blocks:
        bad.append(f"swap pool does not balance: {bm.swap_pool.num_free} free + {len(swap_tables)} held "
                   f"!= {bm.swap_pool.num_blocks}")
    if any(r.cpu_block_table for r in sched.running):
        bad.append("a running request still holds swap blocks")
    for r in engine.requests.values():
        if r.is_finished and (r.block_table or r.cpu_block_table):
            bad.append(f"finished request {r.request_id} still holds blocks")
    return bad


def greedy_oracle(model, prompt_ids: list[int], max_tokens: int) -> list[int]:
    """No cache at all: the whole sequence again for every new token."""
    ids, out = list(prompt_ids), []
    with torch.inference_mode():
        for _ in range(max_tokens):
            token = int(model.forward_dense(torch.tensor([ids]))[0, -1].argmax())
            out.append(token)
            ids.append(token)
    return out


def run_case(loaded: LoadedModel, case: SoakCase, max_steps: int = 5_000) -> SoakResult:
    result = SoakResult()
    rng = random.Random(case.seed)
    engine = LLMEngine(loaded, case.config)
    requests = [engine.add_request(r.prompt_token_ids, SamplingParams(temperature=0.0, max_tokens=r.max_tokens,
                                                                      ignore_eos=True),
                                   arrival_step=r.arrival_step, priority=r.priority, service=ServiceClass(slo=r.slo))
                for r in case.requests]
    ended: Counter[str] = Counter()
    try:
        while engine.has_unfinished() and result.steps < max_steps:
            if case.abort_rate and rng.random() < case.abort_rate:
                live = [r for r in requests if not r.is_finished]
                if live:
                    engine.abort(rng.choice(live).request_id)
            snap = engine.step()
            result.steps += 1
            ended.update([*snap.finished, *snap.rejected, *snap.aborted])
            result.aborts += len(snap.aborted)
            result.preemptions += len(snap.preempted)
            result.rejected += len(snap.rejected)
            result.swapped_blocks += snap.blocks_swapped_out
            if sum(1 for s in snap.slots if s) > case.config.max_num_seqs:
                result.violations.append(f"step {snap.step}: more requests than max_num_seqs")
            if snap.num_prefill_tokens + snap.num_decode_tokens > case.config.max_num_batched_tokens:
                result.violations.append(f"step {snap.step}: over the token budget")
            result.violations += [f"step {snap.step}: {v}" for v in check_step(engine)]
    except Exception as e:
        result.violations.append(f"step {result.steps}: the engine raised {type(e).__name__}: {e}")
        return result
    if engine.has_unfinished():
        result.violations.append(f"not finished after {max_steps} steps")
    bm = engine.block_manager
    if bm.num_free_blocks != bm.num_blocks or bm.swap_pool.num_free != bm.swap_pool.num_blocks:
        result.violations.append("memory not all free at the end")
    for r in requests:
        if ended[r.request_id] != 1 or not r.is_finished:
            result.violations.append(f"{r.request_id} ended {ended[r.request_id]} times")
        elif r.finish_reason == FinishReason.LENGTH and r.num_output_tokens != r.sampling_params.max_tokens \
                and r.num_tokens < case.config.max_model_len:
            result.violations.append(f"{r.request_id} stopped at {r.num_output_tokens} of "
                                     f"{r.sampling_params.max_tokens} tokens")
        result.cached_tokens += r.num_cached_tokens
    if case.check_oracle:
        for r in requests:
            if r.num_output_tokens:
                result.oracle_checked += 1
                if r.output_token_ids != greedy_oracle(loaded.model, r.prompt_token_ids, r.num_output_tokens):
                    result.violations.append(f"{r.request_id}: greedy tokens differ from a no-cache recompute")
    return result
