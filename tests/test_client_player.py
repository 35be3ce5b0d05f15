"""In-browser playback shows exactly what the server-side player draws: the frames a browser is sent,
decoded as ui/playback/client_player.js and ui/playback/live_chart.html decode them, equal the server's figure and HTML
for the same frame."""
import base64
import io
import json
import re

import numpy as np
import pytest
from PIL import Image

from engine.lab.experiment import LiveRun, workload_requests
from engine.lab.workload import engine_config_for
from engine.lab.workload import preset
from ui.playback import client_player, frame_files
from viz.figure import Look, grid_png
from viz.html import queue_html
from viz.palette import color_indices
from viz.timeline import COLORSCALE, slot_timeline, timeline_column, timeline_frames

LABELS = {k: k for k in ("prompt", "output", "idle", "prefill", "decode", "held", "step", "slot", "preempted",
                         "waiting", "blocked", "waiting_since", "why_fragmentation", "why_memory", "queue_more")}
WINDOW = 24  # a short window: the picture scrolls within a short run


@pytest.fixture(scope="module")
def run(tiny):
    workload = preset("long-context").scaled(0.5)  # pre-emptions: the marks move with the window
    r = LiveRun(tiny, workload_requests(tiny, workload, seed=0), engine_config_for(workload, preemption_mode="swap"))
    r.run_to_end()
    return r


@pytest.fixture(scope="module")
def columns(run):
    colors = color_indices(q.request_id for q in run.trace_requests)
    snaps = run.snapshots
    return [timeline_column(s, snaps[i - 1] if i else None, colors, LABELS) for i, s in enumerate(snaps)]


def browser_timeline(t: dict, frame: int) -> dict:
    """ui/playback/live_chart.html, line for line: timelineWhole's picture and marks (the whole run, drawn once),
    timelineLayout's window, white band over the steps not taken yet, and cursor; returns what shows
    at `frame`: the window of the picture with the band painted over it, and the marks left uncovered."""
    cols, (cw, ch), rows = len(t["z"]), t["cell"], len(t["z"][0])
    whole = np.full((rows * ch, cols * cw, 3), 255, dtype=np.uint8)
    for c in range(cols):
        for r in range(rows):
            whole[r * ch:(r + 1) * ch - 1, c * cw:(c + 1) * cw - 1] = t["rgb"][t["z"][c][r]]
    marks = [(t["steps"][c], s) for c in range(cols) for s in t["preempted"][c]]
    frame = min(frame, cols - 1)
    total, win = t["total"], t["window"]
    start = 0 if total <= win else max(0, min(frame - win + 1, total - win))
    end = max(win, total) if total <= win else start + win
    stop = min(frame + 1, end, cols)
    band = stop - 0.5 if stop < end else None  # the white band's left edge (it reaches the window's end)
    shown = np.full((rows * ch, (end - start) * cw, 3), 255, dtype=np.uint8)
    drawn = min(end, cols) - start
    shown[:, :drawn * cw] = whole[:, start * cw:(start + drawn) * cw]
    if band is not None:
        shown[:, round(band + 0.5 - start) * cw:] = 255
    return {"pixels": shown, "x0": -0.5 + 0.5 / cw + start, "range": [start - 0.5, end - 0.5],
            "marks": [(x, y) for x, y in marks if start - 0.5 < x < end - 0.5 and (band is None or x < band)],
            "cursor": t["steps"][stop - 1] if stop > start else None}


def png_pixels(uri: str) -> np.ndarray:
    return np.array(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGB"))


def test_the_browser_timeline_equals_the_server_timeline_at_every_frame(run, columns):
    total = run.frames + 7  # a longer run beside it: this one stops while the page plays on
    frames = json.loads(json.dumps(timeline_frames(columns, total, window=WINDOW)))  # as the browser gets it
    assert any(c.preempted_slots for c in columns) and run.frames > 2 * WINDOW
    for frame in list(range(0, run.frames, 7)) + [run.frames - 1, total - 1]:
        fig = slot_timeline(columns[:frame + 1], min(frame, run.frames - 1), total, LABELS, Look(hover=False),
                            window=WINDOW).to_dict()
        got = browser_timeline(frames, frame)
        assert np.array_equal(got["pixels"], png_pixels(fig["data"][0]["source"])), frame
        assert got["x0"] == pytest.approx(fig["data"][0]["x0"]), frame
        assert got["range"] == list(fig["layout"]["xaxis"]["range"]), frame
        assert got["marks"] == list(zip(fig["data"][1]["x"], fig["data"][1]["y"])), frame
        assert got["cursor"] == fig["layout"]["shapes"][0]["x0"], frame


def test_a_changed_cell_changes_the_browser_picture(run, columns):
    """The comparison above can fail: one cell off shows in the pixels."""
    frames = json.loads(json.dumps(timeline_frames(columns, run.frames, window=WINDOW)))
    frames["z"][5][0] = (frames["z"][5][0] + 1) % 10
    server = slot_timeline(columns[:6], 5, run.frames, LABELS, Look(hover=False), window=WINDOW).to_dict()
    assert not np.array_equal(browser_timeline(frames, 5)["pixels"], png_pixels(server["data"][0]["source"]))
    assert np.array_equal(png_pixels(grid_png(np.array([[1.0]]), COLORSCALE, 4, 5))[0, 0], frames["rgb"][1])


def test_html_frames_decode_to_the_server_html_of_every_frame(run):
    colors = color_indices(q.request_id for q in run.trace_requests)
    html = lambda i: queue_html(run.snapshots[i], colors, LABELS)  # noqa: E731
    url = client_player.html_frames(run, ("queue-test",), html)
    data = frame_files.read(url)  # what the browser fetches
    for frame in range(run.frames):
        assert client_player.decode(data, frame) == html(frame)
    assert client_player.decode(data, run.frames + 5) == html(run.frames - 1)  # a shorter run holds its last frame
    assert client_player.html_frames(run, ("queue-test",), lambda i: "") == url  # built once, kept with the run
    size = len(json.dumps(data))
    assert size < sum(len(html(i)) for i in range(run.frames)) / 3, size  # shared pieces are sent once


def test_frames_encoded_a_chunk_at_a_time_equal_the_whole_run_encoded_at_once(tiny):
    """A run still being computed is encoded as its steps come (each chunk adds its own frames only); once
    it has ended, what the browser gets equals encoding every frame afresh, and any first n frames
    equal encoding those n alone."""
    workload = preset("long-context").scaled(0.5)
    r = LiveRun(tiny, workload_requests(tiny, workload, seed=0), engine_config_for(workload, preemption_mode="swap"))
    colors = color_indices(q.request_id for q in r.trace_requests)
    html = lambda i: queue_html(r.snapshots[i], colors, LABELS)  # noqa: E731
    sizes = []
    for steps in (5, 17, 40):
        r.ensure(steps - 1)
        partial = frame_files.read(client_player.html_frames(r, ("queue-chunks",), html))
        assert partial == client_player.encode([html(i) for i in range(r.frames)])
        sizes.append(len(partial["frames"]))
    r.run_to_end()
    whole = frame_files.read(client_player.html_frames(r, ("queue-chunks",), html))
    assert sizes == [5, 17, 40] and len(whole["frames"]) == r.frames > 40
    assert whole == client_player.encode([html(i) for i in range(r.frames)])
    encoder = client_player.Encoder()
    encoder.extend(html(i) for i in range(r.frames))
    assert encoder.first(9) == client_player.encode([html(i) for i in range(9)]) and encoder.first(0)["frames"] == []


def test_the_script_survives_streamlits_sanitizer_and_its_file_carries_the_frames_intact():
    frames = client_player.encode(['<div title="a</script>">x</div>', "<b>y</b>"])
    clock = client_player.new_clock(3, 10, 40)
    url = frame_files.publish(client_player.to_json(frames))
    body = client_player.view_body("page.<view>", url, "<b>now</b>", clock)
    script = body.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    assert not re.search(r"<[/\w!]", script)  # DOMPurify drops a script whose text looks like markup
    key, sent_clock, sent_url = json.loads(script.rsplit("track(...", 1)[1].removesuffix(");"))
    assert key == "page.<view>" and sent_clock["id"] == clock["id"] and sent_url == url
    got = frame_files.read(sent_url)
    assert [client_player.decode(got, i) for i in (0, 1)] == ['<div title="a</script>">x</div>', "<b>y</b>"]


def test_the_clock_gives_the_frame_the_server_pauses_on():
    clock = client_player.new_clock(10, 20, 100)
    assert client_player.frame_at(clock, clock["t0"]) == 10
    assert client_player.frame_at(clock, clock["t0"] + 1.01) == 30
    assert client_player.frame_at(clock, clock["t0"] + 60) == 100  # stops at the last frame
    assert client_player.seconds_left(clock) == pytest.approx(4.5, abs=0.1)


@pytest.fixture(scope="module")
def shared_run(tiny):
    workload = preset("shared-system-prompt").scaled(0.5)  # shared, cached and written blocks
    r = LiveRun(tiny, workload_requests(tiny, workload, seed=0),
                engine_config_for(workload, enable_prefix_caching=True, num_blocks=64))
    r.run_to_end()
    return r


def browser_pool(p: dict, frame: int) -> dict:
    """ui/playback/live_chart.html poolFrame, line for line."""
    frame = min(frame, len(p["changes"]) - 1)
    codes = [0] * p["blocks"]
    for changed in p["changes"][:frame + 1]:
        for b, code in changed:
            codes[b] = code
    (rows, cols), (cw, ch) = p["grid"], p["cell"]
    px = np.full((rows * ch, cols * cw, 3), 255, dtype=np.uint8)
    for b, code in enumerate(codes):
        r, c = divmod(b, cols)
        px[r * ch:(r + 1) * ch - 1, c * cw:(c + 1) * cw - 1] = p["rgb"][code]
        stamp = p["stamps"].get(str(code))
        for y in range(ch - 1):
            for x in range(cw - 1):
                if stamp and stamp[1][y * cw + x]:
                    px[r * ch + y, c * cw + x] = stamp[0]
    return {"pixels": px, "shared": [(b % cols, b // cols, f"×{n}") for b, n in p["shared"][frame]],
            "written": [(b % cols, b // cols) for b in p["written"][frame]], "title": p["titles"][frame]}


def test_the_browser_block_pool_equals_the_server_block_pool_at_every_frame(shared_run):
    from viz.blocks import block_pool, pool_frames

    run, colors = shared_run, color_indices(q.request_id for q in shared_run.trace_requests)
    titles = [f"{s.num_used_blocks} used" for s in run.snapshots]
    frames = json.loads(json.dumps(pool_frames(run.snapshots, colors, titles)))
    assert any(frames["shared"]) and any(frames["written"])
    for frame in list(range(0, run.frames, 5)) + [run.frames - 1]:
        fig = block_pool(run.snapshots[frame], colors, LABELS | {"block": "b", "slots_filled": "s", "shared_by": "x",
                                                                  "free": "f", "free_cached": "c"},
                         title=titles[frame], hover=False).to_dict()
        got = browser_pool(frames, frame)
        assert np.array_equal(got["pixels"], png_pixels(fig["data"][0]["source"])), frame
        assert got["shared"] == list(zip(fig["data"][1]["x"], fig["data"][1]["y"], fig["data"][1]["text"])), frame
        assert got["written"] == list(zip(fig["data"][2]["x"], fig["data"][2]["y"])), frame
        assert got["title"] == fig["layout"]["title"]["text"]


def test_the_browser_memory_split_equals_the_server_memory_split(shared_run):
    from engine import kv_split
    from viz.charts import memory_split, split_frames

    final = {rid: r.num_prompt_tokens + r.num_output_tokens for rid, r in shared_run.recorder.requests.items()}
    rows = [kv_split(s, final) for s in shared_run.snapshots]
    frames = json.loads(json.dumps(split_frames(rows)))
    labels = {k: k for k in ("token_states", "reserved", "internal_fragmentation", "external_fragmentation", "free",
                            "step")}
    for frame in (0, 7, len(rows) // 2, len(rows) - 1, len(rows) + 3):
        fig = memory_split(rows, min(frame, len(rows) - 1), len(rows) + 3, labels).to_dict()
        shown = min(frame, len(frames["y"][0]) - 1) + 1  # seriesFrame: every line up to the frame
        for k, trace in enumerate(fig["data"]):
            assert list(trace["x"]) == list(range(shown)) and list(trace["y"]) == frames["y"][k][:shown]


def test_the_next_chunk_is_made_by_the_views_of_the_page_without_drawing_it(tiny):
    """Playing a run still computed in the browser, the next chunk is sent without a page run: the views
    drawn for the first chunk are asked again, under the next chunk's clock (ui/playback/player.py `_extend`), and
    their frames then are the frames of the longer run, on the same line of clocks."""
    import streamlit as st

    workload = preset("long-context").scaled(0.5)
    r = LiveRun(tiny, workload_requests(tiny, workload, seed=0), engine_config_for(workload, preemption_mode="swap"))
    colors = color_indices(q.request_id for q in r.trace_requests)
    html = lambda i: queue_html(r.snapshots[i], colors, LABELS)  # noqa: E731
    r.ensure(40)
    first = client_player.new_clock(0, 10, 15)
    st.session_state[client_player.VIEWS] = {}
    st.session_state[client_player.CLOCK] = first
    try:
        url = client_player.animated("lab.q", lambda: client_player.html_frames(r, ("queue-next",), html))
    finally:
        del st.session_state[client_player.CLOCK]
    assert frame_files.read(url) == client_player.encode([html(i) for i in range(16)])

    following = client_player.new_clock(client_player.frame_at(first), 10, 31, line=first["line"])
    urls = client_player.extended(following)
    assert set(urls) == {"lab.q"} and urls["lab.q"] != url
    assert frame_files.read(urls["lab.q"]) == client_player.encode([html(i) for i in range(32)])
    assert client_player.current() is None  # the page's clock is not left behind
    body = client_player.extension_body(following, urls)
    script = body.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    assert not re.search(r"<[/\w!]", script)
    sent_clock, sent_urls = json.loads(script.rsplit("extend(...", 1)[1].removesuffix(");"))
    assert sent_clock["line"] == first["id"] and sent_clock["last"] == 31 and sent_urls == urls
    del st.session_state[client_player.VIEWS]
