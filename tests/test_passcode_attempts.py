"""Wrong instructor passcodes are slowed per session and per client address, and logged (25 guesses in 5 s
cannot all go through at full speed): the clock and the sleep are the test's, the class view's form a real one."""
import logging
import time

import pytest

from ui.instructor import attempts, passcode
from ui.instructor.attempts import Attempts

PASSCODE = "correct horse 7"


@pytest.fixture
def configured(monkeypatch, tmp_path):
    monkeypatch.setattr(passcode, "SECRETS", tmp_path / "secrets.toml")
    monkeypatch.setenv(passcode.ENV, PASSCODE)


class Clock:
    def __init__(self):
        self.now, self.slept = 1000.0, []

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.slept.append(s)
        self.now += s


def test_the_sixth_wrong_passcode_within_a_minute_waits_and_each_after_waits_longer(configured, caplog):
    clock = Clock()
    a = Attempts(clock, clock.sleep)
    with caplog.at_level(logging.WARNING, logger="serving_lab.passcode"):
        for _ in range(5):
            assert not a.check("guess", "s1", "10.0.0.7")
        assert clock.slept == []  # five free mistakes
        for _ in range(3):
            assert not a.check("guess", "s1", "10.0.0.7")
    assert clock.slept == [1.0, 2.0, 4.0]
    assert len(caplog.records) == 8 and "10.0.0.7" in caplog.records[-1].getMessage()
    assert "8 in the last 60 s" in caplog.records[-1].getMessage()


def test_a_new_session_from_the_same_address_gets_no_fresh_count(configured):
    clock = Clock()
    a = Attempts(clock, clock.sleep)
    for i in range(5):
        a.check("guess", f"session-{i}", "10.0.0.7")  # a script opening a new session per guess
    a.check("guess", "session-new", "10.0.0.7")
    assert clock.slept == [1.0]
    a.check("guess", "elsewhere", "10.0.0.9")  # another address, another session: not slowed
    assert clock.slept == [1.0]


def test_the_count_forgets_after_a_minute_and_the_right_passcode_clears_it(configured):
    clock = Clock()
    a = Attempts(clock, clock.sleep)
    for _ in range(5):
        a.check("guess", "s1", None)
    clock.now += 61
    a.check("guess", "s1", None)
    assert clock.slept == []  # the five of a minute ago are forgotten: this is the first
    for _ in range(4):
        a.check("guess", "s1", None)
    assert a.check(PASSCODE, "s1", None) and clock.slept == [1.0]  # the sixth attempt waits, even the right one
    a.check("guess", "s1", None)
    assert clock.slept == [1.0]


def test_the_delay_is_capped(configured):
    clock = Clock()
    a = Attempts(clock, clock.sleep)
    for _ in range(20):
        a.check("guess", "s1", None)
        clock.now -= clock.slept[-1] if clock.slept else 0  # keep all twenty within the minute
    assert max(clock.slept) == attempts.MAX_DELAY_S


def test_the_class_view_form_waits_on_the_sixth_wrong_passcode(configured, monkeypatch):
    """The real form under streamlit.testing: five wrong passcodes answer at once, the sixth waits."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(attempts, "ATTEMPTS", Attempts())
    monkeypatch.setattr("ui.instructor.class_view.ATTEMPTS", attempts.ATTEMPTS)
    monkeypatch.setattr(attempts, "BASE_DELAY_S", 1.0)
    script = """
import streamlit as st
from ui.instructor import class_view
class_view.passcode_form()
"""
    at = AppTest.from_string(script, default_timeout=30).run()

    def wrong() -> float:
        at.text_input(key="class-view.passcode").input("not it at all")
        start = time.monotonic()
        at.button[0].click().run()
        assert not at.exception, [e.value for e in at.exception]
        return time.monotonic() - start

    quick = [wrong() for _ in range(5)]
    sixth = wrong()
    assert max(quick) < 0.9 and sixth >= 1.0, (quick, sixth)
