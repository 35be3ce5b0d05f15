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
from engine.policy_key import FIELDS, CompiledKey, PolicyKeyError, compile_key

if TYPE_CHECKING:  # annotations only: the scheduler hands the policy its requests
    from engine.core.request import Request

AGING_STEPS = EngineConfig.priority_aging_steps  # the default lives with the engine's other settings


class Policy:
    name = "base"
    preemptive = False

    def urgency(self, request: Request, step: int) -> float:
        return 0

    def begin_step(self, requests: list[Request], step: int) -> None:
        """Called before the scheduler touches anything in a step (a key policy evaluates its keys here)."""

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


# What a key's fields are for one request at one step (engine/policy_key.py lists them; the page explains them).
FIELD_GETTERS = {
    "waited": lambda r, step: max(0, step - r.arrival_step),
    "arrival_step": lambda r, step: r.arrival_step,
    "step": lambda r, step: step,
    "num_prompt_tokens": lambda r, step: r.num_prompt_tokens,
    "num_output_tokens": lambda r, step: r.num_output_tokens,
    "max_tokens": lambda r, step: r.sampling_params.max_tokens,
    "tokens_left": lambda r, step: r.sampling_params.max_tokens - r.num_output_tokens,
    "request_class": lambda r, step: r.request_class,
    "priority": lambda r, step: r.priority,
    "ttft_slo": lambda r, step: math.inf if r.slo.ttft_steps is None else r.slo.ttft_steps,
    "deadline": lambda r, step: EDF.deadline(r),
    "num_preemptions": lambda r, step: r.num_preemptions,
}
if tuple(FIELD_GETTERS) != FIELDS:
    raise ImportError("engine.policy_key.FIELDS and the field getters here disagree")


class KeyPolicy(Policy):
    """A student's policy: their key orders the queue (lower first), their victim key (highest first, the same
    key when there is none) picks who is preempted. Every request's keys are evaluated once, at the start of a
    step, before the scheduler changes anything: a key that fails stops the step with nothing half-done."""

    name = "key"

    def __init__(self, text: str, victim_text: str | None = None, preemptive: bool = False,
                 budget_ops: int = EngineConfig.policy_key_budget_ops):
        self.order_key: CompiledKey = compile_key(text)
        self.victim_key: CompiledKey | None = compile_key(victim_text) if victim_text else None
        self.preemptive = preemptive
        self.budget_ops = budget_ops
        keys = [key for key in (self.order_key, self.victim_key) if key is not None]
        # one request's work: the fields read, then each key's parts (policy_key.CompiledKey.cost)
        self.cost = len({name for key in keys for name in key.names}) + sum(key.cost for key in keys)
        self.step = None
        self.values: dict[Request, tuple[float, float]] = {}

    def evaluate(self, request: Request, step: int) -> tuple[float, float]:
        keys = [key for key in (self.order_key, self.victim_key) if key is not None]
        names = {name for key in keys for name in key.names}
        fields = {name: FIELD_GETTERS[name](request, step) for name in names}
        fields = {k: v if isinstance(v, str) else float(v) for k, v in fields.items()}
        order = self.order_key.evaluate(fields, request.request_id)
        victim = self.victim_key.evaluate(fields, request.request_id) if self.victim_key else order
        return order, victim

    def begin_step(self, requests: list[Request], step: int) -> None:
        self.step, self.values = step, {}
        # The work is counted, not timed (CPU time, let alone the wall clock, varies from run to run and with what
        # else the machine does): the same key on the same requests gets the same verdict, at the same request.
        for n, request in enumerate(requests, start=1):
            if n * self.cost > self.budget_ops:
                raise PolicyKeyError("policy_key.over_budget", step=step, ops=n * self.cost, n=n,
                                     limit=self.budget_ops, request_id=request.request_id)
            self.values[request] = self.evaluate(request, step)

    def _values(self, request: Request, step: int) -> tuple[float, float]:
        if step == self.step and request in self.values:
            return self.values[request]
        try:  # outside a step: only a snapshot's picture of the queue; the next step reports any failure
            return self.evaluate(request, step)
        except PolicyKeyError:
            return math.inf, math.inf

    def urgency(self, request: Request, step: int) -> float:
        return self._values(request, step)[0]

    def victim(self, candidates: list[Request], step: int) -> Request:
        return max(candidates, key=lambda r: (self._values(r, step)[1], r.arrival_step, r.seq_no))


POLICY_CLASSES = (FCFS, SJF, PriorityWithAging, EDF)
if tuple(cls.name for cls in POLICY_CLASSES) != POLICIES:
    raise ImportError(f"engine.config.POLICIES {POLICIES} and the policy classes here disagree")


def policy_for(config: EngineConfig) -> Policy:
    """The config's policy: the student's key when it has one, else the named built-in."""
    if config.policy_key is not None:
        return KeyPolicy(config.policy_key, config.policy_victim_key, config.policy_key_preemptive,
                         config.policy_key_budget_ops)
    return make_policy(config.policy, config.priority_aging_steps)


def make_policy(name: str, aging_steps: int = AGING_STEPS) -> Policy:
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}: choose one of {', '.join(POLICIES)}")
    cls = POLICY_CLASSES[POLICIES.index(name)]
    return cls(aging_steps) if cls is PriorityWithAging else cls()
