"""Queue policies: who is admitted first, who gets the token budget first, who is preempted first.

A policy is one sort key: smaller is served earlier and evicted later.
"""
from __future__ import annotations

from engine.request import Request


class Policy:
    name = "base"

    def key(self, request: Request, step: int) -> tuple:
        raise NotImplementedError

    def order(self, requests: list[Request], step: int) -> list[Request]:
        return sorted(requests, key=lambda r: self.key(r, step))

    def victim(self, candidates: list[Request], step: int) -> Request:
        """Who gives up its cache when memory runs out: the one this policy serves last."""
        return max(candidates, key=lambda r: self.key(r, step))


class FCFS(Policy):
    """First come, first served: arrival order, as vLLM's default."""

    name = "fcfs"

    def key(self, request: Request, step: int) -> tuple:
        return (request.arrival_step, request.seq_no)


POLICIES = {"fcfs": FCFS}


def make_policy(name: str, **options) -> Policy:
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}: choose one of {', '.join(POLICIES)}")
    return POLICIES[name](**options)
