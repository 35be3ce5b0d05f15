"""Wrong instructor passcodes are bounded per session, per client address and in total, and logged: past the bound an
attempt is refused at once without being checked (no thread waits), so twenty sessions guessing in parallel get at
most TOTAL_FAILURES (20) passcodes checked a minute, across every replica on one database. The counts are in a real
store (a SQLite file, and a real PostgreSQL for the replicas); the clock is the test's, the class view's form a real
one."""
import logging
import threading
import time

import pytest

from classroom import StorageError, Store
from classroom.instructors import FAILURES_KEPT_S
from ui.instructor import attempts, passcode
from ui.instructor.attempts import EVERYONE, FREE_FAILURES, TOTAL_FAILURES, WINDOW_S, Attempts

PASSCODE = "correct horse 7"


@pytest.fixture
def configured(monkeypatch, tmp_path):
    monkeypatch.setattr(passcode, "SECRETS", tmp_path / "secrets.toml")
    monkeypatch.setenv(passcode.ENV, PASSCODE)


@pytest.fixture
def checked(monkeypatch, configured):
    """Every passcode actually compared, counted."""
    seen = []
    real = passcode.matches

    def counting(given):
        seen.append(given)
        return real(given)
    monkeypatch.setattr(passcode, "matches", counting)
    return seen


class Clock:
    def __init__(self):
        self.now = 1_800_000_000.0

    def __call__(self):
        return self.now


@pytest.fixture
def db(tmp_path):
    s = Store(f"sqlite:///{tmp_path / 'lab.db'}")
    yield s
    s.close()


def test_the_sixth_wrong_passcode_of_a_session_is_refused_unchecked_and_says_when_to_retry(checked, db, caplog):
    clock = Clock()
    a = Attempts(db, clock)
    with caplog.at_level(logging.WARNING, logger="serving_lab.passcode"):
        assert all(a.check("guess", "s1", "10.0.0.7") == (False, 0) for _ in range(FREE_FAILURES))
        refused = a.check(PASSCODE, "s1", "10.0.0.7")  # even the right one: it is not checked
    assert not refused.ok and refused.retry_after_s == WINDOW_S and len(checked) == FREE_FAILURES
    assert "10.0.0.7" in caplog.records[-1].getMessage() and "refused unchecked" in caplog.records[-1].getMessage()
    clock.now += WINDOW_S + 1  # the minute has passed: checked again
    assert a.check(PASSCODE, "s1", "10.0.0.7").ok


@pytest.fixture
def replicas(store_url):
    """Two stores on one database: two replicas of the lab behind a balancer."""
    pair = [Store(store_url), Store(store_url)]
    yield pair
    for s in pair:
        s.close()


def test_twenty_parallel_sessions_on_two_replicas_get_at_most_twenty_passcodes_checked_a_minute(checked, replicas):
    clock = Clock()
    n = TOTAL_FAILURES  # N: the passcodes checked in a minute, whatever the sessions and replicas
    outcomes = []

    def student(i: int) -> None:
        a = Attempts(replicas[i % 2], clock)  # the balancer sends half of the sessions to each replica
        for _ in range(30):  # each session guesses as fast as it can, within the simulated minute
            outcomes.append(a.check(f"guess {i}", f"session-{i}", "10.0.0.7" if i % 3 else f"10.0.1.{i}"))
            clock.now += 0.05  # 600 guesses: 30 s of the minute
    threads = [threading.Thread(target=student, args=(i,)) for i in range(20)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(outcomes) == 600 and len(checked) == n
    assert all(o.retry_after_s > 0 for o in outcomes if o not in [(False, 0)])
    assert len(replicas[0].passcode_failures([EVERYONE], clock.now - WINDOW_S)[EVERYONE]) == n  # both see them all
    late = Attempts(replicas[1], clock)
    assert late.check(PASSCODE, "instructor", "10.0.2.1").retry_after_s > 0  # the total holds for everyone
    clock.now += WINDOW_S + 1  # the window has passed: a fresh session at another address is checked
    assert late.check(PASSCODE, "instructor", "10.0.2.1").ok and len(checked) == n + 1


def test_the_instructor_behind_a_guessing_students_address_still_gets_in(checked, db):
    clock = Clock()
    a = Attempts(db, clock)
    for _ in range(FREE_FAILURES):
        a.check("guess", "student", "10.0.0.7")  # the student's session and address are over their budget
    assert a.check("guess", "student", "10.0.0.7").retry_after_s > 0
    assert a.check(PASSCODE, "instructor", "10.0.0.7").ok  # a session with no failure of its own is checked


def test_a_script_opening_a_new_session_per_guess_is_bounded_by_the_total(checked, db):
    clock = Clock()
    a = Attempts(db, clock)
    for i in range(100):
        a.check("guess", f"fresh-{i}", "10.0.0.7")
    assert len(checked) == TOTAL_FAILURES


def test_a_right_passcode_forgets_the_sessions_failures_and_old_failures_are_deleted(checked, db):
    clock = Clock()
    a = Attempts(db, clock)
    for _ in range(FREE_FAILURES - 1):
        a.check("guess", "s1", "10.0.0.7")
    assert a.check(PASSCODE, "s1", "10.0.0.7").ok
    failures = db.passcode_failures(["session:s1", "address:10.0.0.7", EVERYONE], 0)
    assert failures["session:s1"] == [] and len(failures["address:10.0.0.7"]) == FREE_FAILURES - 1  # the right one too
    assert len(failures[EVERYONE]) == FREE_FAILURES - 1  # is not counted
    clock.now += FAILURES_KEPT_S + 1
    a.check("guess", "s2", None)  # recording a failure deletes those older than FAILURES_KEPT_S
    assert db.passcode_failures(["address:10.0.0.7", EVERYONE], 0) == {"address:10.0.0.7": [], EVERYONE: [clock.now]}


def test_without_a_store_nothing_is_checked(checked, tmp_path):
    class Away:
        def claim_passcode_check(self, *args):
            raise StorageError("unavailable", detail="down")
    with pytest.raises(StorageError):
        Attempts(Away()).check(PASSCODE, "s1", None)
    assert checked == []


def test_the_class_view_form_answers_the_sixth_wrong_passcode_at_once_with_when_to_retry(configured, db, monkeypatch):
    """The real form under streamlit.testing: five wrong passcodes are checked; the sixth is refused at once."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(attempts, "ATTEMPTS", Attempts(db))
    monkeypatch.setattr("ui.instructor.class_view.ATTEMPTS", attempts.ATTEMPTS)
    script = """
import streamlit as st
st.session_state["lang"] = "en"
from ui.instructor import class_view
class_view.passcode_form()
"""
    at = AppTest.from_string(script, default_timeout=30).run()

    def wrong() -> tuple[float, str]:
        at.text_input(key="class-view.passcode").input("not it at all")
        start = time.monotonic()
        at.button[0].click().run()
        assert not at.exception, [e.value for e in at.exception]
        return time.monotonic() - start, at.error[0].value

    said = [wrong() for _ in range(FREE_FAILURES + 1)]
    assert all("not the passcode" in text for _, text in said[:FREE_FAILURES])
    took, text = said[-1]
    assert "Too many wrong passcodes" in text and "Try again in 60 s" in text and took < 5
