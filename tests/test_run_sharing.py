"""A room on one server: recorded runs are stored as columns that rebuild every frame exactly, computed
once per process and shared by every session that asks for the same run."""
import dataclasses
import json
import threading
import time
import tracemalloc

import pytest

from engine.core.snapshot import StepSnapshot
from engine.lab.columns import SnapshotColumns
from engine.lab.experiment import engine_config_for, run_requests, workload_requests
from engine.lab.workload import preset
from ui.run_cache import RunCache

RUNS = [  # (workload, scale, settings): every kind of step a view can meet
    ("high-variance", 1.0, {"max_num_seqs": 16}),  # slots refilled, requests finishing
    ("chat-and-reports", 0.5, {"kv_layout": "contiguous", "num_blocks": 48}),  # refusals: blocked by fragmentation
    ("long-context", 0.5, {"preemption_mode": "swap"}),  # preempted, swapped out and in
    ("shared-system-prompt", 0.5, {"enable_prefix_caching": True, "num_blocks": 64}),  # shared, cached blocks
    ("support-bot-vs-batch", 0.25, {"policy": "edf", "num_blocks": 40}),  # recompute, classes, priorities
]


def _recorded(tiny, workload: str, scale: float, settings: dict) -> list[StepSnapshot]:
    w = preset(workload).scaled(scale)
    return run_requests(tiny, workload_requests(tiny, w, 0), engine_config_for(w, **settings)).snapshots


@pytest.mark.parametrize("workload,scale,settings", RUNS, ids=[r[0] for r in RUNS])
def test_frames_rebuilt_from_columns_equal_the_recorded_snapshots(tiny, workload, scale, settings):
    snaps = _recorded(tiny, workload, scale, settings)
    cols = SnapshotColumns(snaps)
    assert not cols._kept, "every step fits the columns"
    cols.freeze()
    assert len(cols) == len(snaps)
    for i in (*range(len(snaps)), -1, 3, 0):  # in order, then jumps back (as a scrub does)
        assert cols[i] == snaps[i], i
        assert json.dumps(cols[i].to_dict()) == json.dumps(snaps[i].to_dict()), i  # types and key order too
    assert list(cols) == snaps and cols[2:5] == snaps[2:5]


def test_columns_hold_a_run_in_a_fraction_of_the_snapshots_memory(tiny):
    snaps = _recorded(tiny, "high-variance", 1.0, {"max_num_seqs": 16})
    plain = [StepSnapshot.from_dict(s.to_dict()) for s in snaps]  # fresh copies, as the engine makes them
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = [StepSnapshot.from_dict(s.to_dict()) for s in plain]
        as_objects = tracemalloc.get_traced_memory()[0] - before
        del held
        before = tracemalloc.get_traced_memory()[0]
        cols = SnapshotColumns(plain)
        cols.freeze()
        cols._hot.clear()
        as_columns = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert as_columns * 4 < as_objects, (as_columns, as_objects)


def test_a_step_the_columns_cannot_hold_exactly_is_kept_as_it_came(tiny):
    snaps = _recorded(tiny, "chat-and-reports", 0.3, {})
    odd = dataclasses.replace(snaps[1], block_fill=tuple(float(f) for f in snaps[1].block_fill))  # 1.0 == 1
    cols = SnapshotColumns([snaps[0], odd, snaps[2]])
    assert cols[1] is odd and cols[0] == snaps[0] and cols[2] == snaps[2]
    assert json.dumps(cols[1].to_dict()) == json.dumps(odd.to_dict())


def test_a_value_too_big_for_a_narrowed_column_widens_it(tiny):
    snaps = _recorded(tiny, "chat-and-reports", 0.3, {})
    cols = SnapshotColumns(snaps[:3])
    cols.freeze()  # block ids and token counts now fit in small types
    big = dataclasses.replace(snaps[3], step=snaps[3].step, emitted=type(snaps[3].emitted)(
        {rid: 2**40 for rid in snaps[3].emitted}))
    cols.append(big)
    assert cols[3] == big and not cols._kept


def test_concurrent_asks_for_one_run_compute_it_once():
    cache, calls = RunCache(max_bytes=10**9), []

    def compute(report):
        calls.append(1)
        report(0.5)
        time.sleep(0.3)
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("moment", compute, lambda v: 100)))
               for _ in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(calls) == 1 and cache.computed == 1
    assert len(got) == 12 and all(g is got[0] for g in got)
    assert cache.get("moment", compute, lambda v: 100) is got[0] and len(calls) == 1


def test_a_waiter_takes_over_when_the_first_computation_is_interrupted():
    cache, started = RunCache(max_bytes=10**9), threading.Event()

    def interrupted(report):  # the first session's script run is stopped (it pressed something else)
        started.set()
        time.sleep(0.3)
        raise KeyboardInterrupt

    results, errors = [], []

    def first():
        try:
            cache.get("k", interrupted, lambda v: 1)
        except KeyboardInterrupt as e:
            errors.append(e)

    th = threading.Thread(target=first)
    th.start()
    started.wait()
    results.append(cache.get("k", lambda report: "computed by the waiter", lambda v: 1))
    th.join()
    assert errors and results == ["computed by the waiter"] and cache.computed == 2


def test_the_least_recently_used_run_goes_first_when_over_budget():
    cache = RunCache(max_bytes=250)
    for key in ("a", "b"):
        cache.get(key, lambda report, key=key: key.upper(), lambda v: 100)
    cache.get("a", lambda report: "recomputed", lambda v: 100)  # a hit: "a" is now the most recent
    cache.get("c", lambda report: "C", lambda v: 100)  # 300 bytes: one must go, the least recent ("b")
    assert cache.bytes == 200 and len(cache) == 2
    assert cache.get("a", lambda report: "recomputed", lambda v: 100) == "A"
    assert cache.get("b", lambda report: "recomputed", lambda v: 100) == "recomputed"


def _press(at, moment_id: str) -> None:
    """Open a lecture moment as a student does: queue it, go to its page, skip the prediction."""
    from lessons import load_moments
    from tests.test_numeric_round_trip import PAGE_FILES, STRINGS

    at.session_state["pending_moment"] = moment_id
    at.switch_page(PAGE_FILES[load_moments()[moment_id].page]).run()
    next(b for b in at.button if b.label == STRINGS["pred.skip"]["en"]).click().run()
    assert not at.exception, [e.value for e in at.exception]


def test_two_sessions_pressing_the_same_moment_share_one_computation():
    from tests.test_app_teaching import page
    from ui import run_cache

    run_cache.RUNS.clear()
    first, second = page("pages/home.py"), page("pages/home.py")
    computed = run_cache.RUNS.computed
    _press(first, "uniform-control")
    assert run_cache.RUNS.computed == computed + 2  # the static and the continuous run
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        _press(second, "uniform-control")
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert run_cache.RUNS.computed == computed + 2  # nothing computed again
    mine, theirs = first.session_state["static-vs-continuous.runs"], second.session_state["static-vs-continuous.runs"]
    assert [r.label for r in mine] == ["static", "continuous"] and all(a is b for a, b in zip(mine, theirs))
    assert grown < 8 * 2**20, f"the second session held {grown / 2**20:.1f} MB"
