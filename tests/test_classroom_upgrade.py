"""Databases of older versions opened by today's Store: upgraded in place, every row of them kept as it was.
A real version-1 SQLite file (tests/fixtures/classroom-v1.sql, dumped from one the v1 Store made), and a version-4
database made from version 4's own tables (tests/fixtures/schema_v4.py) on SQLite and on PostgreSQL: its records
become each student's first attempt, and a retake after the upgrade leaves them as they were."""
import importlib.util
import sqlite3
from pathlib import Path

from sqlalchemy import create_engine, text

from classroom import Store
from pg_support import postgres_server  # noqa: F401  (store_url's PostgreSQL)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
V1 = FIXTURES / "classroom-v1.sql"
ADA, BO, ANON = "INOcE9pk1vGoPynYJgtpWA", "pJqGCkiyqVaC7QRC_LDaNw", "4YqkGMzhMFh0_zlIWMXGDA"
V1_TABLES = ("schema_meta", "students", "quiz_answers", "drafts", "gradings", "predictions", "milestones", "polls",
             "poll_answers")
ATTEMPT_COLUMNS = ("attempt", "quiz_attempt")


def v1_file(tmp_path) -> Path:
    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path)
    conn.executescript(V1.read_text(encoding="utf-8"))
    conn.close()
    return path


def rows(path: Path) -> dict[str, list]:
    """Every table's rows as {column: value}; the attempt columns version 5 added are set apart (`attempts`)."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        out, attempts = {}, set()
        for t in V1_TABLES:
            found = [dict(r) for r in conn.execute(f"SELECT * FROM {t}").fetchall()]
            attempts |= {r.pop(c) for r in found for c in ATTEMPT_COLUMNS if c in r}
            out[t] = sorted(found, key=repr)
        return {**out, "attempts": attempts}
    finally:
        conn.close()


def test_a_real_version_1_file_is_upgraded_in_place_and_keeps_every_row(tmp_path):
    path = v1_file(tmp_path)
    before = rows(path)
    assert before["schema_meta"] == [{"id": 1, "version": 1}] and len(before["students"]) == 3
    s = Store(f"sqlite:///{path}")
    assert (s.student(ADA).name, s.student(ADA).class_code) == ("Ada 林", "cs-101")
    assert s.drafts(ADA)["hard-requests"] == {"why_1": "Long prompts hold the batch while they prefill."}
    assert [(a.question_id, a.try_no, a.answer) for a in s.quiz_answers(ADA)] == [("q-static-01", 1, 1),
                                                                                   ("q-static-01", 2, 2)]
    assert s.gradings(BO)["chat-slo-goal"].criteria == {"goal.number": True, "goal.who": False}
    assert s.predictions(ADA)["chat-and-reports"].measured == 5.5 and s.milestones(ANON) == {"lesson-1"}
    live = s.current_poll("cs-101")
    assert live.prompt_id == "online-uniform" and s.poll_values(live.id) == [4.0]

    s.self_assess(ADA, "hard-requests", "why_1", "met")
    s.mark("cs-101", ADA, "hard-requests", "why_1", "ok", "clear")
    listed = s.class_explanations("cs-101")
    assert [(x["n"], x["name"]) for x in listed] == [(1, "Ada 林"), (2, "Bo")]
    assert listed[0]["self"] == {"hard-requests": {"why_1": "met"}}
    assert listed[0]["marks"]["hard-requests"]["why_1"].comment == "clear"
    assert (listed[1]["texts"], listed[1]["self"], listed[1]["marks"]) == (
        {"chat-slo-goal": {"goal": "95 % of chats see the first word within 10 steps."}}, {}, {})
    s.close()

    after = rows(path)
    assert after.pop("schema_meta") == [{"id": 1, "version": Store.schema_version}]
    assert after.pop("attempts") == {1}  # every student and every record: the first attempt
    before.pop("schema_meta"), before.pop("attempts")
    assert after == before  # opening it changed no row of version 1's tables

    again = Store(f"sqlite:///{path}")  # a second open finds the current version: nothing to upgrade
    assert again.marks(ADA)["hard-requests"]["why_1"].mark == "ok"
    again.close()


def schema_v4():
    spec = importlib.util.spec_from_file_location("schema_v4", FIXTURES / "schema_v4.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def version_4_database(url: str) -> None:
    """A database as version 4 left it: its tables, its version, a class of two with progress of every kind."""
    v4 = schema_v4()
    assert v4.SCHEMA_VERSION == 4
    engine = create_engine(url)
    v4.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(v4.schema_meta.insert().values(id=1, version=4))
        conn.execute(v4.students.insert(), [{"token": ADA, "name": "Ada", "class_code": "c4", "created": 1.0},
                                            {"token": BO, "name": "Bo", "class_code": "c4", "created": 2.0}])
        conn.execute(v4.quiz_answers.insert(), [
            {"token": ADA, "question_id": "q1", "try_no": 1, "answer": "1", "correct": False, "at": 3.0},
            {"token": ADA, "question_id": "q1", "try_no": 2, "answer": "2", "correct": True, "at": 4.0},
            {"token": BO, "question_id": "q1", "try_no": 1, "answer": "2", "correct": True, "at": 5.0}])
        conn.execute(v4.drafts.insert().values(token=ADA, task_id="t", field_id="why", text="kept", at=6.0))
        conn.execute(v4.gradings.insert().values(token=ADA, task_id="t", passed=False, criteria='{"evidence": false}',
                                                 at=7.0))
        conn.execute(v4.predictions.insert().values(token=ADA, prompt_id="p", value=2.0, measured=3.0, at=8.0))
        conn.execute(v4.milestones.insert().values(token=ADA, milestone_id="m", at=9.0))
        conn.execute(v4.self_assessments.insert().values(token=ADA, task_id="t", field_id="why", value="met", at=10.0))
        conn.execute(v4.marks.insert().values(token=ADA, task_id="t", field_id="why", mark="ok", comment="",
                                              text="kept", at=11.0))
    engine.dispose()


def test_a_version_4_database_keeps_every_record_as_the_first_attempt_and_takes_a_retake_beside_it(store_url):
    version_4_database(store_url)
    s = Store(store_url)
    ada = s.student(ADA)
    assert (ada.name, ada.attempt, ada.quiz_attempt) == ("Ada", 1, 1)
    assert [(a.try_no, a.answer, a.correct) for a in s.quiz_answers(ADA)] == [(1, 1, False), (2, 2, True)]
    assert (s.drafts(ADA), s.self_assessments(ADA), s.milestones(ADA)) == (
        {"t": {"why": "kept"}}, {"t": {"why": "met"}}, {"m"})
    assert (s.gradings(ADA)["t"].criteria, s.predictions(ADA)["p"].measured) == ({"evidence": False}, 3.0)
    assert s.marks(ADA)["t"]["why"].mark == "ok"
    first = s.class_quiz("c4")["q1"]
    assert (first["first_try_correct"], first["second_try_correct"], first["students"]) == (1, 1, 2)

    s.start_over(ADA)  # the unique keys now hold the attempt: the same question's first try again is a new row
    s.record_answer(ADA, "q1", 2, 1, True)
    s.record_answer(ADA, "q1", 9, 1, False)  # the same try of the same attempt again: the first stays
    s.save_draft(ADA, "t", "why", "retaken")
    assert [(a.try_no, a.answer) for a in s.quiz_answers(ADA)] == [(1, 2)]
    q, now = s.class_quiz("c4")["q1"], s.class_quiz("c4", latest=True)["q1"]
    assert (q["first_try_correct"], q["second_try_correct"]) == (1, 1)  # the first attempts, as before
    assert (now["first_try_correct"], now["students"]) == (2, 2)
    s.close()

    engine = create_engine(store_url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version FROM schema_meta")).scalar() == Store.schema_version
        kept = conn.execute(text("SELECT quiz_attempt, try_no, answer FROM quiz_answers WHERE token = :t "
                                 "ORDER BY quiz_attempt, try_no"), {"t": ADA}).all()
        drafts = conn.execute(text("SELECT attempt, text FROM drafts ORDER BY attempt")).all()
    engine.dispose()
    assert [tuple(r) for r in kept] == [(1, 1, "1"), (1, 2, "2"), (2, 1, "2")]
    assert [tuple(r) for r in drafts] == [(1, "kept"), (2, "retaken")]
    again = Store(store_url)  # a second open finds version 5: nothing to upgrade, nothing lost
    assert again.drafts(ADA) == {"t": {"why": "retaken"}} and again.student(BO).attempt == 1
    again.close()
