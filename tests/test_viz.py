"""Figure builders: valid plotly figures (they skip validation at draw time, so it happens here),
drawn from what the snapshots say."""
import base64
import io

import numpy as np
import plotly.graph_objects as go
import pytest
from PIL import Image

from engine.lab.experiment import LiveRun, workload_requests
from engine.lab.workload import engine_config_for
from engine.lab.metrics import kv_timeline
from engine.lab.workload import preset
from viz.blocks import block_pool, grid_shape
from viz.charts import batch_curve, class_boxes, grouped_bars, history_chart, memory_split
from viz.figure import Look, grid_png
from viz.html import block_tables_html, queue_html
from viz.palette import color_indices
from viz.timeline import COLORSCALE, slot_timeline, timeline_column

LABELS = {k: k for k in ("prompt", "output", "idle", "prefill", "decode", "held", "step", "slot", "preempted",
                         "waiting", "blocked", "waiting_since", "block", "slots_filled", "shared_by", "free",
                         "free_cached",
                         "logical", "physical", "logical_block", "token_states", "reserved", "internal_fragmentation",
                         "external_fragmentation", "why_fragmentation", "tok_per_s", "ms_per_step", "batch_size",
                         "queue_steps")}


@pytest.fixture(scope="module")
def run(tiny):
    workload = preset("chat-and-reports").scaled(0.4)
    r = LiveRun(tiny, workload_requests(tiny, workload, seed=0), engine_config_for(workload, kv_layout="contiguous"))
    r.run_to_end()
    return r


@pytest.fixture(scope="module")
def columns(run):
    colors = color_indices(q.request_id for q in run.trace_requests)
    snaps = run.snapshots
    return [timeline_column(s, snaps[i - 1] if i else None, colors, LABELS) for i, s in enumerate(snaps)]


def validated(fig) -> go.Figure:
    go.Figure(fig.to_dict())  # full validation: raises on any misspelt property
    return fig


@pytest.mark.parametrize("hover", [True, False])
def test_timeline_draws_what_ran(run, columns, hover):
    frame = 30
    fig = validated(slot_timeline(columns, frame, run.frames, LABELS, Look(hover=hover)))
    assert fig.layout.xaxis.range == (-0.5, 119.5)  # the axis is fixed, whatever the frame
    if hover:
        z = np.array(fig.data[0].z, dtype=float)
        busy = np.count_nonzero(~np.isnan(z[:, frame]) & (z[:, frame] > 0))
        snap = run.snapshots[frame]
        in_batch = {b.slot for b in snap.batch}
        assert busy == sum(1 for b in snap.batch) + sum(
            1 for s, rid in enumerate(snap.slots) if rid and s not in in_batch)
        assert np.isnan(z[:, frame + 1:]).all()  # the future is blank
    else:
        assert fig.data[0].type == "image" and fig.data[0].source.startswith("data:image/png;base64,")


def test_column_marks_prefill_decode_and_idle(run, columns):
    snap = next(s for s in run.snapshots if s.num_prefill_tokens and s.num_decode_tokens and None in s.slots)
    col = columns[snap.step]
    for b in snap.batch:
        assert (col.z[b.slot] > 20) == (b.num_prefill_tokens > 0)
    idle = [i for i, rid in enumerate(snap.slots) if rid is None and i not in {b.slot for b in snap.batch}]
    assert all(col.z[i] == 0 for i in idle)


def test_block_pool_colours_owned_blocks_and_outlines_writes(run):
    snap = run.snapshots[40]
    for hover in (True, False):
        fig = validated(block_pool(snap, color_indices(snap.block_owner), LABELS, hover=hover))
        written = fig.data[2]
        assert len(written.x) == len(snap.written_blocks)
    rows, cols = grid_shape(snap.num_blocks)
    z = np.array(block_pool(snap, color_indices(snap.block_owner), LABELS).data[0].z, dtype=float).ravel()
    owned = [b for b in range(snap.num_blocks) if snap.block_ref_count[b]]
    assert all(z[b] >= 2 for b in owned) and all(z[b] < 2 for b in range(snap.num_blocks) if b not in owned)


def test_grid_png_has_one_cell_per_code():
    codes = np.array([[0, 1, np.nan], [21, 40, 5]])
    png = Image.open(io.BytesIO(base64.b64decode(grid_png(codes, COLORSCALE, 4, 5).split(",")[1])))
    assert png.size == (3 * 4, 2 * 5)
    assert png.getpixel((0, 0)) != png.getpixel((4, 0))  # idle vs a request colour
    assert png.getpixel((8, 0)) == (255, 255, 255)  # blank future
    assert png.getpixel((3, 0)) == (255, 255, 255)  # the gap between cells


def test_memory_split_and_static_charts_are_valid(run):
    rows = kv_timeline(run.snapshots)
    fig = validated(memory_split(rows, 50, run.frames, LABELS))
    shares = np.array([trace.y for trace in fig.data])
    assert np.allclose(shares.sum(axis=0), 1.0)
    validated(batch_curve([{"batch": 1, "tok_per_s": 10, "ms_per_step": 1}, {"batch": 8, "tok_per_s": 70,
                                                                             "ms_per_step": 1.1}], LABELS))
    validated(class_boxes({"a": [{"request_class": "chat", "queue_steps": 3}]}, "queue_steps", LABELS))
    validated(grouped_bars({"fcfs": {"chat": 0.5}}, LABELS, "SLO", percent=True))
    validated(history_chart([{"name": "#1", "steps": 3}], "steps", "steps"))


def test_html_views_escape_and_show_the_queue(run):
    snap = next(s for s in run.snapshots if s.waiting and s.blocked)
    html = queue_html(snap, {}, LABELS)
    assert html.count("border-radius") == min(48, len(snap.waiting)) and "box-shadow" in html  # the blocked head
    crowd = snap.__class__(**{**snap.__dict__, "waiting": snap.waiting * 3})
    cut = queue_html(crowd, {}, {**LABELS, "queue_more": "{n} more not drawn"}, capacity=1)
    assert f">{len(crowd.waiting) - 1} more not drawn</span>" in cut  # in words, not a bare "+n"
    assert cut.count("border-radius") == 1
    tables = block_tables_html(snap, [r for r in snap.slots if r], {}, LABELS, 40)
    first = next(r for r in snap.slots if r)
    assert all(f">{b}</span>" in tables for b in snap.block_tables[first])
    evil = snap.__class__(**{**snap.__dict__, "waiting": ("<script>x</script>",), "requests": {}})
    assert "<script>" not in queue_html(evil, {}, LABELS)


def test_a_prediction_histogram_counts_every_value_and_marks_the_measured_one():
    from viz.classroom import bins, prediction_histogram
    values = [1.0, 1.2, 1.5, 2.0, 2.0, 3.7, 9.5]
    start, width, counts = bins(values, 4.2)
    assert sum(counts) == len(values) and start <= min(values) and start + width * len(counts) > max(values)
    for v in values:  # each value lands in the bin that covers it
        i = int((v - start) // width)
        assert counts[i] > 0
    labels = {"count": "n", "value": "v", "measured": "measured", "none": "none yet"}
    fig = validated(prediction_histogram(values, 4.2, labels))
    assert sum(fig.data[0].y) == len(values)
    assert fig.layout.shapes[0].x0 == 4.2 and "4.2" in fig.layout.annotations[0].text
    assert sum(validated(prediction_histogram([3.0, 3.0], None, labels)).data[0].y) == 2  # all equal: one bin
    empty = validated(prediction_histogram([], None, labels))
    assert not empty.data and empty.layout.annotations[0].text == "none yet"


def test_answer_and_criteria_bars_show_the_counts():
    from viz.classroom import RIGHT, answer_bars, criteria_bars
    fig = validated(answer_bars({"a": 3, "b": 1}, {"b"}, {"count": "n"}))
    assert list(fig.data[0].x) == [3, 1] and list(fig.data[0].marker.color)[1] == RIGHT
    fig = validated(criteria_bars({"names the cost": 2, "gives a number": 0}, 3, {"students": "n"}))
    assert list(fig.data[0].x) == [2, 0] and fig.layout.xaxis.range == (0, 3)


def test_a_students_answer_in_a_bar_label_is_text_not_markup():
    from viz.classroom import answer_bars
    fig = validated(answer_bars({"<b>bold</b>": 2, "a & b": 1}, {"a & b"}, {"count": "n"}))
    assert list(fig.data[0].y) == ["&lt;b&gt;bold&lt;/b&gt;", "a &amp; b"]
