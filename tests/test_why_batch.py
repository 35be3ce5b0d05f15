"""Why batch?: each batch size measured repeatedly (median and range), drawn on round axis ticks."""
from engine.lab.experiment import measure_batch_curve
from viz.charts import batch_curve, nice_ticks

LABELS = {"tok_per_s": "tok/s", "ms_per_step": "ms/step", "batch_size": "batch"}


def test_every_size_is_measured_repeatedly_and_reported_as_median_within_its_range(random_small):
    seen = []
    rows = measure_batch_curve(random_small, [4, 1], new_tokens=4, reps=3, on_progress=lambda f, b: seen.append(b))
    assert [r["batch"] for r in rows] == [1, 4] and seen == [1, 4] * 3  # round-robin over the sizes
    for r in rows:
        assert r["reps"] == 3
        assert r["tok_per_s_min"] <= r["tok_per_s"] <= r["tok_per_s_max"]
        assert r["ms_per_step_min"] <= r["ms_per_step"] <= r["ms_per_step_max"]


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
