"""The quiz page takes every question type in both languages, and bad input gets a clear message in the
student's language, no traceback and no try used: nothing picked, nothing ticked, an unticked two-tier reason, an
ordering left half done, a prediction that is not a number, a numeric answer before its run. A two-tier question
counts only with both tiers right and says which tier was not; a multiple-select shows its per-option credit (never
as the score); a
prediction's Run button waits for the prediction."""
import re

import pytest

from lessons import load_quiz
from tests.test_app_teaching import answer, page

CJK = re.compile(r"[\u4e00-\u9fff]")


def show(at, qid: str) -> None:
    at.session_state["quiz.index"] = at.session_state["quiz.order"].index(qid)
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def submit(at, qid: str) -> list[str]:
    next(b for b in at.button if b.key == f"quiz.q.{qid}.submit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return [e.value for e in at.error]


def in_language(text: str, lang: str) -> bool:
    return bool(CJK.search(text)) == (lang == "zh")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_question_refuses_an_empty_answer_with_a_message_and_no_try(lang):
    questions = {q.id: q for q in load_quiz(lang)}
    at = page("pages/quiz.py", lang)
    types = set()
    for qid in at.session_state["quiz.order"]:
        show(at, qid)
        errors = submit(at, qid)
        assert errors and all(in_language(e, lang) for e in errors), (qid, errors)
        assert qid not in at.session_state["quiz.attempt"].tries, qid
        types.add(questions[qid].type)
    assert types == {"single", "multiple", "two_tier", "ordering", "numeric"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_two_tier_needs_both_tiers_and_says_which_one_was_wrong(lang):
    q = next(q for q in load_quiz(lang) if q.type == "two_tier")
    at = page("pages/quiz.py", lang)
    show(at, q.id)
    assert len([r for r in at.radio if r.key.startswith(f"quiz.q.{q.id}")]) == 2  # the answer, then the reason
    at.radio(key=f"quiz.q.{q.id}.a").set_value(q.answer).run()
    errors = submit(at, q.id)
    assert len(errors) == 1 and in_language(errors[0], lang) and q.id not in at.session_state["quiz.attempt"].tries
    wrong_reason = (q.reason + 1) % len(q.reasons)
    at.radio(key=f"quiz.q.{q.id}.r").set_value(wrong_reason).run()
    submit(at, q.id)
    assert at.session_state["quiz.attempt"].awaiting_retry(q.id)  # a right answer with a wrong reason: not right
    answer(at, q, {"answer": q.answer, "reason": wrong_reason}, key=f"quiz.q.{q.id}.2")
    submit(at, q.id)
    graded = at.session_state["quiz.attempt"].results[q.id]
    assert not graded.correct and graded.tiers == (True, False)
    captions = [c.value for c in at.caption]
    said = {"en": "The answer is right but the reason is not", "zh": "答案对了，理由不对"}[lang]
    assert any(said in c for c in captions), captions
    assert any(q.reasons[q.reason] in m.value for m in at.markdown)  # the expected answer names the right reason


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_multiple_select_shows_its_per_option_credit(lang):
    q = next(q for q in load_quiz(lang) if q.id == "batch-curve-reading")
    at = page("pages/quiz.py", lang)
    show(at, q.id)
    assert not any(str(len(q.answer)) in c.value for c in at.caption)  # the page does not say how many are right
    for try_key in (f"quiz.q.{q.id}", f"quiz.q.{q.id}.2"):
        answer(at, q, [0, 1], key=try_key)  # one right option left out
        submit(at, q.id)
    attempt = at.session_state["quiz.attempt"]
    assert attempt.done(q.id) and not attempt.results[q.id].correct
    assert attempt.results[q.id].credit == pytest.approx(0.8) and attempt.score()["first"] == 0
    shown = " ".join(c.value for c in at.caption)
    assert ("4 of 5 options" if lang == "en" else "5 项中有 4 项") in shown, shown
    # per-option credit is feedback on the question, never shown as the score: no total of it anywhere on the page
    assert "credit" not in attempt.score()
    assert not any(("Credit" if lang == "en" else "逐项得分") in text for text in
                   [c.value for c in at.caption] + [s.value for s in at.subheader]), shown


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_prediction_is_committed_before_its_run_and_a_bad_one_is_refused(lang):
    q = next(q for q in load_quiz(lang) if q.predict and q.compare is None)
    at = page("pages/quiz.py", lang)
    show(at, q.id)
    run = next(b for b in at.button if b.key == f"quiz.q.{q.id}.run")
    assert run.disabled
    at.text_input(key=f"quiz.q.{q.id}").input("about double").run()
    next(b for b in at.button if b.key == f"quiz.q.{q.id}.commit").click().run()
    assert not at.exception and at.session_state["quiz.predicted"] == {}
    assert any(in_language(e.value, lang) for e in at.error)
    at.text_input(key=f"quiz.q.{q.id}").input("1.5").run()
    next(b for b in at.button if b.key == f"quiz.q.{q.id}.commit").click().run()
    assert at.session_state["quiz.predicted"] == {q.id: "1.5"}
    assert not next(b for b in at.button if b.key == f"quiz.q.{q.id}.run").disabled
    assert not any(w.key == f"quiz.q.{q.id}" for w in at.text_input)  # committed: no more typing
    errors = submit(at, q.id)  # committed, but not run yet
    assert errors and q.id not in at.session_state["quiz.attempt"].tries


def test_two_tier_tries_and_a_graded_prediction_come_back_from_the_link():
    """Stored as the student gave them ({"answer", "reason"}; {"answer", "measured"}) and replayed on a reload."""
    from classroom import get_store
    from tests.test_progress import session

    questions = load_quiz("en")
    two = next(q for q in questions if q.type == "two_tier")
    predict = next(q for q in questions if q.predict and q.unit == "steps")
    at = session()
    show(at, two.id)
    answer(at, two, {"answer": two.answer, "reason": (two.reason + 1) % len(two.reasons)})
    submit(at, two.id)
    show(at, predict.id)
    at.text_input(key=f"quiz.q.{predict.id}").input("256").run()
    next(b for b in at.button if b.key == f"quiz.q.{predict.id}.commit").click().run()
    at.session_state["quiz.measured"][predict.id] = 251.0  # as if its runs were made
    submit(at, predict.id)
    token = at.session_state["progress.token"]
    stored = {a.question_id: a.answer for a in get_store().quiz_answers(token)}
    assert stored[two.id] == {"answer": two.answer, "reason": (two.reason + 1) % len(two.reasons)}
    assert stored[predict.id] == {"answer": "256", "measured": 251.0}

    back = session(link=token)
    attempt = back.session_state["quiz.attempt"]
    assert attempt.awaiting_retry(two.id) and attempt.results[two.id].tiers == (True, False)
    assert attempt.done(predict.id) and attempt.results[predict.id].correct and attempt.tries[predict.id] == 1
    assert back.session_state["quiz.predicted"] == {predict.id: "256"}
    assert back.session_state[f"quiz.q.{two.id}.a"] == two.answer
    show(back, predict.id)
    assert any("You predicted 256 steps" in c.value for c in back.caption), [c.value for c in back.caption]


def test_the_class_view_labels_two_tier_multiple_and_numeric_answers_as_students_gave_them():
    import json

    from ui.instructor.class_view import _correct_labels, answer_label

    qs = {q.id: q for q in load_quiz("en")}
    two, multiple, which = qs["batch-utilisation"], qs["batch-curve-reading"], qs["fcfs-longest-wait"]
    right = json.dumps({"answer": two.answer, "reason": two.reason})
    assert answer_label(two, right) in _correct_labels(two)
    assert two.reasons[two.reason] in answer_label(two, right)
    assert answer_label(two, json.dumps({"answer": two.answer, "reason": 0})) not in _correct_labels(two)
    assert answer_label(multiple, "[3, 0, 1]") in _correct_labels(multiple)  # ticked in the shuffled order
    assert answer_label(which, json.dumps({"answer": "support", "measured": {"support": 502}})) == \
        dict(which.classes)["support"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_numeric_question_is_asked_on_the_students_own_variant(lang):
    """The prompt states the student's own figures (requests, max_num_seqs), and the runs' caption the variant's
    seed (tests/test_quiz_variants.py: two students draw other variants)."""
    from lessons.quiz_variants import variant

    q = next(q for q in load_quiz(lang) if q.id == "uniform-steps-predict")
    at = page("pages/quiz.py", lang)
    show(at, q.id)
    v = variant(q.id, at.session_state["progress.token"])
    text = " ".join(m.value for m in at.markdown)
    assert f"**{v.slots}**" in text and "{" not in text, text
    assert v.output and re.search(rf"\*\*{v.output}\b", text), text  # its own output length, not the preset's 64
    assert any(str(v.seed) in c.value and in_language(c.value, lang) for c in at.caption)
