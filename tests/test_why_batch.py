"""Why batch?: each batch size measured round-robin (medians with their spread, ratios taken round by round), one
measurement at a time per server and shared by every session asking for it, drawn on round axis ticks."""
import threading
import time

import pytest

from engine.lab.batch_curve import OneAtATime, curve_rows, measure_batch_curve
from ui.labs import batch_measure
from viz.charts import batch_curve, nice_ticks

LABELS = {"tok_per_s": "tok/s", "ms_per_step": "ms/step", "batch_size": "batch"}


def test_every_size_is_measured_round_robin_and_reported_as_medians_within_their_range(random_small):
    seen = []
    curve = measure_batch_curve(random_small, [4, 1], new_tokens=4, rounds=3, on_progress=lambda f, b: seen.append(b))
    assert [r["batch"] for r in curve.rows] == [1, 4] and seen == curve.order == [1, 4] * 3
    assert curve.rounds == 3 and curve.device == "cpu" and curve.cores >= 1 and curve.wall_s > 0
    for r in curve.rows:
        assert r["reps"] == 3
        for key in ("tok_per_s", "ms_per_step", "cpu_ms_per_step", "speedup", "step_cost"):
            assert r[f"{key}_min"] <= r[key] <= r[f"{key}_max"], key
    assert curve.rows[0]["speedup"] == curve.rows[0]["speedup_min"] == 1.0  # batch 1 against itself, every round


def _sample(tok_per_s: float, ms: float) -> dict:
    return {"tok_per_s": tok_per_s, "ms_per_step": ms, "cpu_ms_per_step": ms}


def test_a_round_slowed_by_load_does_not_move_the_ratios():
    # round 2 ran while the machine was three times busier: every size in it is three times slower
    slow = (1, 3, 1)
    samples = {b: [_sample(100 * b / s, 1 + b / 8 * s) for s in slow] for b in (1, 2, 8)}
    samples[1] = [_sample(100 / s, 1.0 * s) for s in slow]
    rows = curve_rows(samples)
    for r, b in zip(rows, (1, 2, 8)):
        assert r["speedup"] == pytest.approx(b) and r["speedup_min"] == pytest.approx(r["speedup_max"])
    # while the plain figures show the burst as their spread
    assert rows[2]["tok_per_s_min"] == pytest.approx(800 / 3) and rows[2]["tok_per_s_max"] == pytest.approx(800)


def test_sessions_asking_for_one_curve_share_one_measurement_and_measurements_never_overlap():
    curves, running, overlaps, calls = OneAtATime(), [], [], []
    lock = threading.Lock()

    def compute(job):
        with lock:
            running.append(job.key)
            overlaps.append(len(running))
            calls.append(job.key)
        time.sleep(0.2)
        with lock:
            running.remove(job.key)
        return f"curve {job.key}"

    start, jobs = threading.Barrier(6), []

    def session(key):
        start.wait()
        jobs.append(curves.request(key, compute))

    threads = [threading.Thread(target=session, args=(k,)) for k in ("a", "a", "a", "a", "b", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(j.wait() for j in jobs) == ["curve a"] * 4 + ["curve b"] * 2
    assert sorted(calls) == ["a", "b"] and curves.computed == 2 and max(overlaps) == 1
    assert curves.request("a", compute) is next(j for j in jobs if j.key == "a")  # kept: not measured again
    again = curves.request("a", compute, again=True)
    assert curves.kept("a") == "curve a" and again.wait() == "curve a" and curves.computed == 3


def test_a_failed_measurement_reaches_everyone_waiting_and_is_not_kept():
    curves, start, errors = OneAtATime(), threading.Barrier(3), []

    def compute(job):
        time.sleep(0.1)
        raise RuntimeError("the model could not load")

    def session():
        start.wait()
        try:
            curves.request("k", compute).wait()
        except RuntimeError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=session) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == ["the model could not load"] * 3 and curves.kept("k") is None
    assert curves.request("k", lambda job: "fine").wait() == "fine"  # asked again: measured again


def test_a_kept_curve_serves_any_subset_of_its_sizes(random_small):
    batch_measure.CURVES.forget()
    key = batch_measure.key("random-small", "cpu", (2, 4), 4)
    assert key[2] == (1, 2, 4)  # batch 1 always: every ratio is taken against it
    job, shared = batch_measure.request(random_small, key)
    assert not shared and job.wait().rows
    shown = batch_measure.shown("random-small", "cpu", (4,), 4)
    assert [r["batch"] for r in shown.rows] == [1, 4] and shown.order == [1, 4] * shown.rounds
    assert batch_measure.shown("random-small", "cpu", (8,), 4) is None  # never measured
    assert batch_measure.shown("random-small", "cpu", (4,), 8) is None  # other settings
    again, shared = batch_measure.request(random_small, key)
    assert again is job and not shared  # kept: the same measurement, not a new one
    batch_measure.CURVES.forget()


def test_the_step_time_axis_has_round_ticks_not_ones_aligned_to_the_other_axis():
    assert nice_ticks(4.3) == [0, 1, 2, 3, 4, 5]
    assert nice_ticks(0.42) == [0, 0.1, 0.2, 0.3, 0.4, 0.5]
    assert nice_ticks(23) == [0, 5, 10, 15, 20, 25]
    rows = [{"batch": b, "tok_per_s": 100 * b, "ms_per_step": 1 + b / 20, "tok_per_s_min": 90 * b,
             "tok_per_s_max": 110 * b, "ms_per_step_min": 1, "ms_per_step_max": 1.2 + b / 20} for b in (1, 2, 4, 64)]
    fig = batch_curve(rows, LABELS)
    assert list(fig.layout.yaxis2.tickvals) == [0, 1, 2, 3, 4, 5]
    bars, line = fig.data
    assert list(bars.error_y.array) == [10 * b for b in (1, 2, 4, 64)]  # whiskers to the fastest run
    assert line.error_y.arrayminus[0] == 1 + 1 / 20 - 1


def test_cpu_time_is_drawn_beside_wall_time_when_measured():
    rows = [{"batch": b, "tok_per_s": 100 * b, "ms_per_step": 2.0, "cpu_ms_per_step": 1.5 + b} for b in (1, 8)]
    fig = batch_curve(rows, LABELS | {"cpu_ms_per_step": "CPU ms/step"})
    assert [d.name for d in fig.data] == ["tok/s", "ms/step", "CPU ms/step"]
    assert fig.data[2].line.dash == "dash" and fig.layout.yaxis2.tickvals[-1] >= 9.5  # the axis holds both lines


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_kept_curve_is_shown_to_every_session_with_where_and_when_and_only_the_instructor_measures_again(
        lang, monkeypatch):
    from tests.test_app_teaching import page
    from engine.lab.batch_curve import Curve
    from engine.config import resolve_device
    from ui.instructor import passcode

    monkeypatch.delenv(passcode.ENV, raising=False)
    sizes = (1, 2, 4, 8, 16, 32, 64)
    samples = {b: [_sample(100 * b, 1 + b / 50)] * 3 for b in sizes}
    curve = Curve(curve_rows(samples), list(sizes) * 3, 3, 16, "cpu", 2, time.time(), 12.0, 11.0)
    batch_measure.CURVES.forget()
    key = batch_measure.key("tiny", resolve_device("auto"), sizes, 16)
    batch_measure.CURVES.request(key, lambda job: curve).wait()
    try:
        for instructor in (False, True):
            at = page("pages/why_batch.py", lang)
            if instructor:
                at.session_state["instructor"] = True
                at.run()
            keys = {b.key for b in at.button}
            assert "why-batch.measure" not in keys  # kept: nobody measures it again by visiting
            assert ("why-batch.remeasure" in keys) == instructor
            when = time.strftime("%H:%M", time.localtime(curve.started))
            assert any(when in c.value and "2" in c.value for c in at.caption), "where and when it was measured"
            assert at.dataframe and not at.exception
    finally:
        batch_measure.CURVES.forget()
