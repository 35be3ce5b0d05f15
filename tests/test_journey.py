"""Following one request (engine/lab/journey.py, ui/views/journey.py): its stages cover every step from its arrival
to its end with no gap, each step's state is what the engine's snapshot of that step says, a pre-emption frees its
blocks and sends it back to the queue (or straight into a new prefill), a waiting request is given no blocks, and
the words say so in both languages."""
import pytest

from engine import load_model
from engine.lab.experiment import run_requests, workload_requests
from engine.lab.journey import STATES, journey, stages, stages_so_far, steps_of
from engine.lab.workload import engine_config_for, preset


@pytest.fixture(scope="module")
def preempting_run():
    """long-context on 64 blocks: requests are preempted and come back (random weights: the tiny model's schedule)."""
    loaded = load_model("random-small")
    workload = preset("long-context")
    return run_requests(loaded, workload_requests(loaded, workload, 0), engine_config_for(workload))


def test_every_request_is_followed_from_arrival_to_its_end(preempting_run):
    snaps, run = preempting_run.snapshots, preempting_run
    preempted_seen = 0
    for request in run.requests:
        rid = request.request_id
        steps = steps_of(snaps, rid)
        assert steps, rid
        numbers = [s.step for s in steps]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), rid  # no gap
        by_step = {s.step: s for s in snaps}
        for s in steps:
            snap = by_step[s.step]
            ran = next((b for b in snap.batch if b.request_id == rid), None)
            assert s.state in STATES
            if s.state == "prefill":
                assert ran is not None and ran.num_prefill_tokens == s.tokens > 0
            if s.state == "decode":
                assert ran is not None and not ran.num_prefill_tokens
            if s.state == "waiting":
                assert rid in snap.waiting and ran is None and s.wait == snap.waits.get(rid)
            if s.state == "preempted":
                assert rid in snap.preempted and not s.blocks  # recompute: every block freed
            assert s.blocks == tuple(snap.block_tables.get(rid, ()))
        assert steps[-1].state == "finished" and not steps[-1].blocks
        stages = journey(snaps, rid)
        assert stages[0].first == numbers[0] and stages[-1].last == numbers[-1]
        assert all(a.last + 1 == b.first for a, b in zip(stages, stages[1:]))
        assert sum(s.state == "preempted" for s in stages) == request.num_preemptions
        for a, b in zip(stages, stages[1:]):
            if a.state == "preempted":  # back to the queue, or let in again at once (its prompt computed anew)
                assert b.state in ("waiting", "prefill") and b.blocks_before == 0
            assert b.blocks_before == a.blocks_after
            if b.state == "waiting":
                assert b.blocks_after == b.blocks_before  # a waiting request is given no blocks
        preempted_seen += request.num_preemptions
    assert preempted_seen > 0  # the run does preempt: the journey was tried on it


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_journey_in_words_names_each_stage_in_the_students_language(preempting_run, lang, monkeypatch):
    import re

    from ui.shell import i18n
    from ui.views.journey import journey_frame_html

    monkeypatch.setattr(i18n, "lang", lambda: lang)
    rid = next(r.request_id for r in preempting_run.requests if r.num_preemptions)
    stages = journey(preempting_run.snapshots, rid)
    steps = [s.step for s in preempting_run.snapshots]
    so_far = stages_so_far(steps_of(preempting_run.snapshots, rid))
    html = journey_frame_html(rid, so_far, steps, len(steps) - 1, "recompute")
    assert html.count("<tr>") == len(stages) + 1
    words = {"zh": ("被抢占", "回收", "预填充", "完成"), "en": ("preempted", "freed", "prefill", "finished")}[lang]
    assert all(w in html for w in words), html
    assert bool(re.search(r"[\u4e00-\u9fff]", html)) == (lang == "zh")
    at = next(s for s in stages if s.state == "preempted")
    html = journey_frame_html(rid, so_far, steps, steps.index(at.first), "recompute")
    assert "◀" in html and html.count("<tr>") == stages.index(at) + 2


def test_the_journey_shows_nothing_after_the_players_step(preempting_run):
    """Paused on a step, the journey ends there: what the request does next is to be predicted, not read. At each
    step its stages are the whole journey's up to that step (the last one cut there)."""
    from ui.views.journey import journey_frame_html

    snaps = preempting_run.snapshots
    steps = [s.step for s in snaps]
    rid = next(r.request_id for r in preempting_run.requests if r.num_preemptions)
    its_steps = steps_of(snaps, rid)
    so_far, whole = stages_so_far(its_steps), journey(snaps, rid)
    for now in range(its_steps[0].step, its_steps[-1].step + 1):
        shown = so_far[now]
        assert shown == tuple(stages(its_steps[:now - its_steps[0].step + 1]))
        assert shown[-1].last == now and all(a == b for a, b in zip(shown[:-1], whole))
    if its_steps[0].step > steps[0]:  # before it arrived: nothing yet
        before = journey_frame_html(rid, so_far, steps, steps.index(its_steps[0].step) - 1, "recompute")
        assert before.count("<tr>") == 0
    mid = its_steps[len(its_steps) // 2].step
    html = journey_frame_html(rid, so_far, steps, steps.index(mid), "recompute")
    assert html.count("<tr>") == len(so_far[mid]) + 1
