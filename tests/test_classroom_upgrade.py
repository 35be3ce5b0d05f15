"""A real version-1 SQLite file (tests/fixtures/classroom-v1.sql, dumped from one the v1 Store made) opened by
today's Store: upgraded in place, every row of it kept as it was, and the explanations' records work on it."""
import sqlite3
from pathlib import Path

from classroom import Store

V1 = Path(__file__).resolve().parent / "fixtures" / "classroom-v1.sql"
ADA, BO, ANON = "INOcE9pk1vGoPynYJgtpWA", "pJqGCkiyqVaC7QRC_LDaNw", "4YqkGMzhMFh0_zlIWMXGDA"
V1_TABLES = ("schema_meta", "students", "quiz_answers", "drafts", "gradings", "predictions", "milestones", "polls",
             "poll_answers")


def v1_file(tmp_path) -> Path:
    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path)
    conn.executescript(V1.read_text(encoding="utf-8"))
    conn.close()
    return path


def rows(path: Path) -> dict[str, list]:
    conn = sqlite3.connect(path)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in V1_TABLES}
    finally:
        conn.close()


def test_a_real_version_1_file_is_upgraded_in_place_and_keeps_every_row(tmp_path):
    path = v1_file(tmp_path)
    before = rows(path)
    assert before["schema_meta"] == [(1, 1)] and len(before["students"]) == 3
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
    assert after.pop("schema_meta") == [(1, Store.schema_version)]
    before.pop("schema_meta")
    assert after == before  # opening it changed no row of version 1's tables

    again = Store(f"sqlite:///{path}")  # a second open finds the current version: nothing to upgrade
    assert again.marks(ADA)["hard-requests"]["why_1"].mark == "ok"
    again.close()
