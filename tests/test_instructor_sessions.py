"""The instructor's session is a random token whose hash the store keeps (SQLite file and a real PostgreSQL): the
cookie carries the token and nothing derived from the passcode; an altered byte, Lock, "sign out everywhere", 12 h
or a new passcode end it; a valid cookie opens the class view in a fresh Streamlit session."""
import hashlib
import hmac
import re
import time

import pytest
from sqlalchemy import create_engine, text
from streamlit.testing.v1 import AppTest

from classroom import Store
from classroom.instructors import token_hash
from ui.instructor import access, passcode, sessions

PASSCODE = "correct horse 7"
TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32): 256 random bits


@pytest.fixture
def store(store_url):
    s = Store(store_url)
    yield s
    s.close()


@pytest.fixture
def configured(monkeypatch, tmp_path):
    monkeypatch.setattr(passcode, "SECRETS", tmp_path / "secrets.toml")  # never the repository's own file
    monkeypatch.setenv(passcode.ENV, PASSCODE)


def altered(token: str) -> list[str]:
    """The token with each of its characters changed in turn."""
    return [token[:i] + ("A" if c != "A" else "B") + token[i + 1:] for i, c in enumerate(token)]


def test_the_store_keeps_only_the_tokens_hash_and_refuses_every_altered_byte(store):
    token = store.new_instructor_session("cs-101", "fp", 3600)
    assert TOKEN.fullmatch(token) and store.instructor_session(token, "fp").class_code == "cs-101"
    with create_engine(store.url).connect() as conn:
        rows = conn.execute(text("SELECT * FROM instructor_sessions")).all()
    assert len(rows) == 1 and token not in repr(rows) and rows[0].token_hash == token_hash(token)
    assert all(store.instructor_session(t, "fp") is None for t in altered(token))
    assert store.instructor_session(token + "x", "fp") is None and store.instructor_session(token[:-1], "fp") is None
    assert store.instructor_session(f"cs-101|{int(time.time())}|{'0' * 64}", "fp") is None  # the old cookie's form


def test_lock_ends_one_session_and_sign_out_everywhere_ends_them_all(store):
    a, b, c = (store.new_instructor_session("", "fp", 3600) for _ in range(3))
    store.revoke_instructor_session(a)
    assert store.instructor_session(a, "fp") is None and store.instructor_session(b, "fp") is not None
    assert store.revoke_instructor_sessions() == 2
    assert store.instructor_session(b, "fp") is None and store.instructor_session(c, "fp") is None


def test_a_session_lasts_12_hours_follows_the_class_and_ends_with_another_passcode(store, configured, monkeypatch):
    start = time.time()
    token = sessions.issue(store, "cs-101", now=start)
    assert sessions.valid(store, token, now=start + sessions.MAX_AGE_S - 1).class_code == "cs-101"
    assert sessions.valid(store, token, now=start + sessions.MAX_AGE_S) is None
    store.set_instructor_class(token, "cs-102")
    assert sessions.valid(store, token).class_code == "cs-102"
    monkeypatch.setenv(passcode.ENV, "a new passcode 9")  # every session opened with the old one ends
    assert sessions.valid(store, token) is None
    monkeypatch.setenv(passcode.ENV, PASSCODE)
    assert sessions.valid(store, token) is not None
    store.new_instructor_session("", "fp", 3600, now=start + sessions.MAX_AGE_S + 1)  # expired rows are deleted
    with create_engine(store.url).connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM instructor_sessions")).scalar_one() == 1


def test_the_token_holds_nothing_derived_from_the_passcode(store, monkeypatch, tmp_path):
    monkeypatch.setattr(passcode, "SECRETS", tmp_path / "secrets.toml")
    tokens = {}
    for code in ("first passcode 1", "second passcode 2"):
        monkeypatch.setenv(passcode.ENV, code)
        tokens[code] = [sessions.issue(store, "cs-101") for _ in range(3)]
    every = [t for ts in tokens.values() for t in ts]
    assert all(TOKEN.fullmatch(t) for t in every) and len(set(every)) == len(every)  # the same random form
    for code, ts in tokens.items():
        for t in ts:
            assert code not in t and "cs-101" not in t
            for body in (code, t, "cs-101"):  # no MAC keyed by the passcode, of anything the cookie carries
                assert hmac.new(code.encode(), body.encode(), hashlib.sha256).hexdigest() not in t
    assert not hasattr(access, "_mac")


SCRIPT = """
import streamlit as st
st.session_state["lang"] = "en"
from ui.instructor import access, class_view
if access.unlocked():
    class_view.controls()
    st.markdown(f"unlocked: {access.instructor_class() or '-'}")
else:
    class_view.passcode_form()
"""


@pytest.fixture
def browser_cookie(monkeypatch, configured, tmp_path):
    """The class view's own store in a file of the test's; the cookie a fresh session connects with is the test's,
    and every cookie the page writes is kept (AppTest has no browser to hold one)."""
    monkeypatch.setenv("SERVING_LAB_DB", str(tmp_path / "lab.db"))
    jar = {"sent": None, "written": []}
    monkeypatch.setattr(access, "_cookie", lambda: jar["sent"])
    real = access._write_cookie

    def keep(value):
        jar["written"].append(value)
        real(value)
    monkeypatch.setattr(access, "_write_cookie", keep)
    return jar


def session() -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def is_unlocked(at: AppTest) -> str | None:
    said = [m.value for m in at.markdown if m.value.startswith("unlocked: ")]
    return said[0].removeprefix("unlocked: ") if said else None


def test_a_cookie_opens_a_fresh_session_unless_altered_or_signed_out_everywhere(browser_cookie):
    jar = browser_cookie
    teacher = session()
    teacher.text_input(key="class-view.passcode").input(PASSCODE)
    teacher.button[0].click().run()
    assert is_unlocked(teacher) == "-"
    teacher.text_input(key="class-view.class.widget").input("cs-101").run()  # the class follows the session
    assert is_unlocked(teacher) == "cs-101"
    cookie = jar["written"][-1]
    assert TOKEN.fullmatch(cookie)

    jar["sent"] = cookie  # the same browser, reloaded: a fresh session on the class it left
    assert is_unlocked(session()) == "cs-101"
    for wrong in altered(cookie)[::7] + [cookie[:-1], "", "cs-101|1700000000|" + "0" * 64]:
        jar["sent"] = wrong
        assert is_unlocked(session()) is None
    jar["sent"] = cookie
    other = session()  # a second browser holding a copy of the cookie, open already
    assert is_unlocked(other) == "cs-101"

    next(b for b in teacher.button if b.key == "class-view.sign-out-all").click().run()
    assert is_unlocked(teacher) is None and jar["written"][-1] is None  # this browser's cookie is cleared too
    assert is_unlocked(session()) is None  # the copy, replayed in a fresh session
    assert is_unlocked(other.run()) is None  # and the session it had opened ends at its next run


def test_lock_ends_this_browsers_cookie_for_good_and_the_passcode_opens_a_new_session(browser_cookie):
    jar = browser_cookie
    teacher = session()
    teacher.text_input(key="class-view.passcode").input(PASSCODE)
    teacher.button[0].click().run()
    teacher.text_input(key="class-view.class.widget").input("cs-101").run()
    cookie = jar["written"][-1]
    next(b for b in teacher.button if b.key == "class-view.lock").click().run()
    assert is_unlocked(teacher) is None and jar["written"][-1] is None
    jar["sent"] = cookie  # a copy taken before Lock
    assert is_unlocked(session()) is None
    teacher.text_input(key="class-view.passcode").input(PASSCODE)
    teacher.button[0].click().run()
    assert is_unlocked(teacher) == "cs-101" and jar["written"][-1] != cookie  # a new token, on the same class
    jar["sent"] = jar["written"][-1]
    assert is_unlocked(session()) == "cs-101"


def test_a_class_the_store_could_not_keep_is_kept_by_the_address_and_written_once_the_store_is_back(
        browser_cookie, monkeypatch, tmp_path):
    """The class is chosen while another writer holds the SQLite file's write lock (the store is busy past its
    wait): the page warns, the address names the class (a reload opens on it), and the next run writes it, so a
    fresh session of this browser without that address opens on it too."""
    import sqlite3

    from classroom import store as store_module
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_MS", 200)  # the store's connections wait 0.2 s, not 10 s
    jar = browser_cookie
    teacher = session()
    teacher.text_input(key="class-view.passcode").input(PASSCODE)
    teacher.button[0].click().run()
    other = sqlite3.connect(tmp_path / "lab.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer, holding the lock
    teacher.text_input(key="class-view.class.widget").input("cs-101").run()
    assert teacher.warning and is_unlocked(teacher) == "cs-101"
    assert teacher.query_params["class"] == "cs-101"
    jar["sent"] = jar["written"][-1]
    assert is_unlocked(session()) == "-"  # not in the store yet

    reloaded = AppTest.from_string(SCRIPT, default_timeout=60)
    reloaded.query_params["class"] = "cs-101"  # a reload keeps the address
    other.execute("ROLLBACK")
    assert is_unlocked(reloaded.run()) == "cs-101"
    assert is_unlocked(session()) == "cs-101"  # written by the reloaded session's run
    assert is_unlocked(teacher.run()) == "cs-101" and not teacher.warning
    other.close()
