"""The class view's quiz answers: a numeric answer is its number with the question's unit, never the stored
record (`{'answer': '491', 'meas…`), coloured right or wrong against the figure the student's own run measured, with
that figure said above the bars; every student string (an answer, a name) is text in labels, tables and charts."""
import json
import uuid

import pytest
import streamlit as st

from classroom import get_store
from lessons import load_quiz
from ui.instructor.class_view import answer_counts, answer_label, answer_right, measured_label
from viz.classroom import RIGHT, WRONG
from tests.test_class_view import PASSCODE, app_frame_every_run, class_view, configured, enter  # noqa: F401

BOLD = "<b>x</b>"
RATIO = [0.874 / 0.379, 0.874, 0.379]  # fixed-slot-ratio's two runs: 2.31×


def numeric(answer: str, measured=RATIO) -> str:
    return json.dumps({"answer": answer, "measured": measured})


@pytest.mark.parametrize("lang, right, wrong, pct", [("en", "2.3×", "5×", "38 %"), ("zh", "2.3 倍", "5 倍", "38%")])
def test_a_numeric_answer_is_its_number_and_is_right_against_its_own_run(lang, right, wrong, pct):
    qs = {q.id: q for q in load_quiz(lang)}
    q, share = qs["fixed-slot-ratio"], qs["fcfs-support-slo-predict"]
    assert answer_label(q, numeric("2.3")) == right and answer_label(q, {"answer": "5", "measured": RATIO}) == wrong
    assert answer_label(q, numeric("２.3")) == right  # as typed on a phone's full-width keyboard
    assert answer_label(share, numeric("38", 0.4)) == pct
    assert answer_right(q, numeric("2.3")) and not answer_right(q, numeric("5"))
    assert not answer_right(q, numeric("2.3", [5.0, 5.0, 1.0]))  # right is against the figure its run measured
    assert measured_label(q, numeric("2.3")) == ("2.31×" if lang == "en" else "2.31 倍")
    assert measured_label(share, numeric("38", 0.379)) == ("37.9 %" if lang == "en" else "37.9%")
    assert measured_label(qs["batch-limit"], "1") is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_where_students_runs_measured_different_figures_each_answer_stands_beside_its_own(lang):
    st.session_state["lang"] = lang
    q = next(q for q in load_quiz(lang) if q.id == "fixed-slot-ratio")
    unit = "×" if lang == "en" else " 倍"
    beside = "{answer} (measured {measured})" if lang == "en" else "{answer}（实测 {measured}）"
    # the same number, right for the student whose run measured 2.31x and wrong for the one whose run measured 3.2x
    counts, right = answer_counts(q, {numeric("2.3"): 2, numeric("2.3", [3.2, 0.8, 0.25]): 1, numeric("3.2", [3.2, 0.8,
                                                                                                       0.25]): 1})
    mine, theirs, both = (beside.format(answer=f"{a}{unit}", measured=f"{m}{unit}")
                          for a, m in (("2.3", "2.31"), ("2.3", "3.20"), ("3.2", "3.20")))
    assert counts == {mine: 2, theirs: 1, both: 1} and right == {mine, both}
    # one figure for the whole class: the bars are the answers alone (the figure is said once, above them)
    counts, right = answer_counts(q, {numeric("2.3"): 2, numeric("5"): 1})
    assert counts == {f"2.3{unit}": 2, f"5{unit}": 1} and right == {f"2.3{unit}"}


@pytest.fixture
def numeric_class():
    """Three students answer fixed-slot-ratio: two right (2.3 and 2.35), one wrong (5); a fourth, named <b>x</b>,
    has an answer that is that text, as a record the store holds, and an explanation to review."""
    code, db = f"n-{uuid.uuid4().hex[:8]}", get_store()
    q = next(q for q in load_quiz("en") if q.id == "fixed-slot-ratio")
    for name, given, right in (("Ann", "2.3", True), ("Ben", "2.35", True), ("Cy", "5", False), (BOLD, BOLD, False)):
        token = db.new_student(name, code)
        db.record_answer(token, q.id, {"answer": given, "measured": RATIO}, 1, right)
    db.save_draft(token, "paged-attention-purpose", "answer", "Blocks on demand.")  # <b>x</b>'s, for the review
    return code


@pytest.mark.usefixtures("configured")
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_class_view_shows_numeric_answers_as_numbers_coloured_and_student_text_as_text(numeric_class, lang):
    at = enter(class_view(lang), PASSCODE)
    at.text_input(key="class-view.class.widget").input(numeric_class).run()
    assert not at.exception, [e.value for e in at.exception]
    charts = [json.loads(c.proto.spec)["data"][0] for c in at.get("plotly_chart")]
    bars = next(c for c in charts if c.get("orientation") == "h" and any("2.3" in y for y in c["y"]))
    unit = "×" if lang == "en" else " 倍"
    assert bars["y"] == [f"2.3{unit}", f"2.35{unit}", f"5{unit}", "&lt;b&gt;x&lt;/b&gt;"]  # by number; text escaped
    assert bars["marker"]["color"] == [RIGHT, RIGHT, WRONG, WRONG]
    labels = [y for c in charts for y in c.get("y", []) if isinstance(y, str)]
    assert not [y for y in labels if y[:1] in "[{" or "answer" in y], labels  # no stored record as a label
    captions = [c.value for c in at.caption]
    said = {"en": "Their runs measured 2.31×", "zh": "学生的运行测得：2.31 倍"}[lang]
    assert any(c.startswith(said) for c in captions), captions
    at.checkbox(key="class-view.names").check().run()
    table = at.dataframe[0].value
    assert BOLD in table.iloc[:, 0].tolist()  # the name as typed, in a table that renders text
    shown = [m.value for m in at.markdown]
    assert any(m.startswith("**\\<b\\>x\\</b\\>** ·") for m in shown), shown  # the review: a name, not markup
    assert not any(BOLD in m for m in shown)
