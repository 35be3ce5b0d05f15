"""A room on one server: recorded runs are stored as columns that rebuild every frame exactly, computed
once per process and shared by every session that asks for the same run."""
import dataclasses
import json
import threading
import tracemalloc

import pytest

from engine.core.snapshot import StepSnapshot
from engine.lab.columns import SnapshotColumns
from engine.lab.experiment import LiveRun, run_requests, workload_requests
from engine.lab.workload import engine_config_for
from engine.lab.workload import preset
from ui.playback.run_cache import RunCache, RunStore, run_bytes

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


@pytest.mark.slow
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


def _untimed(snapshots) -> list[StepSnapshot]:
    """What the engine did at each step (the wall-clock times differ from run to run)."""
    return [dataclasses.replace(s, time_s=0.0, step_time_s=0.0, model_time_s=0.0) for s in snapshots]


def _maker(tiny, workload: str = "high-variance", scale: float = 0.5, **settings):
    """A recorded run to share (built, not yet stepped), and how many times it was built."""
    w = preset(workload).scaled(scale)
    requests, config, built = workload_requests(tiny, w, 0), engine_config_for(w, **settings), []

    def make():
        built.append(1)
        return LiveRun(tiny, requests, config, workload)
    return make, built, (requests, config)


def test_concurrent_asks_for_one_run_compute_it_once_and_get_the_same_steps_as_a_run_alone(tiny):
    cache = RunCache(max_bytes=10**9)
    make, built, (requests, config) = _maker(tiny)
    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("moment", make, run_bytes))) for _ in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(built) == 1 and cache.computed == 1
    assert len(got) == 12 and all(g is got[0] for g in got)
    cache.join()
    assert got[0].done and cache.get("moment", make, run_bytes) is got[0] and len(built) == 1
    alone = run_requests(tiny, requests, config).snapshots
    assert _untimed(got[0].snapshots) == _untimed(alone)  # stepped by a background thread: the same run, step for step


def test_a_run_one_process_stored_is_read_back_by_another_frame_for_frame_without_computing(tiny, tmp_path):
    """The test session's run store (SERVING_LAB_RUN_STORE): an ended run written by one cache is what a cache with
    the same folder (another process) gets for the same key: every frame and the summary, nothing computed."""
    make, built, _ = _maker(tiny)
    first = RunCache(max_bytes=10**9, store=RunStore(tmp_path))
    computed = first.get("moment", make, run_bytes)
    first.join()
    assert computed.done and list(tmp_path.glob("*.pkl"))
    second = RunCache(max_bytes=10**9, store=RunStore(tmp_path))
    read = second.get("moment", make, run_bytes)
    assert len(built) == 1 and second.computed == 0 and read.done and second.bytes > 0
    assert list(read.snapshots) == list(computed.snapshots) and read.summary() == computed.summary()
    assert second.get("another moment", make, run_bytes) is not read and len(built) == 2  # keyed: no other run's


@pytest.mark.slow
def test_a_shared_run_plays_while_it_is_computed_and_a_session_may_step_it_too(tiny):
    """Handed out before it ends: readers see only whole steps while the background thread records, and a
    session that plays ahead steps the same engine in turn (the run stays the one a run alone gives)."""
    cache = RunCache(max_bytes=10**9)
    make, _, (requests, config) = _maker(tiny, "high-variance", 1.0, max_num_seqs=4)
    run = cache.get("k", make, run_bytes)
    assert not run.done  # handed out at once: the steps come in the background
    seen, errors = [], []

    def session():  # plays ahead of the background thread, reading every frame as it goes
        try:
            frame = 0
            while not run.done or frame < run.frames:
                run.ensure(frame)
                if frame < run.frames:
                    snap = run.snapshots[frame]
                    assert snap.step == frame and run.recorder.frame_metrics(frame)["frames"] >= frame + 1
                    seen.append(frame)
                    frame += 1
        except Exception as e:
            errors.append(e)

    readers = [threading.Thread(target=session) for _ in range(3)]
    for th in readers:
        th.start()
    for th in readers:
        th.join(timeout=300)
    cache.join()
    assert not errors, errors
    assert run.done and len(seen) == 3 * run.frames
    assert _untimed(run.snapshots) == _untimed(run_requests(tiny, requests, config).snapshots)


def test_a_run_another_process_is_computing_is_waited_for_and_read_back_not_computed_again(tiny, tmp_path):
    """Two caches on one store folder stand for two processes of a test session (each holds its own lock file):
    the second asks while the first is still computing, waits for it and reads the stored run."""
    make, built, _ = _maker(tiny)
    first, second = (RunCache(max_bytes=10**9, store=RunStore(tmp_path)) for _ in range(2))
    computing = first.get("moment", make, run_bytes)
    read = second.get("moment", make, run_bytes)
    first.join()
    assert len(built) == 1 and second.computed == 0 and read.done and read is not computing
    assert list(read.snapshots) == list(computing.snapshots)


def test_a_shared_run_whose_computation_fails_is_dropped_and_the_next_ask_computes_it_again(tiny, tmp_path):
    """In this process and in another one sharing the store: a failed computation leaves no claim behind."""
    cache, other = (RunCache(max_bytes=10**9, store=RunStore(tmp_path)) for _ in range(2))
    make, built, _ = _maker(tiny, scale=0.25)

    def broken():
        run = make()
        run._step = lambda: (_ for _ in ()).throw(RuntimeError("a step failed"))
        return run

    first = cache.get("k", broken, run_bytes)
    cache.join()
    assert not first.done and len(cache) == 0
    got = []
    asker = threading.Thread(target=lambda: got.append(other.get("k", make, run_bytes)), daemon=True)
    asker.start()
    asker.join(timeout=120)
    assert got and other.computed == 1, "the other process computes it: nobody holds the failed run's claim"
    other.join()
    second = cache.get("k", make, run_bytes)  # now read back from the store: computed once after the failure
    assert second is not first and second.done and len(built) == 2 and cache.computed == 1


def test_the_least_recently_used_run_goes_first_when_over_budget(tiny):
    cache = RunCache(max_bytes=250)
    made = {key: _maker(tiny, scale=0.25)[0] for key in "abc"}
    runs = {}
    for key in ("a", "b"):
        runs[key] = cache.get(key, made[key], lambda run: 100)
        cache.join()
    assert cache.get("a", made["a"], lambda run: 100) is runs["a"]  # a hit: "a" is now the most recent
    cache.get("c", made["c"], lambda run: 100)  # 300 bytes once it ends: one must go, the least recent ("b")
    cache.join()
    assert cache.bytes == 200 and len(cache) == 2
    assert cache.get("a", made["a"], lambda run: 100) is runs["a"]
    assert cache.get("b", made["b"], lambda run: 100) is not runs["b"]  # computed again


def _press(at, moment_id: str) -> None:
    """Open a lecture moment as a student does: queue it, go to its page, skip the prediction."""
    from lessons import load_moments
    from tests.test_numeric_round_trip import PAGE_FILES, STRINGS

    at.session_state["pending_moment"] = moment_id
    at.switch_page(PAGE_FILES[load_moments()[moment_id].page]).run()
    next(b for b in at.button if b.label == STRINGS["pred.skip"]["en"]).click().run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.slow
def test_two_sessions_pressing_the_same_moment_share_one_computation():
    from tests.test_app_teaching import page
    from ui.playback import run_cache

    run_cache.RUNS.clear()
    first, second = page("pages/home.py"), page("pages/home.py")
    computed = run_cache.RUNS.computed
    _press(first, "uniform-control")
    assert run_cache.RUNS.computed == computed + 2  # the static and the continuous run
    run_cache.RUNS.join()  # measured below: what a second session adds, not what the runs' steps take
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
