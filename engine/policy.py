"""Queue policies: who is admitted first, who gets the token budget first, who is preempted first.

A policy is one sort key: smaller is served earlier and evicted later. A `preemptive` policy
also lets a waiting request evict running work that its key outranks, when slots or blocks are
full (vLLM's priority scheduling cannot do this once max_num_seqs is reached).
"""
from __future__ import annotations

import math

from engine.request import Request

CLASS_PRIORITY = {"interactive": 0, "standard": 1, "batch": 2}  # lower runs first, as in vLLM


class Policy:
    name = "base"
    preemptive = False

    def key(self, request: Request, step: int) -> tuple:
        raise NotImplementedError

    def order(self, requests: list[Request], step: int) -> list[Request]:
        return sorted(requests, key=lambda r: self.key(r, step))

    def victim(self, candidates: list[Request], step: int) -> Request:
        """Who gives up its cache when memory runs out: the one this policy serves last."""
        return max(candidates, key=lambda r: self.key(r, step))


class FCFS(Policy):
    """First come, first served: arrival order (vLLM's default)."""

    name = "fcfs"

    def key(self, request: Request, step: int) -> tuple:
        return (request.arrival_step, request.seq_no)


class SJF(Policy):
    """Shortest job first, by what the request declares: prompt length + max_tokens."""

    name = "sjf"

    def key(self, request: Request, step: int) -> tuple:
        return (request.max_total_tokens, request.arrival_step, request.seq_no)


class PriorityWithAging(Policy):
    """Priority classes, lower first; every `aging_steps` of waiting lifts a request one class,
    so a batch job's wait is bounded however many interactive requests keep coming."""

    name = "priority"
    preemptive = True

    def __init__(self, aging_steps: int = 100):
        self.aging_steps = aging_steps

    def effective_priority(self, request: Request, step: int) -> int:
        waited = max(0, step - request.arrival_step)
        return max(0, request.priority - waited // self.aging_steps)

    def key(self, request: Request, step: int) -> tuple:
        return (self.effective_priority(request, step), request.arrival_step, request.seq_no)


class EDF(Policy):
    """Earliest deadline first: before its first token a request's deadline is its TTFT SLO,
    afterwards its end-to-end latency SLO; requests without an SLO come after those with one."""

    name = "edf"
    preemptive = True

    @staticmethod
    def deadline(request: Request) -> float:
        slo = request.slo
        if request.first_token_step is None and slo.ttft_steps is not None:
            return request.arrival_step + slo.ttft_steps
        if slo.latency_steps is not None:
            return request.arrival_step + slo.latency_steps
        return math.inf

    def key(self, request: Request, step: int) -> tuple:
        return (self.deadline(request), request.arrival_step, request.seq_no)


POLICIES = {"fcfs": FCFS, "sjf": SJF, "priority": PriorityWithAging, "edf": EDF}


def make_policy(name: str, aging_steps: int = 100) -> Policy:
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}: choose one of {', '.join(POLICIES)}")
    return PriorityWithAging(aging_steps) if name == "priority" else POLICIES[name]()
