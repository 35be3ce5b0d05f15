"""One request's journey through a recorded run: at each step its state (waiting and why, prefill, decode,
preempted, finished) and its block table, read from the step snapshots the engine returned, grouped into stages
of steps that read alike. The chapter's three threads in one place: when the request enters the batch, when it
leaves, and when its cache is allocated and freed."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only
    from collections.abc import Sequence

    from engine.core.snapshot import StepSnapshot
    from engine.core.wait import Wait

STATES = ("waiting", "prefill", "decode", "held", "preempted", "finished")


@dataclass(frozen=True)
class Step:
    """What one step did to the request."""

    step: int
    state: str  # one of STATES; held: in a slot but not scheduled this step (a static batch member that is done)
    wait: Wait | None  # waiting: why the scheduler held it back at this step
    tokens: int  # prefill: tokens of the prompt computed this step; decode: 1
    blocks: tuple[int, ...]  # its block table after the step (physical block ids)
    shared: int  # of which held by another request too (prefix sharing)


@dataclass(frozen=True)
class Stage:
    """Consecutive steps in one state (and, waiting, for one reason)."""

    state: str
    first: int  # step
    last: int
    wait: Wait | None  # at the stage's first step
    tokens: int  # over the stage
    blocks_before: int  # blocks held before the stage's first step
    blocks_after: int  # after its last
    shared: int  # most blocks shared with others at one step of it


def steps_of(snapshots: Sequence[StepSnapshot], request_id: str) -> list[Step]:
    """The request's steps, from the one it arrived in to the one it ended in."""
    out = []
    for snap in snapshots:
        view = snap.requests.get(request_id)
        if view is None:
            if out:  # ended (finished, rejected or aborted) before this step
                break
            continue
        table = tuple(snap.block_tables.get(request_id, ()))
        shared = sum(1 for b in table if b < len(snap.block_ref_count) and snap.block_ref_count[b] > 1)
        ran = next((b for b in snap.batch if b.request_id == request_id), None)
        if request_id in snap.finished:
            state, tokens = "finished", 1 if ran else 0
        elif request_id in snap.preempted:
            state, tokens = "preempted", 0
        elif ran is not None and ran.num_prefill_tokens:
            state, tokens = "prefill", ran.num_prefill_tokens
        elif ran is not None:
            state, tokens = "decode", ran.num_decode_tokens
        elif view.status == "running":
            state, tokens = "held", 0
        else:
            state, tokens = "waiting", 0
        out.append(Step(snap.step, state, snap.waits.get(request_id) if state == "waiting" else None, tokens, table,
                        shared))
    return out


def _add(out: list[Stage], s: Step, before: int) -> None:
    """One more step onto the stages so far: the last stage grows, or a new one starts where the state changes, or a
    wait's reason (its code) does."""
    code = s.wait.code if s.wait else None
    last = out[-1] if out else None
    if last and last.state == s.state and (last.wait.code if last.wait else None) == code \
            and s.state not in ("preempted", "finished"):
        out[-1] = Stage(last.state, last.first, s.step, last.wait, last.tokens + s.tokens, last.blocks_before,
                        len(s.blocks), max(last.shared, s.shared))
    else:
        out.append(Stage(s.state, s.step, s.step, s.wait, s.tokens, before, len(s.blocks), s.shared))


def stages(steps: list[Step], before: int = 0) -> list[Stage]:
    """The steps grouped into stages. `before`: the blocks held before the first of the steps (none at arrival)."""
    out: list[Stage] = []
    for s in steps:
        _add(out, s, before)
        before = len(s.blocks)
    return out


def stages_so_far(steps: list[Step]) -> dict[int, tuple[Stage, ...]]:
    """Step -> the stages as they stood after it: what the run had shown of the request by then (nothing of its
    future, so a prediction cannot be read off them)."""
    out: list[Stage] = []
    by_step, before = {}, 0
    for s in steps:
        _add(out, s, before)
        before = len(s.blocks)
        by_step[s.step] = tuple(out)
    return by_step


def journey(snapshots: Sequence[StepSnapshot], request_id: str) -> list[Stage]:
    return stages(steps_of(snapshots, request_id))
