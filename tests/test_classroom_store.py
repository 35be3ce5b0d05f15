"""The classroom's storage layer, on SQLite (a temporary file) and on a real PostgreSQL server."""
import csv
import io
import threading

import pytest
from sqlalchemy import create_engine, inspect, text

from classroom import MAX_TEXT, StorageError, Store, get_store, is_token

INJECTION = "'); DROP TABLE students; --"


@pytest.fixture
def store(store_url):
    s = Store(store_url)
    yield s
    s.close()


def test_every_record_type_round_trips(store):
    tok = store.new_student("Ada 林", "cs-101")
    assert is_token(tok) and len(tok) == 22
    me = store.student(tok)
    assert (me.token, me.name, me.class_code) == (tok, "Ada 林", "cs-101")
    store.update_student(tok, "Ada", "cs-102")
    assert (store.student(tok).name, store.student(tok).class_code) == ("Ada", "cs-102")

    store.record_answer(tok, "q-static-01", ["a", 2], 1, False)
    store.record_answer(tok, "q-static-01", 42.5, 2, True)
    store.record_answer(tok, "q-paged-03", "b", 1, True)
    got = {(a.question_id, a.try_no): (a.answer, a.correct) for a in store.quiz_answers(tok)}
    assert got == {("q-static-01", 1): (["a", 2], False), ("q-static-01", 2): (42.5, True),
                   ("q-paged-03", 1): ("b", True)}

    store.save_draft(tok, "task-1", "why", "first")
    store.save_draft(tok, "task-1", "why", "second 第二")
    store.save_draft(tok, "task-1", "how", "x")
    assert store.drafts(tok) == {"task-1": {"why": "second 第二", "how": "x"}}
    store.record_grading(tok, "task-1", False, {"mentions blocks": True, "numbers": False})
    store.record_grading(tok, "task-1", True, {"mentions blocks": True, "numbers": True})
    g = store.gradings(tok)["task-1"]
    assert (g.passed, g.criteria) == (True, {"mentions blocks": True, "numbers": True})

    store.record_prediction(tok, "chat-ttft", 3.0)
    assert store.predictions(tok)["chat-ttft"].measured is None
    store.set_measured(tok, "chat-ttft", 4.25)
    p = store.predictions(tok)["chat-ttft"]
    assert (p.value, p.measured) == (3.0, 4.25)

    store.reach_milestone(tok, "lesson-1")
    store.reach_milestone(tok, "lesson-1")
    store.reach_milestone(tok, "quiz-done")
    assert store.milestones(tok) == {"lesson-1", "quiz-done"}


def test_a_second_submit_of_the_same_try_is_stored_once_and_keeps_the_first(store):
    tok = store.new_student()
    for answer in ("a", "a", "b"):
        store.record_answer(tok, "q1", answer, 1, answer == "a")
    assert [(a.answer, a.try_no) for a in store.quiz_answers(tok)] == [("a", 1)]


def test_start_over_opens_a_new_attempt_that_reads_empty_and_keeps_every_earlier_record(store):
    tok = store.new_student("Bo", "c1")
    other = store.new_student("Cy", "c1")
    for t in (tok, other):
        store.record_answer(t, "q1", "a", 1, True)
        store.save_draft(t, "t1", "f", "text")
        store.record_grading(t, "t1", True, {"c": True})
        store.self_assess(t, "t1", "f", "met")
        store.record_prediction(t, "p1", 1.0, 2.0)
        store.reach_milestone(t, "m1")
    store.mark("c1", tok, "t1", "f", "ok")
    poll = store.open_poll("c1", "p1")
    store.answer_poll(poll, tok, 5.0)
    store.start_over(tok)
    me = store.student(tok)
    assert (me.name, me.attempt, me.quiz_attempt) == ("Bo", 2, 2)
    assert (store.quiz_answers(tok), store.drafts(tok), store.gradings(tok), store.self_assessments(tok),
            store.marks(tok), store.predictions(tok), store.milestones(tok)) == ([], {}, {}, {}, {}, {}, set())
    assert store.poll_values(poll) == [5.0]  # the class's poll is not the student's progress
    assert len(store.quiz_answers(other)) == 1 and store.milestones(other) == {"m1"}

    store.record_answer(tok, "q1", "b", 1, False)  # the new attempt's first try is a row of its own
    store.save_draft(tok, "t1", "f", "again")
    assert [a.answer for a in store.quiz_answers(tok)] == ["b"] and store.drafts(tok) == {"t1": {"f": "again"}}
    rows = list(csv.DictReader(io.StringIO(store.class_csv("c1"))))
    mine = sorted((r["kind"], r["attempt"], r["latest"], r["answer"]) for r in rows if r["student"] == "student 1")
    assert mine == [("prediction", "1", "False", "1.0"), ("quiz", "1", "False", '"a"'), ("quiz", "2", "True", '"b"'),
                    ("worksheet", "1", "False", '{"c": true}')]
    store.start_over(tok, 2, 2)  # the same attempt opened again (a write sent twice): nothing changes
    assert (store.student(tok).attempt, store.drafts(tok)) == (2, {"t1": {"f": "again"}})


def test_a_new_quiz_attempt_keeps_the_earlier_tries_and_the_rest_of_the_progress(store):
    tok = store.new_student("Di", "c1")
    store.record_answer(tok, "q1", "a", 1, False)
    store.save_draft(tok, "t1", "f", "text")
    store.clear_quiz(tok)
    assert (store.student(tok).attempt, store.student(tok).quiz_attempt) == (1, 2)
    assert store.quiz_answers(tok) == [] and store.drafts(tok) == {"t1": {"f": "text"}}
    store.record_answer(tok, "q1", "b", 1, True)
    store.record_answer(tok, "q1", "late", 2, True, quiz_attempt=1)  # a write that waited lands where it was made
    assert [(a.answer, a.try_no) for a in store.quiz_answers(tok)] == [("b", 1)]
    q, now = store.class_quiz("c1")["q1"], store.class_quiz("c1", latest=True)["q1"]
    assert (q["first_try_correct"], q["second_try_correct"], q["answers"]) == (0, 1, {"a": 1})
    assert (now["first_try_correct"], now["answers"]) == (1, {"b": 1})
    with pytest.raises(StorageError) as err:  # an attempt not opened yet
        store.record_answer(tok, "q2", "x", 1, True, quiz_attempt=3)
    assert (err.value.code, err.value.params) == ("bad_value", {"field": "attempt"})


def test_a_database_from_a_newer_version_is_refused_with_both_versions(store_url):
    Store(store_url).close()
    engine = create_engine(store_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE schema_meta SET version = :v"), {"v": Store.schema_version + 1})
    engine.dispose()
    with pytest.raises(StorageError) as err:
        Store(store_url)
    assert err.value.code == "newer_schema"
    assert err.value.params == {"found": Store.schema_version + 1, "supported": Store.schema_version}


def test_reopening_a_database_keeps_its_data_and_version(store_url):
    s = Store(store_url)
    tok = s.new_student("Di")
    s.record_answer(tok, "q1", "a", 1, True)
    s.close()
    again = Store(store_url)
    assert again.student(tok).name == "Di" and len(again.quiz_answers(tok)) == 1
    again.close()


def test_forty_students_submitting_at_once_store_every_answer_exactly_once(store):
    """40 threads, one student each, released together; every answer names its student, so a mix-up shows."""
    tokens = [store.new_student(f"s{i}", "room") for i in range(40)]
    questions = [f"q{j}" for j in range(8)]
    gate = threading.Barrier(len(tokens))
    errors = []

    def student(i, tok):
        try:
            gate.wait()
            for q in questions:
                store.record_answer(tok, q, f"{i}:{q}", 1, i % 2 == 0)
                store.record_answer(tok, q, f"{i}:{q}", 1, i % 2 == 0)  # a double click
                store.save_draft(tok, "t1", q, f"{i} wrote {q}")
        except Exception as exc:  # reported below, with the student it happened to
            errors.append(repr(exc))

    threads = [threading.Thread(target=student, args=(i, t)) for i, t in enumerate(tokens)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    for i, tok in enumerate(tokens):
        answers = store.quiz_answers(tok)
        assert sorted((a.question_id, a.answer) for a in answers) == [(q, f"{i}:{q}") for q in questions]
        assert store.drafts(tok) == {"t1": {q: f"{i} wrote {q}" for q in questions}}
    summary = store.class_quiz("room")
    assert all(summary[q]["students"] == 40 and summary[q]["first_try_correct"] == 20 for q in questions)


def test_one_students_token_reads_nothing_of_another(store):
    alice, bob = store.new_student("Alice", "c1"), store.new_student("Bob", "c1")
    store.record_answer(alice, "q1", "alice's answer", 1, True)
    store.save_draft(alice, "t1", "f", "alice's text")
    store.record_prediction(alice, "p1", 7.0)
    store.reach_milestone(alice, "m1")
    assert (store.quiz_answers(bob), store.drafts(bob), store.gradings(bob), store.predictions(bob),
            store.milestones(bob)) == ([], {}, {}, {}, set())
    guessed = alice[:-1] + ("A" if alice[-1] != "A" else "B")
    assert store.student(guessed) is None and store.quiz_answers(guessed) == []
    with pytest.raises(StorageError) as err:
        store.record_answer(guessed, "q1", "x", 1, True)
    assert err.value.code == "unknown_student"
    # the class's results carry no token, and names only when asked
    csv_text = store.class_csv("c1")
    assert alice not in csv_text and bob not in csv_text and "Alice" not in csv_text
    assert "Alice" in store.class_csv("c1", show_names=True)
    assert alice not in repr(store.class_quiz("c1")) + repr(store.class_predictions("c1"))


def _refusals(tok):
    long_text = "x" * (MAX_TEXT + 1)
    return [
        ("too_long", lambda s: s.save_draft(tok, "t1", "f", long_text)),
        ("too_long", lambda s: s.record_answer(tok, "q1", long_text, 1, True)),
        ("too_long", lambda s: s.new_student("n" * 81)),
        ("bad_value", lambda s: s.record_answer(tok, "q1", {1, 2}, 1, True)),  # not JSON
        ("bad_value", lambda s: s.record_answer(tok, "q1", float("nan"), 1, True)),
        ("bad_value", lambda s: s.record_answer(tok, "q1", "a", 0, True)),
        ("bad_value", lambda s: s.record_answer(tok, "q1", "a", 1, "yes")),
        ("bad_value", lambda s: s.record_answer(tok, "", "a", 1, True)),
        ("bad_value", lambda s: s.save_draft(tok, "t1", "f", b"bytes")),
        ("bad_value", lambda s: s.save_draft(tok, "t1", "f", "nul\x00byte")),
        ("bad_value", lambda s: s.record_grading(tok, "t1", True, {"c": "yes"})),
        ("bad_value", lambda s: s.record_prediction(tok, "p1", float("inf"))),
        ("bad_value", lambda s: s.record_prediction(tok, "p1", "3")),
        ("bad_value", lambda s: s.reach_milestone(tok, "m 1; drop")),
        ("bad_value", lambda s: s.new_student("ok", "class code!")),
        ("bad_value", lambda s: s.update_student(tok, "bell\x07", "c1")),
        ("bad_token", lambda s: s.record_answer("short", "q1", "a", 1, True)),
        ("bad_token", lambda s: s.quiz_answers(INJECTION)),
        ("bad_token", lambda s: s.student(None)),
    ]


def test_oversized_and_malformed_input_is_refused_with_a_code_and_nothing_stored(store):
    tok = store.new_student("Eve", "c1")
    for code, call in _refusals(tok):
        with pytest.raises(StorageError) as err:
            call(store)
        assert err.value.code == code, (code, err.value)
    assert (store.quiz_answers(tok), store.drafts(tok), store.gradings(tok), store.predictions(tok),
            store.milestones(tok)) == ([], {}, {}, {}, set())
    assert store.student(tok).name == "Eve" and store.class_size("c1") == 1
    exact = "y" * MAX_TEXT  # the cap itself is allowed
    store.save_draft(tok, "t1", "f", exact)
    assert store.drafts(tok) == {"t1": {"f": exact}}


def test_sql_in_a_name_an_answer_and_a_draft_is_stored_as_text_and_every_table_survives(store, store_url):
    tok = store.new_student(INJECTION, "c1")
    store.record_answer(tok, "q1", INJECTION, 1, False)
    store.save_draft(tok, "t1", "f", INJECTION)
    for code in (INJECTION, "c1' OR '1'='1"):
        with pytest.raises(StorageError):
            store.class_quiz(code)
    assert store.student(tok).name == INJECTION
    assert store.quiz_answers(tok)[0].answer == INJECTION and store.drafts(tok) == {"t1": {"f": INJECTION}}
    engine = create_engine(store_url)
    assert {"students", "quiz_answers", "drafts", "schema_meta"} <= set(inspect(engine).get_table_names())
    engine.dispose()
    assert store.class_quiz("c1")["q1"]["answers"] == {INJECTION: 1}


def test_class_quiz_counts_first_tries_and_second_try_recoveries(store):
    a, b, c = (store.new_student(n, "c1") for n in "abc")
    store.new_student("elsewhere", "c2")
    store.record_answer(a, "q1", "right", 1, True)
    store.record_answer(b, "q1", "wrong", 1, False)
    store.record_answer(b, "q1", "right", 2, True)
    store.record_answer(c, "q1", "wrong", 1, False)
    store.record_answer(c, "q1", "wrong", 2, False)
    q = store.class_quiz("c1")["q1"]
    assert q["answers"] == {"right": 1, "wrong": 2}
    assert (q["first_try_correct"], q["second_try_correct"], q["students"]) == (1, 1, 3)
    assert store.class_quiz("c2") == {} and store.class_size("c1") == 3


def test_class_worksheets_predictions_and_csv_sum_the_class(store):
    a, b = store.new_student("=cmd()", "c1"), store.new_student("Bo", "c1")
    store.record_grading(a, "t1", True, {"x": True, "y": True})
    store.record_grading(b, "t1", False, {"x": True, "y": False})
    store.record_prediction(a, "p1", 2.0)
    store.record_prediction(b, "p1", 5.0, 3.5)
    assert store.class_worksheets("c1") == {"t1": {"students": 2, "passed": 1, "criteria": {"x": 2, "y": 1}}}
    assert store.class_predictions("c1") == {"p1": {"values": [2.0, 5.0], "measured": 3.5}}
    rows = list(csv.DictReader(io.StringIO(store.class_csv("c1", show_names=True))))
    assert {r["student"] for r in rows} == {"'=cmd()", "Bo"}  # a spreadsheet formula stays text
    assert {r["kind"] for r in rows} == {"worksheet", "prediction"}
    assert {r["student"] for r in csv.DictReader(io.StringIO(store.class_csv("c1")))} == {"student 1", "student 2"}


def test_a_poll_takes_one_answer_per_student_the_last_counts_and_refuses_once_closed(store):
    s1, s2 = store.new_student("a", "c1"), store.new_student("b", "c1")
    outsider = store.new_student("c", "c2")
    assert store.current_poll("c1") is None and store.latest_poll("c1") is None
    first = store.open_poll("c1", "p1")
    second = store.open_poll("c1", "p2")  # opening another closes the first
    assert store.current_poll("c1").id == second and store.current_poll("c1").prompt_id == "p2"
    with pytest.raises(StorageError) as err:
        store.answer_poll(first, s1, 1.0)
    assert err.value.code == "poll_closed"
    store.answer_poll(second, s1, 1.0)
    store.answer_poll(second, s1, 3.0)
    store.answer_poll(second, s2, 2.0)
    with pytest.raises(StorageError) as err:
        store.answer_poll(second, outsider, 9.0)
    assert err.value.code == "unknown_class"
    assert sorted(store.poll_values(second)) == [2.0, 3.0]
    store.close_poll(second, 2.5)
    assert store.current_poll("c1") is None
    latest = store.latest_poll("c1")
    assert (latest.id, latest.state, latest.measured) == (second, "closed", 2.5)
    with pytest.raises(StorageError) as err:
        store.answer_poll(second, s2, 4.0)
    assert err.value.code == "poll_closed"
    with pytest.raises(StorageError) as err:
        store.answer_poll(10_000, s2, 4.0)
    assert err.value.code == "unknown_poll"


def test_a_polls_measured_value_is_published_once_and_a_failure_is_kept_until_a_value_comes(store):
    """Two publishers (the server's job and the instructor's session, or two instructors) write the value once; a
    second "close" keeps it; the students who answered get it as their prediction's measured value."""
    s1, s2, other = (store.new_student(n, "c1") for n in ("a", "b", "c"))
    poll = store.open_poll("c1", "p1")
    for tok, value in ((s1, 2.0), (s2, 4.0)):
        store.answer_poll(poll, tok, value)
        store.record_prediction(tok, "p1", value)
    store.record_prediction(other, "p1", 9.0)  # predicted on their own, never answered the poll
    store.close_poll(poll)
    assert (store.latest_poll("c1").state, store.latest_poll("c1").measured) == ("closed", None)
    assert store.reveal_poll(poll, 3.5) is True
    assert store.reveal_poll(poll, 7.0) is False and store.fail_poll(poll) is False
    store.close_poll(poll)  # a stale second press
    latest = store.latest_poll("c1")
    assert (latest.state, latest.measured) == ("closed", 3.5)
    assert [store.predictions(t)["p1"].measured for t in (s1, s2, other)] == [3.5, 3.5, None]

    failing = store.open_poll("c1", "p2")
    store.close_poll(failing)
    assert store.fail_poll(failing) is True and store.fail_poll(failing) is False
    store.close_poll(failing)
    assert (store.latest_poll("c1").state, store.latest_poll("c1").measured) == ("failed", None)
    with pytest.raises(StorageError) as err:
        store.answer_poll(failing, s1, 1.0)
    assert err.value.code == "poll_closed"
    assert store.reveal_poll(failing, 1.25) is True  # a value that comes after all replaces the failure
    assert (store.latest_poll("c1").state, store.latest_poll("c1").measured) == ("closed", 1.25)
    for call in (store.reveal_poll, store.fail_poll, store.close_poll):
        with pytest.raises(StorageError) as err:
            call(10_000, *([1.0] if call == store.reveal_poll else []))
        assert err.value.code == "unknown_poll"


def test_a_corrupt_database_file_is_refused_as_unavailable(tmp_path):
    path = tmp_path / "lab.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StorageError) as err:
        Store(f"sqlite:///{path}")
    assert err.value.code == "unavailable"


def test_a_database_that_cannot_be_created_is_refused_as_unavailable(tmp_path):
    with pytest.raises(StorageError) as err:
        Store(f"sqlite:///{tmp_path / 'no-such-folder' / 'lab.db'}")
    assert err.value.code == "unavailable"


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "nosuchdb://x", "not a url"])
def test_an_in_memory_or_unknown_database_url_is_refused_as_unavailable(url):
    with pytest.raises(StorageError) as err:
        Store(url)
    assert err.value.code == "unavailable"


def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(tmp_path):
    s = Store(f"sqlite:///{tmp_path / 'lab.db'}")
    with s._engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 1000
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL: no fsync per commit under WAL
    s.close()


def test_get_store_opens_the_database_serving_lab_db_names_once(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVING_LAB_DB", str(tmp_path / "named.db"))
    s = get_store()
    assert s is get_store() and s.url == f"sqlite:///{tmp_path / 'named.db'}"
    assert (tmp_path / "named.db").exists()
    s.close()
