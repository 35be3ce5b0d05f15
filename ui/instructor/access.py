"""What the class view and the live polls share: the store, its refusals in the user's language, who is
looking (a student's token and class code; an instructor who entered the passcode, and their class)."""
from __future__ import annotations

import hashlib
import hmac
import json
import time

import streamlit as st

from classroom import StorageError, get_store
from ui.instructor import passcode
from ui.progress import saved as progress

UNLOCKED = "instructor.unlocked"  # session key: this session entered the right passcode
CLASS = "instructor.class_code"  # session key: the class the instructor looks at and polls
# A browser-session cookie keeps both over a reload or a deep link (a reload is a new Streamlit session): the
# class code, when it was issued, and a MAC keyed by the passcode, so nobody can make one without the passcode
# and changing the passcode ends them all. It dies with the browser; the passcode itself never leaves the server.
COOKIE = "serving_lab_instructor"
LOCKED = "instructor.locked"  # session key: Lock was pressed in this session
COOKIE_MAX_AGE_S = 12 * 3600  # a day's teaching at most, however long the browser stays open


def _mac(key: str, body: str) -> str:
    return hmac.new(key.encode(), f"serving-lab-instructor:{body}".encode(), hashlib.sha256).hexdigest()


def _write_cookie(value: str | None) -> None:
    """Set (or, with None, clear) the cookie from the page: Streamlit has no server-side Set-Cookie."""
    attrs = "; path=/; SameSite=Strict" + ("" if value else "; max-age=0")
    cookie = json.dumps(f"{COOKIE}={value or ''}{attrs}")
    st.html(f"<script>document.cookie = {cookie};</script>", unsafe_allow_javascript=True)


def grant() -> None:
    """The right passcode was entered: this session is the instructor's, and so is the browser's next one."""
    st.session_state[UNLOCKED] = True
    st.session_state.pop(LOCKED, None)
    remember()


def remember() -> None:
    """Write the cookie for the instructor's current class (after the passcode, and whenever the class changes)."""
    key = passcode.configured()
    if key is None or not st.session_state.get(UNLOCKED):
        return
    body = f"{st.session_state.get(CLASS, '')}|{int(time.time())}"
    _write_cookie(f"{body}|{_mac(key, body)}".replace(";", ""))  # a class code has no ";" (classroom.checks)


def revoke() -> None:
    st.session_state.pop(UNLOCKED, None)
    st.session_state[LOCKED] = True  # this session's cookies were read when it connected: ignore them from now on
    _write_cookie(None)


def _from_cookie() -> bool:
    """A valid cookie from an earlier session of this browser: unlocked again, with its class."""
    key, raw = passcode.configured(), (st.context.cookies or {}).get(COOKIE)
    if key is None or not raw or raw.count("|") != 2 or st.session_state.get(LOCKED):
        return False
    code, issued, mac = raw.split("|")
    body = f"{code}|{issued}"
    if not (issued.isdigit() and hmac.compare_digest(mac, _mac(key, body))
            and time.time() - int(issued) < COOKIE_MAX_AGE_S):
        return False
    st.session_state[UNLOCKED] = True
    st.session_state.setdefault(CLASS, code)
    return True


def store(warn: bool = False):
    """The process's store, or None when the database cannot be used (ui.progress.saved already warns students)."""
    try:
        return get_store()
    except StorageError as e:
        if warn:
            st.warning(message(e), icon="⚠️")
        return None


def message(err: StorageError) -> str:
    return progress.error_text(err)


def unlocked() -> bool:
    """Entered the passcode in this session (or in an earlier one of this browser), and a passcode is still
    configured."""
    if passcode.configured() is None:
        return False
    return bool(st.session_state.get(UNLOCKED)) or _from_cookie()


def instructor_class() -> str | None:
    """The instructor's class code, once unlocked and chosen."""
    return (st.session_state.get(CLASS) or None) if unlocked() else None


def student() -> tuple[str | None, str | None]:
    """This session's student token (ui.progress.saved keeps it) and the class code stored with it."""
    token = progress.token(create=False)
    db = store() if token else None
    if db is None:
        return token, None
    try:
        found = db.student(token)
    except StorageError:
        found = None
    return token, (found.class_code if found else None) or None
