"""StepSnapshot: an immutable, JSON-ready record of what one engine step did.

The UI, the tests and the exports all read these; nothing draws from live engine objects.
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.core.wait import Wait

if TYPE_CHECKING:  # annotations only: the snapshot module stays importable without the engine
    from engine.core.allocator import CacheOps, KVAllocator
    from engine.core.request import Request
    from engine.core.scheduler import Scheduler, SchedulerOutput


class FrozenDict(dict):
    """A dict that refuses changes (and still serialises as a plain JSON object)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("snapshots are immutable")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):  # pickled whole, not item by item (which would be refused)
        return FrozenDict, (dict(self),)


@dataclass(frozen=True)
class ScheduledView:
    request_id: str
    slot: int
    num_prefill_tokens: int
    num_decode_tokens: int


@dataclass(frozen=True, kw_only=True)  # built by name: fifteen fields in a row are easy to swap
class RequestView:
    request_id: str
    status: str  # waiting / running / preempted / finished
    request_class: str
    priority: int
    num_prompt_tokens: int
    num_output_tokens: int
    num_computed_tokens: int
    max_tokens: int
    slot: int | None
    num_preemptions: int
    finish_reason: str | None
    arrival_step: int
    num_cached_tokens: int  # prompt tokens found in the prefix cache
    swapped: bool  # preempted with its cache parked in the CPU pool
    num_recomputed_tokens: int = 0


class BatchTokens:
    """Prefill and decode tokens of a step's batch: what a snapshot and a stats record both report."""

    batch: tuple[ScheduledView, ...]

    @property
    def num_prefill_tokens(self) -> int:
        return sum(b.num_prefill_tokens for b in self.batch)

    @property
    def num_decode_tokens(self) -> int:
        return sum(b.num_decode_tokens for b in self.batch)


@dataclass(frozen=True)
class StepSnapshot(BatchTokens):
    step: int
    time_s: float  # engine clock at the end of the step
    step_time_s: float  # wall time of the whole step
    model_time_s: float  # of which: forward pass and sampling
    batch: tuple[ScheduledView, ...]
    slots: tuple[str | None, ...]  # slot i -> request id, None: idle
    waiting: tuple[str, ...]  # the queue at the door, in the policy's order
    block_tables: FrozenDict  # request id -> physical block ids
    block_owner: tuple[str | None, ...]  # per physical block
    block_fill: tuple[int, ...]  # token slots written, per block
    block_ref_count: tuple[int, ...]
    block_cached: tuple[bool, ...]  # holds a prefix-cache hash
    block_size: int
    kv_layout: str  # paged / contiguous
    written_blocks: tuple[int, ...]  # blocks this step's slot_mapping wrote into
    requests: FrozenDict  # request id -> RequestView, for every live request (and those ended this step)
    emitted: FrozenDict  # request id -> token id sampled this step
    arrived: tuple[str, ...] = ()
    admitted: tuple[str, ...] = ()
    preempted: tuple[str, ...] = ()
    finished: tuple[str, ...] = ()
    rejected: FrozenDict = field(default_factory=FrozenDict)  # request id -> reason (English)
    rejection_codes: FrozenDict = field(default_factory=FrozenDict)  # request id -> {code, params}
    aborted: tuple[str, ...] = ()  # ended by abort() since the previous step
    blocked: FrozenDict = field(default_factory=FrozenDict)  # head of the queue -> slots/budget/memory/fragmentation
    waits: FrozenDict = field(default_factory=FrozenDict)  # every request waiting after the step -> its Wait
    blocks_swapped_out: int = 0
    blocks_swapped_in: int = 0
    blocks_copied: int = 0  # copy-on-write

    @property
    def num_blocks(self) -> int:
        return len(self.block_owner)

    @property
    def num_free_blocks(self) -> int:
        return sum(1 for r in self.block_ref_count if r == 0)

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - self.num_free_blocks

    @property
    def num_partial_blocks(self) -> int:
        return sum(1 for f, r in zip(self.block_fill, self.block_ref_count) if r and f < self.block_size)

    def to_dict(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> "StepSnapshot":
        d = dict(d)
        d["batch"] = tuple(ScheduledView(**b) for b in d["batch"])
        d["requests"] = FrozenDict({k: RequestView(**v) for k, v in d["requests"].items()})
        d["block_tables"] = FrozenDict({k: tuple(v) for k, v in d["block_tables"].items()})
        for name in ("emitted", "rejected", "rejection_codes", "blocked"):
            d[name] = FrozenDict(d.get(name, {}))
        d["waits"] = FrozenDict({k: Wait(*v) for k, v in d.get("waits", {}).items()})  # none in older recordings
        for f in dataclasses.fields(cls):
            if isinstance(d.get(f.name), list):
                d[f.name] = tuple(d[f.name])
        return cls(**d)


_ATOMS = frozenset({int, float, str, bool, type(None)})  # exactly these types: an enum member is not one


def _plain(value):
    """JSON-ready: dataclasses and dicts as dicts, tuples as lists, enum members as their values. Atoms are
    passed through without a call (a run's snapshots hold millions of them: block ids, token counts)."""
    if type(value) in _ATOMS:
        return value
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: v if type(v) in _ATOMS else _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [v if type(v) in _ATOMS else _plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


def request_view(r) -> RequestView:
    return RequestView(request_id=r.request_id, status=r.status.value, request_class=r.request_class,
                       priority=r.priority, num_prompt_tokens=r.num_prompt_tokens,
                       num_output_tokens=r.num_output_tokens, num_computed_tokens=r.num_computed_tokens,
                       max_tokens=r.sampling_params.max_tokens, slot=r.slot, num_preemptions=r.num_preemptions,
                       finish_reason=r.finish_reason.value if r.finish_reason else None,
                       arrival_step=r.arrival_step, num_cached_tokens=r.num_cached_tokens, swapped=r.swapped,
                       num_recomputed_tokens=r.num_recomputed_tokens)


@dataclass(kw_only=True)
class StepResult:
    """What one step did, as the step loop saw it; `capture` freezes it with the engine's state."""

    step: int
    time_s: float
    step_time_s: float
    model_time_s: float
    out: SchedulerOutput
    sampled: dict[str, int]
    slot_mapping: list[int]  # cache slots this step wrote
    arrived: list[str]
    finished: list[Request]
    rejected: list[Request]
    aborted: list[Request]
    ops: CacheOps


@dataclass(frozen=True)
class StepStats(BatchTokens):
    """One step's counters without the engine's state: what a benchmark or a server's metrics read.
    An engine made with `snapshots=False` returns these, and skips the per-block and per-request copies."""

    step: int
    time_s: float
    step_time_s: float
    model_time_s: float
    batch: tuple[ScheduledView, ...]
    num_running: int
    num_waiting: int
    emitted: dict[str, int]
    finished: tuple[str, ...]
    rejected: tuple[str, ...]
    aborted: tuple[str, ...]
    preempted: tuple[str, ...]


def _batch(out: SchedulerOutput) -> tuple[ScheduledView, ...]:
    return tuple(ScheduledView(s.request.request_id, s.slot, s.num_new_tokens if s.is_prefill else 0,
                               0 if s.is_prefill else s.num_new_tokens) for s in out.scheduled)


def stats(result: StepResult, scheduler: Scheduler) -> StepStats:
    r = result
    return StepStats(r.step, r.time_s, r.step_time_s, r.model_time_s, _batch(r.out), len(scheduler.running),
                     len(scheduler.waiting), r.sampled, tuple(q.request_id for q in r.finished),
                     tuple(q.request_id for q in r.rejected), tuple(q.request_id for q in r.aborted),
                     tuple(r.out.preempted))


def capture(result: StepResult, scheduler: Scheduler, block_manager: KVAllocator) -> StepSnapshot:
    """Freeze the scheduler's and block manager's state after a step."""
    r, out = result, result.out
    views = block_manager.block_views()
    live = scheduler.running + scheduler.waiting
    ended = [*r.finished, *r.rejected, *r.aborted]
    return StepSnapshot(
        step=r.step, time_s=r.time_s, step_time_s=r.step_time_s, model_time_s=r.model_time_s, batch=_batch(out),
        slots=tuple(scheduler.slots),
        waiting=tuple(q.request_id for q in scheduler.policy.order(scheduler.waiting, r.step + 1)),
        block_tables=FrozenDict({rid: tuple(q.block_table) for rid, q in block_manager.holders.items()}),
        block_owner=views.owner, block_fill=views.fill, block_ref_count=views.ref_count, block_cached=views.cached,
        block_size=block_manager.block_size, kv_layout=block_manager.kv_layout,
        written_blocks=tuple(sorted({slot // block_manager.block_size for slot in r.slot_mapping if slot >= 0})),
        requests=FrozenDict({q.request_id: request_view(q) for q in [*live, *ended]}),
        emitted=FrozenDict(r.sampled), arrived=tuple(r.arrived), admitted=tuple(out.admitted),
        preempted=tuple(out.preempted), finished=tuple(q.request_id for q in r.finished),
        rejected=FrozenDict({q.request_id: q.error for q in r.rejected}),
        rejection_codes=FrozenDict({q.request_id: {"code": q.error_code, "params": q.error_params}
                                    for q in r.rejected}),
        blocked=FrozenDict(out.blocked), waits=FrozenDict(out.waits),
        aborted=tuple(q.request_id for q in r.aborted),
        blocks_swapped_out=len(r.ops.swap_out), blocks_swapped_in=len(r.ops.swap_in), blocks_copied=len(r.ops.copy))
