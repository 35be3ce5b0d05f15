"""StepSnapshot: an immutable, JSON-ready record of what one engine step did.

The UI, the tests and the exports all read these; nothing draws from live engine objects.
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field


class FrozenDict(dict):
    """A dict that refuses changes (and still serialises as a plain JSON object)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("snapshots are immutable")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse


@dataclass(frozen=True)
class ScheduledView:
    request_id: str
    slot: int
    num_prefill_tokens: int
    num_decode_tokens: int


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class StepSnapshot:
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
    blocked: FrozenDict = field(default_factory=FrozenDict)  # head of the queue -> slots/budget/memory/fragmentation
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

    @property
    def num_prefill_tokens(self) -> int:
        return sum(b.num_prefill_tokens for b in self.batch)

    @property
    def num_decode_tokens(self) -> int:
        return sum(b.num_decode_tokens for b in self.batch)

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
        for f in dataclasses.fields(cls):
            if isinstance(d.get(f.name), list):
                d[f.name] = tuple(d[f.name])
        return cls(**d)


def _plain(value):
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


def request_view(r) -> RequestView:
    return RequestView(r.request_id, r.status.value, r.request_class, r.priority, r.num_prompt_tokens,
                       r.num_output_tokens, r.num_computed_tokens, r.sampling_params.max_tokens, r.slot,
                       r.num_preemptions, r.finish_reason.value if r.finish_reason else None, r.arrival_step,
                       r.num_cached_tokens, r.swapped, r.num_recomputed_tokens)


def capture(step: int, time_s: float, step_time_s: float, model_time_s: float, scheduler, block_manager,
            out, sampled: dict, slot_mapping_blocks: set, arrived, finished, rejected, ops) -> StepSnapshot:
    """Freeze the scheduler's and block manager's state after a step."""
    views = block_manager.block_views()
    live = scheduler.running + scheduler.waiting
    batch = tuple(ScheduledView(s.request.request_id, s.slot, s.num_new_tokens if s.is_prefill else 0,
                                0 if s.is_prefill else s.num_new_tokens) for s in out.scheduled)
    return StepSnapshot(
        step=step, time_s=time_s, step_time_s=step_time_s, model_time_s=model_time_s, batch=batch,
        slots=tuple(scheduler.slots),
        waiting=tuple(r.request_id for r in scheduler.policy.order(scheduler.waiting, step + 1)),
        block_tables=FrozenDict({rid: tuple(r.block_table) for rid, r in block_manager.holders.items()}),
        block_owner=tuple(v.owner for v in views), block_fill=tuple(v.fill for v in views),
        block_ref_count=tuple(v.ref_count for v in views), block_cached=tuple(v.cached for v in views),
        block_size=block_manager.block_size, kv_layout=block_manager.kv_layout,
        written_blocks=tuple(sorted(slot_mapping_blocks)),
        requests=FrozenDict({r.request_id: request_view(r) for r in [*live, *finished, *rejected]}),
        emitted=FrozenDict(sampled), arrived=tuple(arrived), admitted=tuple(out.admitted),
        preempted=tuple(out.preempted), finished=tuple(r.request_id for r in finished),
        rejected=FrozenDict({r.request_id: r.error for r in rejected}),
        rejection_codes=FrozenDict({r.request_id: {"code": r.error_code, "params": r.error_params} for r in rejected}),
        blocked=FrozenDict(out.blocked),
        blocks_swapped_out=len(ops.swap_out), blocks_swapped_in=len(ops.swap_in), blocks_copied=len(ops.copy))
