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
