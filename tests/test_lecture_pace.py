"""Playback paced for a lecture: "auto" plays an ended run in about LECTURE_S seconds (at least AUTO_SPEED steps a
second), a chosen speed is kept as chosen, and "Jump to…" lands, paused, on the first step where a slot idled while
a request waited (a hole), a request was held back for memory or turned away, or a request was preempted, as the
engine's snapshots show them."""
import html
import math
import re

import pytest
import streamlit

from engine import EngineConfig, LLMEngine, SamplingParams
from engine.lab.recorder import LANDMARKS, RunRecorder
from test_app import RUN, STRINGS, app, click, frame_counter
from app_support import runs_ended
from ui.playback import player


def recorded(loaded, **config) -> RunRecorder:
    engine = LLMEngine(loaded, EngineConfig(block_size=4, **config))
    for i in range(12):
        engine.add_request([5 + i] * (4 + 3 * i), SamplingParams(temperature=0.0, max_tokens=2 + 5 * (i % 4),
                                                                 ignore_eos=True), arrival_step=i // 3)
    recorder = RunRecorder([], 4, 512)
    while engine.has_unfinished():
        snap = engine.step()
        recorder.add(snap)
    return recorder


def test_a_slot_continuous_batching_refills_at_the_next_step_is_no_hole(random_small):
    """Two slots, twelve requests, memory to spare: requests finish while others wait, and every slot runs at every
    step, so there is no hole."""
    rec = recorded(random_small, max_num_seqs=2, num_blocks=256)
    snaps = list(rec.snapshots)
    assert any(s.finished and s.waiting for s in snaps)
    assert "hole" not in rec.firsts


@pytest.mark.parametrize("config", [dict(batcher="static", max_num_seqs=4, num_blocks=64),
                                    dict(max_num_seqs=6, num_blocks=14),
                                    dict(kv_layout="contiguous", max_num_seqs=6, num_blocks=30)])
def test_each_landmark_is_the_first_step_it_happened_in(random_small, config):
    rec = recorded(random_small, **config)
    snaps = list(rec.snapshots)
    expected = {
        "hole": next((i for i, s in enumerate(snaps) if s.waiting and len(s.batch) < len(s.slots)), None),
        "refusal": next((i for i, s in enumerate(snaps) if s.rejected or any(
            w.code in ("memory", "fragmentation") for w in s.waits.values())), None),
        "preemption": next((i for i, s in enumerate(snaps) if s.preempted), None)}
    assert rec.firsts == {k: v for k, v in expected.items() if v is not None}
    assert set(rec.firsts) <= set(LANDMARKS)
    if config.get("batcher") == "static":
        assert "hole" in rec.firsts  # a fixed batch leaves holes while requests wait

    else:
        assert "preemption" in rec.firsts or "refusal" in rec.firsts  # the cache is too small on purpose


class Ended:
    done, in_background = True, False

    def __init__(self, frames: int):
        self.frames = frames


def test_auto_plays_an_ended_run_in_about_a_lecture_pause_and_a_chosen_speed_stays():
    streamlit.session_state.clear()
    long, short = [Ended(1197)], [Ended(128)]
    assert player.speed("p", long) == math.ceil(1196 / player.LECTURE_S) == 48  # 1,196 steps in about 25 s
    assert player.speed("p", short) == player.AUTO_SPEED  # never slower than 10 steps a second
    computing = [Ended(1197)]
    computing[0].done = False
    assert player.speed("p", computing) == player.AUTO_SPEED  # its length is not known yet
    streamlit.session_state["p.speed"] = 20
    assert player.speed("p", long) == 20


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_jump_to_lands_paused_on_the_first_hole(lang):
    at = app(lang, "pages/static_vs_continuous.py", **{"static-vs-continuous.scale": 0.25})
    click(at, RUN[lang])
    runs_ended(at)
    box = at.selectbox(key="static-vs-continuous.jump_to")
    said = STRINGS["player.jump.hole"][lang].split("{")[0]
    index = next(i for i, o in enumerate(box.options) if o.startswith(said))
    hole = int(re.search(r"(\d+)", box.options[index][len(said):]).group(1))
    box.select_index(index).run()
    frame, last = frame_counter(at)
    assert frame == hole and 0 < hole < last and not at.session_state["static-vs-continuous.playing"]
    assert at.selectbox(key="static-vs-continuous.jump_to").value is None  # the box reads "Jump to…" again
    assert not at.exception


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_page_coloured_by_class_says_which_colour_is_which_class_above_its_pictures(lang):
    """The policies page draws its lanes and queues by class: a legend above them names each class of the run in
    the page's language beside its colours (decode and prefill), the colours the lanes use."""
    from engine.lab.workload import preset
    from viz.palette import class_indices, request_color

    at = app(lang, "pages/policies.py")
    click(at, RUN[lang])
    runs_ended(at)
    bodies = [h.proto.body for h in at.get("html")]
    legend = next(b for b in bodies if "lab-class-legend" in b)
    heading = next(i for i, b in enumerate(bodies) if "lab-class-legend" in b)
    assert any("lab-run-heading" in b for b in bodies[:heading]), "the legend comes after the runs' headings"
    assert not any("lab-run-heading" in b for b in bodies[heading + 1:heading + 3]), "and before their pictures"
    classes = [c.name for c in preset(at.session_state["policies.workload"]).classes]  # the page's workload
    for c, hue in class_indices(classes).items():
        assert STRINGS[f"cls.{c}"][lang] in legend and request_color(hue) in legend and \
            request_color(hue, prefill=True) in legend, (c, legend)
    assert STRINGS["tl.class_legend_note"][lang] in html.unescape(legend)


def test_the_challenge_says_how_far_each_graded_run_has_got(random_small):
    """Submit grades on the class's hidden seeds: the page is told which of them runs and at which step."""
    from engine.lab.challenge import key_pairs

    seen = []
    key_pairs(random_small, "-waited", (3, 4), on_step=lambda k, n, snap: seen.append((k, n, snap.step)))
    assert {(k, n) for k, n, _ in seen} == {(1, 2), (2, 2)}
    for k in (1, 2):
        steps = [s for j, _, s in seen if j == k]
        assert steps == list(range(len(steps))) and len(steps) > 25  # every step, from the first, in order
