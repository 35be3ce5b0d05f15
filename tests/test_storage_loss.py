"""The database lost under a running app (classroom/store.py `check`, classroom/outbox.py, ui/progress/unsaved.py):
a SQLite file deleted or replaced is noticed and opened anew, and the sessions write their progress into it again;
a PostgreSQL server stopped mid-session keeps the answers in the session, retries them, and the warning goes once
they are saved. Every answer is read back from a Store opened afresh, as after a restart."""
import csv
import io
import os
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from classroom import StorageError, Store, new_token
from classroom.errors import reconnecting
from classroom.outbox import Outbox, Progress, progress_ops
from lessons import load_quiz
from pg_support import fresh_database
from ui.shell.i18n import strings

ROOT = Path(__file__).resolve().parent.parent
STRINGS = strings()


class Session:
    """A student's session as the UI runs it: every write goes into the outbox, which flushes at once (and again on
    every later run: `rerun`)."""

    def __init__(self, store: Store, name: str = "Ada"):
        self.store, self.box, self.token = store, Outbox(), new_token()
        self.send("ensure_student", self.token, name, "room-1", time.time())

    def send(self, method: str, *args) -> None:
        self.box.add(method, *args)
        self.rerun()

    def rerun(self) -> list[StorageError]:
        return self.box.flush(self.store)

    def answer(self, i: int, try_no: int = 1) -> None:
        self.send("record_answer", self.token, f"q-{i}", {"pick": i}, try_no, i % 2 == 0)


def read_back(url: str, token: str) -> dict:
    fresh = Store(url)  # a restart
    try:
        return {"student": fresh.student(token), "answers": {(a.question_id, a.try_no): a.answer
                                                             for a in fresh.quiz_answers(token)},
                "drafts": fresh.drafts(token), "predictions": {k: p.value for k, p in fresh.predictions(token).items()},
                "milestones": fresh.milestones(token)}
    finally:
        fresh.close()


def expected_answers(n: int) -> dict:
    return {(f"q-{i}", 1): {"pick": i} for i in range(n)}


@pytest.fixture
def sqlite_file(tmp_path):
    path = tmp_path / "lab.db"
    return path, f"sqlite:///{path}"


# -- SQLite: the file deleted or replaced under the running store ----------------------------------------------------

@pytest.mark.parametrize("deleted", [("lab.db",), ("lab.db", "lab.db-wal", "lab.db-shm")])
def test_answers_after_the_file_is_deleted_land_in_a_new_file_with_everything_the_session_did(sqlite_file, deleted):
    path, url = sqlite_file
    store = Store(url)
    ada = Session(store)
    for i in range(3):
        ada.answer(i)
    ada.send("save_draft", ada.token, "task.paged", "why", "blocks on demand")
    ada.send("reach_milestone", ada.token, "quiz-started")
    for name in deleted:
        (path.parent / name).unlink(missing_ok=True)
    for i in range(3, 6):  # the first of these notices the deletion: the session writes everything again
        ada.answer(i)
    ada.send("record_prediction", ada.token, "paged-vs-contiguous", 2.5)
    assert ada.box.pending == 0 and ada.box.error is None
    assert path.exists()
    store.close()
    back = read_back(url, ada.token)
    assert back["student"].name == "Ada" and back["student"].class_code == "room-1"
    assert back["answers"] == expected_answers(6)
    assert back["drafts"] == {"task.paged": {"why": "blocks on demand"}}
    assert back["predictions"] == {"paged-vs-contiguous": 2.5} and back["milestones"] == {"quiz-started"}


def test_a_replaced_file_is_opened_as_it_is_and_gets_the_sessions_progress_beside_its_own(sqlite_file, tmp_path):
    path, url = sqlite_file
    store = Store(url)
    ada = Session(store)
    ada.answer(0)
    other_path = tmp_path / "restored-backup.db"
    other = Store(f"sqlite:///{other_path}")
    bob = other.new_student("Bob", "room-1")
    other.record_answer(bob, "q-9", "b", 1, False)
    other.close()
    os.replace(other_path, path)  # an administrator puts a backup in place
    ada.answer(1)
    ada.answer(2)
    assert ada.box.pending == 0
    store.close()
    assert read_back(url, ada.token)["answers"] == expected_answers(3)
    assert read_back(url, bob)["answers"] == {("q-9", 1): "b"}  # the replacement's own data is kept
    # the old file's WAL (which SQLite leaves at the path when the file moved) is set aside, not read into the new
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("lab.db-wal.orphaned-")]


def test_the_write_that_notices_a_deleted_file_is_refused_never_written_into_the_unlinked_file(sqlite_file):
    path, url = sqlite_file
    store = Store(url)
    tok = store.new_student("Ada", "")
    epoch = store.epoch
    path.unlink()
    with pytest.raises(StorageError) as err:
        store.record_answer(tok, "q-1", "a", 1, True)
    assert err.value.code == "replaced" and err.value.params == {"path": str(path)}
    assert store.epoch != epoch and path.exists()
    with pytest.raises(StorageError) as err:  # the new file is empty: the student is unknown until written again
        store.record_answer(tok, "q-1", "a", 1, True)
    assert err.value.code == "unknown_student"
    assert store.student(tok) is None
    store.close()


def test_a_session_that_only_reads_writes_its_progress_again_on_its_next_run(sqlite_file):
    """Two sessions: one writes after the deletion and notices it; the other does nothing but run its page again."""
    path, url = sqlite_file
    store = Store(url)
    ada, bob = Session(store, "Ada"), Session(store, "Bob")
    ada.answer(0)
    bob.answer(0)
    bob.answer(1)
    path.unlink()
    ada.answer(1)
    assert bob.rerun() == [] and bob.box.pending == 0
    store.close()
    assert read_back(url, ada.token)["answers"] == expected_answers(2)
    assert read_back(url, bob.token)["answers"] == expected_answers(2)


def test_progress_loaded_from_a_link_is_written_again_into_a_new_file_with_the_sessions_own(sqlite_file):
    """A student comes back by their link (everything from earlier sessions is loaded), the file is deleted, the
    session answers once more: the new file has all of it, as a restart reads it."""
    path, url = sqlite_file
    store = Store(url)
    tok = store.new_student("Ada", "room-1")
    store.record_answer(tok, "q-0", {"pick": 0}, 1, True)
    store.save_draft(tok, "task.paged", "why", "blocks on demand")
    store.record_grading(tok, "task.paged", True, {"evidence": True})
    store.self_assess(tok, "task.paged", "why", "met")
    store.record_prediction(tok, "paged-vs-contiguous", 2.5, 3.0)
    store.reach_milestone(tok, "quiz-started")
    box = Outbox()
    box.loaded(progress_ops(Progress.read(store, tok)), store.epoch)
    assert box.pending == 0
    path.unlink()
    box.add("record_answer", tok, "q-1", {"pick": 1}, 1, False)
    assert box.flush(store) == [] and box.pending == 0
    store.close()
    fresh = Store(url)
    assert fresh.student(tok).name == "Ada" and fresh.student(tok).class_code == "room-1"
    assert {(a.question_id, a.try_no, a.correct) for a in fresh.quiz_answers(tok)} == {("q-0", 1, True),
                                                                                     ("q-1", 1, False)}
    assert fresh.drafts(tok) == {"task.paged": {"why": "blocks on demand"}}
    assert fresh.gradings(tok)["task.paged"].criteria == {"evidence": True}
    assert fresh.self_assessments(tok) == {"task.paged": {"why": "met"}}
    p = fresh.predictions(tok)["paged-vs-contiguous"]
    assert (p.value, p.measured) == (2.5, 3.0) and fresh.milestones(tok) == {"quiz-started"}
    fresh.close()


# -- the outbox's journal ------------------------------------------------------------------------------------------

def test_the_journal_keeps_one_write_per_row_and_a_clear_or_start_over_opens_the_next_attempt_dropping_nothing():
    box, tok = Outbox(), new_token()
    box.add("ensure_student", tok, "", "", 1.0)
    box.add("record_answer", tok, "q-1", "a", 1, False, 1)
    box.add("record_answer", tok, "q-1", "b", 1, True, 1)  # the same try again: the first stays (the store's rule too)
    box.add("record_answer", tok, "q-1", "b", 2, True, 1)
    for text in ("a", "ab", "abc"):
        box.add("save_draft", tok, "t", "f", text, 1)
    box.add("record_prediction", tok, "p", 1.0, None, 1)
    box.add("set_measured", tok, "p", 2.0, 1)
    box.add("set_measured", tok, "other", 2.0, 1)
    box.add("record_prediction", tok, "p", 3.0, None, 1)  # sets measured too: the earlier set_measured of p is moot
    assert [(o.method, o.args[1:]) for o in box.ops] == [
        ("ensure_student", ("", "", 1.0)), ("record_answer", ("q-1", "a", 1, False, 1)),
        ("record_answer", ("q-1", "b", 2, True, 1)), ("save_draft", ("t", "f", "abc", 1)),
        ("set_measured", ("other", 2.0, 1)), ("record_prediction", ("p", 3.0, None, 1))]
    box.add("clear_quiz", tok, 2)
    box.add("record_answer", tok, "q-1", "c", 1, True, 2)  # a new quiz attempt's first try is a new write
    box.add("start_over", tok, 2, 3)
    box.add("save_draft", tok, "t", "f", "new", 2)  # the new attempt's draft: the first attempt's stays
    assert [o.method for o in box.ops] == ["ensure_student", "record_answer", "record_answer", "save_draft",
                                           "set_measured", "record_prediction", "clear_quiz", "record_answer",
                                           "start_over", "save_draft"]
    box.add("start_over", tok, 2, 3)  # opened already: nothing more to send
    assert len(box.ops) == 10
    with pytest.raises(ValueError):
        box.add("start_over", tok)  # "the next one" is not idempotent: only by its number
    with pytest.raises(ValueError):
        box.add("submit_policy", tok)  # not idempotent: never retried


def test_writes_that_waited_land_in_the_attempt_they_were_made_in_whatever_came_before_they_went(sqlite_file):
    _, url = sqlite_file
    store = Store(url)
    ada = Session(store)
    box, tok = ada.box, ada.token
    # queued while the database was away: an answer and a draft of the first attempt, a start over, the retake
    box.add("record_answer", tok, "q-1", "wrong", 1, False, 1)
    box.add("save_draft", tok, "t", "f", "first", 1)
    box.add("start_over", tok, 2, 2)
    box.add("record_answer", tok, "q-1", "right", 1, True, 2)
    box.add("save_draft", tok, "t", "f", "second", 2)
    assert ada.rerun() == [] and box.pending == 0
    assert [a.answer for a in store.quiz_answers(tok)] == ["right"] and store.drafts(tok) == {"t": {"f": "second"}}
    other_tab = Outbox()  # a tab still on the first attempt: its write goes there, not into the retake
    other_tab.add("record_answer", tok, "q-2", "late", 1, True, 1)
    assert other_tab.flush(store) == []
    assert [a.question_id for a in store.quiz_answers(tok)] == ["q-1"]
    rows = {(r["item"], r["attempt"], r["answer"]) for r in csv.DictReader(io.StringIO(store.class_csv("room-1")))}
    assert rows == {("q-1", "1", '"wrong"'), ("q-1", "2", '"right"'), ("q-2", "1", '"late"')}
    store.close()

    again = Store(url)  # a restart reads the same attempts
    assert again.student(tok).attempt == 2 and again.drafts(tok) == {"t": {"f": "second"}}
    again.close()


def test_a_write_refused_for_its_content_is_dropped_and_said_the_rest_go_through(sqlite_file):
    _, url = sqlite_file
    store = Store(url)
    ada = Session(store)
    ada.box.add("save_draft", ada.token, "t", "f", "x" * 10_000)
    ada.box.add("record_answer", ada.token, "q-1", "a", 1, True)
    refused = ada.rerun()
    assert [e.code for e in refused] == ["too_long"] and ada.box.pending == 0
    assert [a.question_id for a in store.quiz_answers(ada.token)] == ["q-1"]
    store.close()


def test_an_idempotent_write_whose_connection_died_is_tried_once_more():
    calls = []

    class Flaky:
        @reconnecting
        def write(self):
            calls.append(1)
            if len(calls) == 1:
                err = StorageError("unavailable", detail="server closed the connection unexpectedly")
                err.reconnect = True
                raise err
            return "done"

        @reconnecting
        def down(self):
            calls.append(1)
            raise StorageError("unavailable", detail="connection refused")

    assert Flaky().write() == "done" and len(calls) == 2
    with pytest.raises(StorageError):
        Flaky().down()
    assert len(calls) == 3  # a server that is down is not asked twice


# -- PostgreSQL stopped mid-session ---------------------------------------------------------------------------------

@pytest.mark.server
def test_answers_sent_while_postgresql_is_stopped_wait_and_are_saved_when_it_is_back(postgres_cluster):
    url = fresh_database(postgres_cluster.url)
    store = Store(url)
    ada = Session(store)
    ada.answer(0)
    postgres_cluster.stop()
    ada.answer(1)
    ada.answer(2)
    assert ada.box.pending == 2 and ada.box.error.code == "unavailable"
    ada.rerun()  # still down: still waiting, nothing dropped
    assert ada.box.pending == 2
    postgres_cluster.start()
    assert ada.rerun() == [] and ada.box.pending == 0 and ada.box.error is None
    store.close()
    assert read_back(url, ada.token)["answers"] == expected_answers(3)


def _frame_script():
    """app.py's part in saving (AppTest runs a page alone once it switched pages), then the quiz page's submit: an
    answer to the question the test names, written through as pages/quiz.py writes it."""
    import streamlit as st

    from lessons import load_quiz
    from ui.progress import quiz_state, saved as progress

    progress.restore()
    progress.retry()
    progress.sidebar_line()
    progress.notices()
    questions = {q.id: q for q in load_quiz("en")}
    attempt = quiz_state.current(questions)
    qid = st.session_state.pop("test.answer", None)
    if qid:
        attempt.submit(questions[qid], 0)
        progress.quiz_answer(questions[qid], 0, None, attempt)
        st.rerun()  # as the quiz page does after a submit


def _answer(at: AppTest, qid: str) -> AppTest:
    at.session_state["test.answer"] = qid
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _retrying(at: AppTest, n: int = 0, lang: str = "en") -> list[str]:
    """The warnings that say writes wait (n of them, when n is given)."""
    text = STRINGS["progress.pending"][lang]
    head = text.format(n=n, reason="\0").split("\0")[0] if n else text.split("{n}")[0]
    return [w.value for w in at.warning if w.value.startswith(head)]


@pytest.mark.server
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_says_retrying_while_postgresql_is_stopped_and_the_warning_goes_when_it_is_back(
        postgres_cluster, monkeypatch, lang):
    url = fresh_database(postgres_cluster.url)
    monkeypatch.setenv("SERVING_LAB_DB", url)
    at = AppTest.from_function(_frame_script, default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    single = [q.id for q in load_quiz("en") if q.type == "single"][:3]
    _answer(at, single[0])
    token = at.session_state["progress.token"]
    assert not _retrying(at) and not at.warning
    postgres_cluster.stop()
    _answer(at, single[1])
    _answer(at, single[2])
    warned = _retrying(at, n=2, lang=lang)
    assert len(warned) == 1 and "Connection refused" in warned[0], [w.value for w in at.warning]
    assert f"⏳ {STRINGS['progress.pending_short'][lang].format(n=2)}" in [c.value for c in at.sidebar.caption]
    at.run()  # still stopped: still waiting
    assert _retrying(at, n=2, lang=lang)
    postgres_cluster.start()
    at.run()  # the next run (in a browser also the page's own retry, every few seconds) sends them
    assert not at.exception, [e.value for e in at.exception]
    assert not at.warning
    assert [t.value for t in at.toast] == [STRINGS["progress.saved_again"][lang]]
    assert set(read_back(url, token)["answers"]) == {(qid, 1) for qid in single}
    at.run()
    assert not at.toast and not at.warning  # "saved" once, briefly


@pytest.mark.parametrize("loss", ["deleted", "replaced"])
def test_the_page_keeps_answering_through_a_deleted_or_replaced_file_and_a_restart_finds_every_answer(
        tmp_path, monkeypatch, loss):
    path = tmp_path / "lab.db"
    monkeypatch.setenv("SERVING_LAB_DB", str(path))
    at = AppTest.from_function(_frame_script, default_timeout=60)
    at.session_state["lang"] = "en"
    at.run()
    single = [q.id for q in load_quiz("en") if q.type == "single"][:4]
    _answer(at, single[0])
    _answer(at, single[1])
    token = at.session_state["progress.token"]
    if loss == "deleted":
        path.unlink()
    else:
        Store(f"sqlite:///{tmp_path / 'backup.db'}").close()
        os.replace(tmp_path / "backup.db", path)
    _answer(at, single[2])
    _answer(at, single[3])
    assert not at.exception and not at.warning and not at.session_state["progress.outbox"].pending
    assert set(read_back(f"sqlite:///{path}", token)["answers"]) == {(qid, 1) for qid in single}
