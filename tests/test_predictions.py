"""Predict, then observe: a lecture moment with a prediction question waits for it, runs, and shows the
prediction next to the measured figure; in instructor mode it is the room's prediction."""
import pytest

from lessons import load_moments, predictions
from tests.test_app_teaching import page
from app_support import runs_ended

MOMENTS = load_moments()


def test_every_moment_with_runs_asks_for_a_prediction_in_both_languages():
    for m in MOMENTS.values():
        if m.workload and m.page != "real-server":  # that page measures a live HTTP load, not recorded runs
            assert m.predict and m.predict["zh"] and m.predict["en"], m.id


def test_predictions_are_stored_per_moment_and_read_from_the_runs():
    store = {}
    chat = MOMENTS["chat-and-reports"]
    assert predictions.record(store, chat, "three") is None and store == {}
    p = predictions.record(store, chat, "4.5")
    assert p.value == 4.5 and predictions.made(store, "chat-and-reports") == p
    runs = {"static": {"by_class": {"chat": {"ttft_steps": {"p50": 90.0}}}},
            "continuous": {"by_class": {"chat": {"ttft_steps": {"p50": 3.0}}}}}
    assert predictions.measured(chat, runs) == 30.0
    uniform = MOMENTS["uniform-control"]
    assert predictions.record(store, uniform, "faster") is None
    assert predictions.record(store, uniform, "same").value == "same"
    assert predictions.measured(uniform, {"static": {"steps": 300}, "continuous": {"steps": 299}}) == "same"
    assert predictions.measured(uniform, {"static": {"steps": 600}, "continuous": {"steps": 300}}) == "continuous"
    waste = MOMENTS["contiguous-vs-paged"]
    assert predictions.measured(waste, {"contiguous": {"kv_waste_share": 0.4}, "paged": {}}) == pytest.approx(40)


@pytest.mark.parametrize("instructor", [False, True])
def test_prediction_then_run_then_reveal(instructor):
    at = page("pages/static_vs_continuous.py")
    at.session_state["instructor"] = instructor
    next(b for b in at.button if b.key == "static-vs-continuous.moment-btn.online-uniform").click().run()
    assert not at.session_state["static-vs-continuous.runs"] if "static-vs-continuous.runs" in at.session_state \
        else True  # nothing runs before the prediction
    asked = "Ask the room first" if instructor else "Predict first"
    assert any(asked in m.value for m in at.markdown)
    at.text_input(key="pred.online-uniform.value").input("not a number")
    next(b for b in at.button if b.label == "Save the prediction and run").click().run()
    assert any("is a number" in e.value for e in at.error) and "predictions" not in at.session_state or \
        "online-uniform" not in at.session_state["predictions"]
    at.text_input(key="pred.online-uniform.value").input("5")
    next(b for b in at.button if b.label == "Save the prediction and run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    runs_ended(at)  # the reveal reads the finished runs
    runs = at.session_state["static-vs-continuous.runs"]
    measured = predictions.measured(MOMENTS["online-uniform"], {r.label: r.summary() for r in runs})
    who = "The room's prediction" if instructor else "Your prediction"
    shown = predictions.shown(MOMENTS["online-uniform"], measured, "en")  # a ratio of the two runs' TTFT: "28.5×"
    assert shown.endswith("×")
    assert any(i.value == f"{who}: 5× · measured: {shown}" for i in at.info), \
        [i.value for i in at.info]


def test_every_number_prediction_is_shown_with_its_unit():
    """The reveal, the poll's lines and the class view's histograms write a prediction and the measured value as
    people do, in the moment's unit (a bare "measured 2.31" left a student to guess what was measured)."""
    from lessons import load_moments
    from lessons.predictions import shown

    moments = load_moments()
    got = {mid: (shown(m, 2.3127, "en"), shown(m, 2.3127, "zh")) for mid, m in moments.items()
           if m.predict and m.predict["kind"] == "number"}
    assert got["fixed-batch-holes"] == ("2.31×", "2.31×")  # static / continuous steps: a ratio
    assert got["contiguous-vs-paged"] == ("2.3 %", "2.3%")  # a share, scaled to percent
    assert got["prefix-sharing"] == ("2.3 tokens", "2.3 个 token")
    assert got["long-context-preemption"] == ("2.3", "2.3")  # a count of preemptions
    assert all(not en[-1].isdigit() for mid, (en, _) in got.items() if mid != "long-context-preemption"), got
    assert shown(moments["fixed-batch-holes"], None, "en") == "–"


def test_a_choice_is_stored_as_its_index_and_the_room_answers_with_the_choice_most_chose():
    uniform = MOMENTS["uniform-control"]  # choices: static, continuous, same
    assert [predictions.as_number(uniform, c) for c in ("static", "continuous", "same")] == [0.0, 1.0, 2.0]
    assert [predictions.as_choice(uniform, n) for n in (0.0, 1.0, 2.0)] == ["static", "continuous", "same"]
    assert predictions.as_choice(uniform, 3.0) is None and predictions.as_choice(uniform, 0.5) is None
    assert predictions.as_choice(uniform, -1.0) is None
    assert predictions.room_answer(uniform, [2.0, 1.0, 2.0, 0.0]) == 2.0
    assert predictions.room_answer(uniform, [2.0, 1.0]) == 1.0  # a tie: the first in the question's order
    assert predictions.room_answer(uniform, []) is None
    assert predictions.room_answer(MOMENTS["chat-and-reports"], [1.0, 3.0, 10.0]) == 3.0  # numbers: the median


def test_the_next_step_question_says_what_the_engine_did_and_its_naive_answer_is_wrong(tiny):
    """The question's facts (the fixed batch at step 24: five of eight slots running, mixed-8 waiting) are the
    engine's; what it did next (mixed-8 waits on: the batch is closed) is the measured answer, and the answer a
    student guesses from the empty slots (it enters the batch) is wrong. Continuous batching had let it in by then."""
    from engine.lab.experiment import run_requests, workload_requests
    from engine.lab.journey import steps_of
    from engine.lab.workload import engine_config_for, preset
    from ui.labs.variants import of_moment

    moment = MOMENTS["fixed-batch-next-step"]
    p, workload = moment.predict, preset(moment.workload)
    requests = workload_requests(tiny, workload, moment.seed)
    runs = {label: run_requests(tiny, requests, engine_config_for(workload, **s)).snapshots
            for label, s in of_moment(moment)}
    at = next(s for s in runs["static"] if s.step == p["step"])
    held = {r.slot for r in at.requests.values() if r.slot is not None}
    assert len(at.batch) == 5 and len(held) == 5 and dict(of_moment(moment))["static"]["max_num_seqs"] == 8
    journey = {s.step: s for s in steps_of(runs["static"], p["request"])}
    assert journey[p["step"]].state == "waiting" and journey[p["step"]].wait.code == "batch_running"
    measured = predictions.measured(moment, {}, runs)
    assert measured == "waiting" and measured in p["choices"] and "prefill" in p["choices"]
    assert predictions.measured(moment, {}, {}) is None  # no runs yet: nothing measured
    entered = next(s.step for s in steps_of(runs["continuous"], p["request"]) if s.state == "prefill")
    assert entered <= p["step"]
    for lang in ("en", "zh"):
        assert p["request"] in p[lang] and str(p["step"]) in p[lang] and str(p["step"] + 1) in p[lang]


def test_the_next_step_moment_is_asked_by_name_and_follows_its_request():
    """A student takes "Waiting beside empty slots": the prediction is a choice of what the engine does next, in
    the journey's words; after the run, Follow a request opens on the request the question is about, in the run
    it is about, and the reveal names the engine's next step."""
    at = page("pages/static_vs_continuous.py")
    next(b for b in at.button if b.key == "static-vs-continuous.moment-btn.fixed-batch-next-step").click().run()
    radio = at.radio(key="pred.fixed-batch-next-step.value")
    assert radio.options == ["it enters the batch: prefill", "it keeps waiting", "it decodes a token", "it finishes"]
    radio.set_value("prefill")
    next(b for b in at.button if b.label == "Save the prediction and run").click().run()
    runs_ended(at)
    assert not at.exception, [e.value for e in at.exception]
    assert "Your prediction: it enters the batch: prefill · measured: it keeps waiting" in [i.value for i in at.info]
    at.toggle(key="static-vs-continuous.follow").set_value(True).run()
    assert at.selectbox(key="static-vs-continuous.follow.static").value == "mixed-8"
