"""A retake leaves first-try statistics unchanged (classroom/attempts.py, classroom/aggregates.py): a student who
answers, starts over and answers again adds a latest attempt beside the first, on SQLite and on PostgreSQL."""
import csv
import io

import pytest

from classroom import Store
from pg_support import postgres_server  # noqa: F401  (store_url's PostgreSQL)

QUESTIONS = [f"q{i}" for i in range(10)]


@pytest.fixture
def store(store_url):
    s = Store(store_url)
    yield s
    s.close()


def first_tries_right(quiz: dict) -> int:
    return sum(entry["first_try_correct"] for entry in quiz.values())


def figures(store, code: str, latest: bool = False) -> tuple[dict, dict, dict]:
    return (store.class_quiz(code, latest), store.class_worksheets(code, latest),
            store.class_predictions(code, latest))


def test_a_retake_leaves_first_try_statistics_unchanged_and_the_latest_show_it(store):
    code = "retake-class"
    ada, bo = store.new_student("Ada", code), store.new_student("Bo", code)
    for i, qid in enumerate(QUESTIONS):  # Ada: 3 of 10 right at the first try, 2 more at the second
        store.record_answer(ada, qid, "right" if i < 3 else "wrong", 1, i < 3)
        if 3 <= i < 5:
            store.record_answer(ada, qid, "right", 2, True)
        store.record_answer(bo, qid, "right", 1, True)
    store.record_grading(ada, "t1", False, {"evidence": False})
    store.record_prediction(ada, "p1", 1.0, 4.0)
    before = figures(store, code)
    assert first_tries_right(before[0]) == 3 + 10 and figures(store, code, latest=True) == before

    store.start_over(ada)
    for qid in QUESTIONS:  # the retake: every answer right at the first try
        store.record_answer(ada, qid, "right", 1, True)
    store.record_grading(ada, "t1", True, {"evidence": True})
    store.record_prediction(ada, "p1", 4.0, 4.0)
    quiz, tasks, preds = figures(store, code)
    latest_quiz, latest_tasks, latest_preds = figures(store, code, latest=True)

    assert (quiz, tasks, preds) == before  # first tries: as they were, 3/10 for Ada
    assert first_tries_right(quiz) == 3 + 10 and sum(e["second_try_correct"] for e in quiz.values()) == 2
    assert first_tries_right(latest_quiz) == 10 + 10  # the latest attempts: Ada's retake, 10/10
    assert quiz["q9"]["answers"] == {"wrong": 1, "right": 1} and latest_quiz["q9"]["answers"] == {"right": 2}
    assert tasks == {"t1": {"students": 1, "passed": 0, "criteria": {"evidence": 0}}}
    assert latest_tasks == {"t1": {"students": 1, "passed": 1, "criteria": {"evidence": 1}}}
    assert (preds["p1"]["values"], latest_preds["p1"]["values"]) == ([1.0], [4.0])
    assert store.class_attempts(code) == {"student 1": (2, 2), "student 2": (1, 1)}

    rows = list(csv.DictReader(io.StringIO(store.class_csv(code))))  # the export: both attempts, told apart
    ada_quiz = [r for r in rows if r["student"] == "student 1" and r["kind"] == "quiz"]
    assert sorted({(r["attempt"], r["latest"]) for r in ada_quiz}) == [("1", "False"), ("2", "True")]
    first = [r for r in ada_quiz if r["attempt"] == "1" and r["try"] == "1"]
    latest = [r for r in ada_quiz if r["attempt"] == "2"]
    assert (sum(r["correct"] == "True" for r in first), len(first)) == (3, 10)
    assert (sum(r["correct"] == "True" for r in latest), len(latest)) == (10, 10)
    assert {(r["kind"], r["attempt"], r["answer"]) for r in rows if r["student"] == "student 1"
            and r["kind"] != "quiz"} == {("worksheet", "1", '{"evidence": false}'), ("prediction", "1", "1.0"),
                                         ("worksheet", "2", '{"evidence": true}'), ("prediction", "2", "4.0")}


def test_a_second_retake_and_a_new_quiz_attempt_never_move_the_first_attempt(store):
    code = "retake-twice"
    tok = store.new_student("Cy", code)
    store.record_answer(tok, "q0", "wrong", 1, False)
    store.clear_quiz(tok)  # a new quiz attempt, then two starts over
    store.record_answer(tok, "q0", "wrong again", 1, False)
    store.start_over(tok)
    store.start_over(tok)
    store.record_answer(tok, "q0", "right", 1, True)
    q, now = store.class_quiz(code)["q0"], store.class_quiz(code, latest=True)["q0"]
    assert (q["answers"], q["first_try_correct"]) == ({"wrong": 1}, 0)
    assert (now["answers"], now["first_try_correct"]) == ({"right": 1}, 1)
    assert store.class_attempts(code) == {"student 1": (3, 4)}
    attempts = sorted(r["attempt"] for r in csv.DictReader(io.StringIO(store.class_csv(code))))
    assert attempts == ["1", "2", "4"]


def test_a_polls_measured_value_goes_beside_the_prediction_of_the_attempt_the_student_is_in(store):
    code = "retake-poll"
    tok = store.new_student("Di", code)
    store.record_prediction(tok, "p1", 1.0)
    store.start_over(tok)
    store.record_prediction(tok, "p1", 2.0)
    poll = store.open_poll(code, "p1")
    store.answer_poll(poll, tok, 2.0)
    assert store.reveal_poll(poll, 3.5)
    assert store.predictions(tok)["p1"].measured == 3.5
    assert store.class_predictions(code) == {"p1": {"values": [1.0], "measured": None}}  # the first, as it was
    assert store.class_predictions(code, latest=True) == {"p1": {"values": [2.0], "measured": 3.5}}
