"""SnapshotColumns: a recorded run's step snapshots, stored as columns of small integers.

A StepSnapshot is a tree of Python objects: at 64 slots x 512 blocks one step holds four 512-long
tuples and a RequestView per live request, ~40 KB, and a run keeps one per step. A room of students
replaying the same runs would hold thousands of them. Here each step is appended to flat typed
arrays (request ids become indices into one string table), ~5 KB a step at that size, and a
snapshot is rebuilt only when a view asks for it; the last few rebuilt stay at hand, since a frame
reads its snapshot several times.

Rebuilt snapshots equal the recorded ones, field for field and type for type: every append is
decoded again and compared, and a step the columns cannot hold exactly is kept as it came.
"""
from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence

from engine.core.snapshot import FrozenDict, RequestView, ScheduledView, StepSnapshot
from engine.core.wait import Wait

NONE = -1  # the code of None among string or slot codes
_VIEW_INTS = ("priority", "num_prompt_tokens", "num_output_tokens", "num_computed_tokens", "max_tokens",
              "num_preemptions", "arrival_step", "num_cached_tokens", "num_recomputed_tokens")
_VIEW_WIDTH = 6 + len(_VIEW_INTS)  # id, status, class, slot, finish_reason, swapped + the ints
_WAIT_WIDTH = 9  # id, code, behind, asked + have, need, more_slots, more_blocks, more_budget (NONE for None)
_RARE = ("arrived", "admitted", "preempted", "finished", "rejected", "rejection_codes", "aborted", "blocked",
         "blocks_swapped_out", "blocks_swapped_in", "blocks_copied")  # mostly empty: kept as objects
HOT_FRAMES = 8  # rebuilt snapshots kept at hand


class _Ragged:
    """Variable-length rows of integers in one typed array."""

    def __init__(self, typecode: str = "i"):
        self.values = array(typecode)
        self.ends = array("q")

    def append(self, row) -> None:
        try:
            self.values.extend(row)
        except OverflowError:  # narrowed too far by freeze(): widen again
            del self.values[self.ends[-1] if self.ends else 0:]
            self.values = array("q", self.values)
            self.values.extend(row)
        self.ends.append(len(self.values))

    def pop(self) -> None:
        self.ends.pop()
        del self.values[self.ends[-1] if self.ends else 0:]

    def row(self, i: int) -> list[int]:
        return self.values[self.ends[i - 1] if i else 0:self.ends[i]].tolist()

    def narrow(self) -> None:
        """Once no more rows come: the smallest integer type that holds every value."""
        if self.values.typecode in "bhiq" and self.values:
            low, high = min(self.values), max(self.values)
            code = next(c for c in "bhiq" if -(1 << (8 * array(c).itemsize - 1)) <= low
                        and high < 1 << (8 * array(c).itemsize - 1))
            if code != self.values.typecode:
                self.values = array(code, self.values)

    @property
    def nbytes(self) -> int:
        return self.values.itemsize * len(self.values) + 8 * len(self.ends)


class SnapshotColumns(Sequence):
    """A list of StepSnapshot that stores columns: append, len, index, slice, iterate."""

    def __init__(self, snapshots=()):
        self._names: list[str] = []
        self._code: dict[str, int] = {}
        self._steps, self._misc = array("q"), array("q")  # misc: block_size, kv_layout code
        self._times = array("d")  # time_s, step_time_s, model_time_s per step
        self._batch, self._slots, self._waiting, self._tables = _Ragged(), _Ragged(), _Ragged(), _Ragged()
        self._owner, self._fill, self._refs = _Ragged(), _Ragged(), _Ragged()
        self._cached, self._written = _Ragged("b"), _Ragged()
        self._views, self._emitted, self._waits = _Ragged(), _Ragged("q"), _Ragged()
        self._rare: list[tuple | None] = []
        self._kept: dict[int, StepSnapshot] = {}  # steps the columns could not hold exactly
        self._hot: OrderedDict[int, StepSnapshot] = OrderedDict()
        self._lock = threading.Lock()
        # Steps readers may see: a step is counted only once every column holds it, since other threads
        # read a run while it is still being recorded.
        self._published = 0
        for snap in snapshots:
            self.append(snap)

    # -- strings ------------------------------------------------------------------------------------
    def _c(self, name: str | None) -> int:
        if name is None:
            return NONE
        code = self._code.get(name)
        if code is None:
            code = self._code[name] = len(self._names)
            self._names.append(name)
        return code

    def _s(self, code: int) -> str | None:
        return None if code == NONE else self._names[code]

    # -- recording ----------------------------------------------------------------------------------
    def append(self, snap: StepSnapshot) -> None:
        i = len(self._steps)
        try:
            self._encode(snap)
        except (TypeError, ValueError, OverflowError):
            self._encoded_fallback(snap, i)
            self._published = len(self._steps)
            return
        rebuilt = self._decode(i)
        if rebuilt != snap or not _same_shape(rebuilt, snap):
            self._drop_last()
            self._encoded_fallback(snap, i)
        self._published = len(self._steps)

    def _encoded_fallback(self, snap: StepSnapshot, i: int) -> None:
        """Keep this step as it came; the columns get placeholder rows so indices stay aligned."""
        while len(self._steps) > i:
            self._drop_last()
        self._kept[i] = snap
        self._steps.append(0)
        self._misc.extend((0, 0))
        self._times.extend((0.0, 0.0, 0.0))
        for col in self._columns():
            col.append(())
        self._rare.append(None)

    def _columns(self) -> tuple[_Ragged, ...]:
        return (self._batch, self._slots, self._waiting, self._tables, self._owner, self._fill, self._refs,
                self._cached, self._written, self._views, self._emitted, self._waits)

    def _drop_last(self) -> None:
        self._steps.pop()
        del self._misc[-2:]
        del self._times[-3:]
        for col in self._columns():
            if len(col.ends) > len(self._steps):
                col.pop()
        if len(self._rare) > len(self._steps):
            self._rare.pop()

    def _encode(self, s: StepSnapshot) -> None:
        c = self._c
        batch = [x for b in s.batch for x in (c(b.request_id), b.slot, b.num_prefill_tokens, b.num_decode_tokens)]
        tables = [x for rid, table in s.block_tables.items() for x in (c(rid), len(table), *table)]
        views = []
        for rid, v in s.requests.items():
            if rid != v.request_id:
                raise ValueError("a request keyed by another id")
            views += (c(v.request_id), c(v.status), c(v.request_class), NONE if v.slot is None else v.slot,
                      c(v.finish_reason), int(v.swapped), *(getattr(v, f) for f in _VIEW_INTS))
        waits = []
        for rid, w in s.waits.items():
            figures = (w.have, w.need, w.more_slots, w.more_blocks, w.more_budget)
            if any(x is not None and (not isinstance(x, int) or x < 0) for x in figures):
                raise ValueError("a wait's figure the columns cannot hold")
            waits += (c(rid), c(w.code), c(w.behind), int(w.asked), *(NONE if x is None else x for x in figures))
        rows = (batch, [c(r) for r in s.slots], [c(r) for r in s.waiting], tables, [c(r) for r in s.block_owner],
                s.block_fill, s.block_ref_count, [int(b) for b in s.block_cached], s.written_blocks, views,
                [x for rid, tok in s.emitted.items() for x in (c(rid), tok)], waits)
        for row in rows:  # all rows or none: a failure leaves no partial step
            array("q", row)
        self._steps.append(s.step)
        self._misc.extend((s.block_size, c(s.kv_layout)))
        self._times.extend((s.time_s, s.step_time_s, s.model_time_s))
        for col, row in zip(self._columns(), rows):
            col.append(row)
        rare = tuple(getattr(s, name) for name in _RARE)
        self._rare.append(rare if any(rare) else None)

    def freeze(self) -> None:
        """The run has ended: store each column in the smallest integer type that fits. Appending
        afterwards still works (a value too big for the narrowed type widens that column again)."""
        with self._lock:
            for col in self._columns():
                col.narrow()

    # -- reading ------------------------------------------------------------------------------------
    def _decode(self, i: int) -> StepSnapshot:
        if i in self._kept:
            return self._kept[i]
        s = self._s
        b = self._batch.row(i)
        batch = tuple(ScheduledView(s(b[j]), b[j + 1], b[j + 2], b[j + 3]) for j in range(0, len(b), 4))
        t, tables, j = self._tables.row(i), {}, 0
        while j < len(t):
            tables[s(t[j])] = tuple(t[j + 2:j + 2 + t[j + 1]])
            j += 2 + t[j + 1]
        v, requests = self._views.row(i), {}
        for j in range(0, len(v), _VIEW_WIDTH):
            rid, status, cls, slot, reason, swapped, *ints = v[j:j + _VIEW_WIDTH]
            n = dict(zip(_VIEW_INTS, ints))
            requests[s(rid)] = RequestView(request_id=s(rid), status=s(status), request_class=s(cls),
                                           slot=None if slot == NONE else slot, finish_reason=s(reason),
                                           swapped=bool(swapped), **n)
        e, w = self._emitted.row(i), self._waits.row(i)
        waits = {}
        for j in range(0, len(w), _WAIT_WIDTH):
            rid, code, behind, asked, *figures = w[j:j + _WAIT_WIDTH]
            have, need, *more = (None if x == NONE else x for x in figures)
            waits[s(rid)] = Wait(s(code), have, need, s(behind), *more, asked=bool(asked))
        rare = self._rare[i]
        extra = dict(zip(_RARE, rare)) if rare else {}
        return StepSnapshot(
            step=self._steps[i], time_s=self._times[3 * i], step_time_s=self._times[3 * i + 1],
            model_time_s=self._times[3 * i + 2], batch=batch, slots=tuple(s(r) for r in self._slots.row(i)),
            waiting=tuple(s(r) for r in self._waiting.row(i)), block_tables=FrozenDict(tables),
            block_owner=tuple(s(r) for r in self._owner.row(i)), block_fill=tuple(self._fill.row(i)),
            block_ref_count=tuple(self._refs.row(i)), block_cached=tuple(bool(x) for x in self._cached.row(i)),
            block_size=self._misc[2 * i], kv_layout=s(self._misc[2 * i + 1]),
            written_blocks=tuple(self._written.row(i)), requests=FrozenDict(requests),
            emitted=FrozenDict({s(e[j]): e[j + 1] for j in range(0, len(e), 2)}), waits=FrozenDict(waits), **extra)

    def __len__(self) -> int:
        return self._published

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("snapshot index out of range")
        with self._lock:  # one recorded run is read by many sessions' threads
            snap = self._hot.get(i)
            if snap is not None:
                self._hot.move_to_end(i)
                return snap
        snap = self._decode(i)
        with self._lock:
            self._hot[i] = snap
            while len(self._hot) > HOT_FRAMES:
                self._hot.popitem(last=False)
        return snap

    def __iter__(self):
        for i in range(len(self)):  # without filling the hot set: a pass over the run reads each step once
            yield self._hot.get(i) or self._decode(i)

    @property
    def nbytes(self) -> int:
        """Bytes the columns hold (the string table and steps kept as objects counted roughly)."""
        cols = sum(col.nbytes for col in self._columns())
        fixed = 8 * (len(self._steps) + len(self._misc) + len(self._times)) + 8 * len(self._rare)
        return cols + fixed + sum(60 + len(n) for n in self._names) + 40_000 * (len(self._kept) + len(self._hot))


def _same_shape(a: StepSnapshot, b: StepSnapshot) -> bool:
    """Equal values can still differ in type (1 == True, 0 == 0.0) or in key order, which a view or a
    JSON export would show."""
    return (all(type(getattr(a, f)) is type(getattr(b, f)) for f in ("time_s", "step_time_s", "model_time_s"))
            and all(list(getattr(a, f)) == list(getattr(b, f)) for f in ("requests", "block_tables", "emitted"))
            and all(type(x) is type(y) for x, y in zip(a.block_cached, b.block_cached))
            and all(type(x.swapped) is type(y.swapped) and type(x.slot) is type(y.slot)
                    for x, y in zip(a.requests.values(), b.requests.values())))
