"""Metrics computed from recorded requests (and, for memory and slots, from step snapshots)."""
from __future__ import annotations

from engine.request import Request


def _diff(a, b):
    return None if a is None or b is None else a - b


def request_metrics(r: Request) -> dict:
    """One request's latencies, in engine steps and in wall seconds."""
    n_out = r.num_output_tokens
    tpot_s = None
    if n_out > 1 and r.finish_time is not None:
        tpot_s = (r.token_times[-1] - r.first_token_time) / (n_out - 1)
    return {
        "request_id": r.request_id, "request_class": r.request_class, "priority": r.priority,
        "num_prompt_tokens": r.num_prompt_tokens, "num_output_tokens": n_out,
        "finish_reason": r.finish_reason.value if r.finish_reason else None,
        "arrival_step": r.arrival_step, "first_scheduled_step": r.first_scheduled_step,
        "first_token_step": r.first_token_step, "finish_step": r.finish_step,
        "queue_steps": _diff(r.first_scheduled_step, r.arrival_step),
        "ttft_steps": _diff(r.first_token_step, r.arrival_step),
        "e2e_steps": _diff(r.finish_step, r.arrival_step),
        "queue_s": _diff(r.first_scheduled_time, r.arrival_time),
        "ttft_s": _diff(r.first_token_time, r.arrival_time),
        "e2e_s": _diff(r.finish_time, r.arrival_time),
        "tpot_s": tpot_s,
        "num_preemptions": r.num_preemptions, "num_recomputed_tokens": r.num_recomputed_tokens,
    }
