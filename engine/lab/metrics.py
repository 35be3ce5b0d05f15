"""Metrics from recorded requests and step snapshots: the four axes a policy is judged on.

Throughput (tokens/s, tokens/step), latency (queueing, TTFT, TPOT, end to end; wall seconds and
engine steps; p50/p90/p95/p99 per class and per length bucket), memory (the vLLM paper's split of
KV slots) and fairness (Jain's index over per-request slowdown), plus SLO goodput, slot use and
preemption costs. Step-based figures are exactly reproducible for a seed; seconds are measured.

Counting steps: a request served in the step it arrives has queue 0 and TTFT 1 step.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING

from engine.config import cdiv

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.core.request import Request
    from engine.core.snapshot import StepSnapshot


LATENCIES = ("queue_steps", "ttft_steps", "tpot_steps", "e2e_steps", "queue_s", "ttft_s", "tpot_s", "e2e_s")
LENGTH_BUCKETS = ((64, "short (<=64 tokens)"), (256, "medium (65-256)"), (math.inf, "long (>256)"))


def _diff(a, b, plus: int = 0):
    return None if a is None or b is None else a - b + plus


def length_bucket(total_tokens: int) -> str:
    return next(name for limit, name in LENGTH_BUCKETS if total_tokens <= limit)


def ideal_steps(num_prompt_tokens: int, num_output_tokens: int, max_num_batched_tokens: int) -> int:
    """Steps the request would take alone: its prefill chunks, then one step per further token."""
    return cdiv(num_prompt_tokens, max_num_batched_tokens) + max(0, num_output_tokens - 1)


def slo_met(r: Request) -> bool | None:
    """None when the request has no SLO."""
    slo, checks = r.slo, []
    if slo.ttft_steps is not None:
        checks.append(r.first_token_step is not None and r.first_token_step - r.arrival_step + 1 <= slo.ttft_steps)
    if slo.ttft_s is not None:
        checks.append(r.first_token_time is not None and r.first_token_time - r.arrival_time <= slo.ttft_s)
    if slo.latency_steps is not None:
        checks.append(r.finish_step is not None and r.finish_step - r.arrival_step + 1 <= slo.latency_steps)
    return all(checks) if checks else None


def request_metrics(r: Request, max_num_batched_tokens: int | None = None) -> dict:
    """One request's latencies, in engine steps and in wall seconds."""
    n_out = r.num_output_tokens
    done = r.finish_reason is not None and r.finish_reason.value in ("stop", "length")
    tpot_s = tpot_steps = None
    if n_out > 1 and done:
        tpot_s = (r.token_times[-1] - r.first_token_time) / (n_out - 1)
        tpot_steps = (r.token_steps[-1] - r.first_token_step) / (n_out - 1)
    m = {
        "request_id": r.request_id, "request_class": r.request_class, "priority": r.priority,
        "num_prompt_tokens": r.num_prompt_tokens, "num_output_tokens": n_out,
        "length_bucket": length_bucket(r.max_total_tokens),
        "finish_reason": r.finish_reason.value if r.finish_reason else None, "error": r.error,
        "arrival_step": r.arrival_step, "first_scheduled_step": r.first_scheduled_step,
        "first_token_step": r.first_token_step, "finish_step": r.finish_step,
        "queue_steps": _diff(r.first_scheduled_step, r.arrival_step),
        "ttft_steps": _diff(r.first_token_step, r.arrival_step, 1),
        "tpot_steps": tpot_steps,
        "e2e_steps": _diff(r.finish_step, r.arrival_step, 1) if done else None,
        "queue_s": _diff(r.first_scheduled_time, r.arrival_time),
        "ttft_s": _diff(r.first_token_time, r.arrival_time),
        "tpot_s": tpot_s,
        "e2e_s": _diff(r.finish_time, r.arrival_time) if done else None,
        "itl_s": [b - a for a, b in zip(r.token_times, r.token_times[1:])],
        "num_preemptions": r.num_preemptions, "num_recomputed_tokens": r.num_recomputed_tokens,
        "num_cached_tokens": r.num_cached_tokens, "slo_met": slo_met(r),
    }
    if max_num_batched_tokens and m["e2e_steps"]:
        m["slowdown"] = m["e2e_steps"] / max(1, ideal_steps(r.num_prompt_tokens, n_out, max_num_batched_tokens))
    return m


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100), None for no values."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    pos = (len(values) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def distribution(values: list[float]) -> dict:
    present = [v for v in values if v is not None]
    return {"n": len(present), "mean": sum(present) / len(present) if present else None,
            "p50": percentile(present, 50), "p90": percentile(present, 90), "p95": percentile(present, 95),
            "p99": percentile(present, 99), "max": max(present, default=None)}


def jain_index(values: list[float]) -> float | None:
    """(sum x)^2 / (n * sum x^2): 1 when everyone is treated alike, 1/n when one gets everything."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def kv_split(snapshot: StepSnapshot, final_tokens: dict[str, int]) -> dict[str, int]:
    """The vLLM paper's split of KV memory at one step, in token slots.

    token_states: slots holding a token's K/V. reserved: allocated, empty, and its request will
    fill it later. internal_fragmentation: allocated, and its request will never fill it.
    external_fragmentation: free, but outside the largest free run (contiguous layout only:
    no request bigger than that run can use it). free: the rest. Shared prefix blocks count once.
    `final_tokens` (request id -> prompt + output tokens at the end) tells what is filled later.
    """
    bs = snapshot.block_size
    tokens = reserved = internal = 0
    for rid, table in snapshot.block_tables.items():
        view = snapshot.requests.get(rid)
        now = view.num_computed_tokens if view else sum(snapshot.block_fill[b] for b in table)
        capacity = len(table) * bs
        final = final_tokens.get(rid, (view.num_prompt_tokens + view.max_tokens) if view else now)
        later = max(0, min(final, capacity) - now)
        tokens += now
        reserved += later
        internal += capacity - now - later
    shared = sum((refs - 1) * bs for refs in snapshot.block_ref_count if refs > 1)
    tokens -= shared  # a shared block's slots were counted once per holder
    runs = free_runs(snapshot.block_ref_count)
    external = (sum(runs) - max(runs, default=0)) * bs if snapshot.kv_layout == "contiguous" else 0
    total = snapshot.num_blocks * bs
    free = sum(runs) * bs - external
    return {"token_states": tokens, "reserved": reserved, "internal_fragmentation": internal,
            "external_fragmentation": external, "free": free, "total": total, "shared_saved": shared}


def free_runs(ref_counts) -> list[int]:
    """Lengths of the runs of consecutive free blocks."""
    runs, run = [], 0
    for refs in list(ref_counts) + [1]:
        if refs == 0:
            run += 1
        elif run:
            runs.append(run)
            run = 0
    return runs


def final_token_counts(snapshots: list[StepSnapshot]) -> dict[str, int]:
    """Each request's final length (prompt + output) as the run recorded it."""
    final = {}
    for s in snapshots:
        for rid, v in s.requests.items():
            final[rid] = v.num_prompt_tokens + v.num_output_tokens
    return final


def kv_timeline(snapshots: list[StepSnapshot]) -> list[dict]:
    final = final_token_counts(snapshots)
    return [kv_split(s, final) for s in snapshots]


def summarize(requests: list[Request], snapshots: list[StepSnapshot], max_num_seqs: int,
              max_num_batched_tokens: int) -> dict:
    """Every aggregate figure of a run, JSON-ready."""
    per_request = [request_metrics(r, max_num_batched_tokens) for r in requests]
    served = [m for m in per_request if m["e2e_steps"] is not None]
    steps = len(snapshots)
    wall = sum(s.step_time_s for s in snapshots)
    out_tokens = sum(m["num_output_tokens"] for m in served)
    processed = sum(s.num_prefill_tokens + s.num_decode_tokens for s in snapshots)

    def latencies(rows):
        d = {k: distribution([m[k] for m in rows]) for k in LATENCIES}
        d["itl_s"] = distribution([x for m in rows for x in m["itl_s"]])
        d["slowdown"] = distribution([m.get("slowdown") for m in rows])  # e2e over the request's time alone
        with_slo = [m["slo_met"] for m in rows if m["slo_met"] is not None]
        d["slo_attainment"] = sum(with_slo) / len(with_slo) if with_slo else None
        d["num_requests"] = len(rows)
        return d

    by_class, by_bucket = defaultdict(list), defaultdict(list)
    for m in per_request:
        by_class[m["request_class"]].append(m)
        by_bucket[m["length_bucket"]].append(m)
    timeline = kv_timeline(snapshots)
    slots_total = sum(t["total"] for t in timeline)
    kv_mean = {k: sum(t[k] for t in timeline) / slots_total if slots_total else 0.0
               for k in ("token_states", "reserved", "internal_fragmentation", "external_fragmentation", "free")}
    used = [1 - (t["free"] + t["external_fragmentation"]) / t["total"] for t in timeline]
    held = sum(t["token_states"] + t["reserved"] + t["internal_fragmentation"] + t["external_fragmentation"]
               for t in timeline)
    met = [m for m in per_request if m["slo_met"]]
    return {
        "num_requests": len(per_request),
        "num_finished": len(served),
        "num_rejected": sum(1 for m in per_request if m["finish_reason"] == "rejected"),
        "num_aborted": sum(1 for m in per_request if m["finish_reason"] == "aborted"),
        "steps": steps,
        "wall_s": wall,
        "output_tokens": out_tokens,
        "throughput_tok_per_s": out_tokens / wall if wall else None,
        "throughput_tok_per_step": out_tokens / steps if steps else None,
        "processed_tok_per_step": processed / steps if steps else None,
        "goodput_requests": len(met),
        "goodput_req_per_s": len(met) / wall if wall else None,
        "latency": latencies(per_request),
        "by_class": {k: latencies(v) for k, v in sorted(by_class.items())},
        "by_length": {k: latencies(v) for k, v in sorted(by_bucket.items())},
        "slot_utilisation": (sum(sum(1 for x in s.slots if x) for s in snapshots) / (steps * max_num_seqs)
                             if steps else 0),
        "kv_mean_share": kv_mean,
        "kv_peak_used_share": max(used, default=0.0),
        # the paper's figure: of the memory a layout ties up, the share not holding token states
        "kv_waste_share": 1 - sum(t["token_states"] for t in timeline) / held if held else 0.0,
        "fairness_jain": jain_index([m.get("slowdown") for m in served]),
        "preemptions": sum(len(s.preempted) for s in snapshots),
        "recomputed_tokens": sum(m["num_recomputed_tokens"] for m in per_request),
        "blocks_swapped": sum(s.blocks_swapped_out for s in snapshots),
        "prefix_cached_tokens": sum(m["num_cached_tokens"] for m in per_request),
        "max_concurrent": max((sum(1 for x in s.slots if x) for s in snapshots), default=0),
        "admissions_refused_by_fragmentation": sum(1 for s in snapshots for why in s.blocked.values()
                                                   if why == "fragmentation"),
    }
