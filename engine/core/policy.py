"""Queue policies: who is admitted first, who gets the token budget first, who is preempted first.

A policy is one sort key, (urgency, arrival, seq_no): smaller is served earlier and evicted
later. A `preemptive` policy also lets a waiting request evict running work of strictly lower
urgency when slots or blocks are full (vLLM's priority scheduling cannot do this once
max_num_seqs is reached); arrival order alone never evicts anyone, or equals would thrash.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from engine.config import POLICIES, EngineConfig

if TYPE_CHECKING:  # annotations only: the scheduler hands the policy its requests
    from engine.core.request import Request

AGING_STEPS = EngineConfig.priority_aging_steps  # the default lives with the engine's other settings


class Policy:
    name = "base"
    preemptive = False

    def urgency(self, request: Request, step: int) -> float:
        return 0

    def key(self, request: Request, step: int) -> tuple:
        return (self.urgency(request, step), request.arrival_step, request.seq_no)

    def outranks(self, request: Request, other: Request, step: int) -> bool:
        return self.urgency(request, step) < self.urgency(other, step)

    def order(self, requests: list[Request], step: int) -> list[Request]:
        return sorted(requests, key=lambda r: self.key(r, step))

    def victim(self, candidates: list[Request], step: int) -> Request:
        """Who gives up its cache when memory runs out: the one this policy serves last."""
        return max(candidates, key=lambda r: self.key(r, step))


class FCFS(Policy):
    """First come, first served: arrival order (vLLM's default)."""

    name = "fcfs"


class SJF(Policy):
    """Shortest job first, by what the request declares: prompt length + max_tokens."""

    name = "sjf"

    def urgency(self, request: Request, step: int) -> float:
        return request.max_total_tokens


class PriorityWithAging(Policy):
    """Priority classes, lower first; every `aging_steps` of waiting lifts a request one class,
    so a batch job's wait is bounded however many interactive requests keep coming."""

    name = "priority"
    preemptive = True

    def __init__(self, aging_steps: int = AGING_STEPS):
        self.aging_steps = aging_steps

    def urgency(self, request: Request, step: int) -> float:
        """The effective priority class after aging."""
        waited = max(0, step - request.arrival_step)
        return max(0, request.priority - waited // self.aging_steps)


class EDF(Policy):
    """Earliest deadline first: before its first token a request's deadline is its TTFT SLO,
    afterwards its end-to-end latency SLO if it has one. A request with only a TTFT SLO keeps
    that deadline to the end, so it is not evicted mid-answer by the next arrival; requests
    without an SLO come after those with one."""

    name = "edf"
    preemptive = True

    @staticmethod
    def deadline(request: Request) -> float:
        slo = request.slo
        if slo.ttft_steps is not None and (request.first_token_step is None or slo.latency_steps is None):
            return request.arrival_step + slo.ttft_steps
        if slo.latency_steps is not None:
            return request.arrival_step + slo.latency_steps
        return math.inf

    def urgency(self, request: Request, step: int) -> float:
        return self.deadline(request)


POLICY_CLASSES = (FCFS, SJF, PriorityWithAging, EDF)
if tuple(cls.name for cls in POLICY_CLASSES) != POLICIES:
    raise ImportError(f"engine.config.POLICIES {POLICIES} and the policy classes here disagree")


def make_policy(name: str, aging_steps: int = AGING_STEPS) -> Policy:
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}: choose one of {', '.join(POLICIES)}")
    cls = POLICY_CLASSES[POLICIES.index(name)]
    return cls(aging_steps) if cls is PriorityWithAging else cls()
