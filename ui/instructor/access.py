"""What the class view and the live polls share: the store, its refusals in the user's language, who is
looking (a student's token and class code; an instructor who entered the passcode, and their class)."""
from __future__ import annotations

import json

import streamlit as st

from classroom import StorageError, get_store
from ui.instructor import passcode, sessions
from ui.progress import saved as progress

UNLOCKED = "instructor.unlocked"  # session key: this session's instructor token (ui.instructor.sessions)
CLASS = "instructor.class_code"  # session key: the class the instructor looks at and polls
# A browser-session cookie carries the token over a reload or a deep link (a reload is a new Streamlit session).
# The store keeps the token's hash, its class and expiry: the cookie is valid only while that row is open, and
# tells nothing about the passcode. It dies with the browser, and with Lock, "sign out everywhere" or a new passcode.
COOKIE = "serving_lab_instructor"
LOCKED = "instructor.locked"  # session key: Lock was pressed in this session
COOKIE_MAX_AGE_S = sessions.MAX_AGE_S


def _write_cookie(value: str | None) -> None:
    """Set (or, with None, clear) the cookie from the page: Streamlit has no server-side Set-Cookie."""
    attrs = "; path=/; SameSite=Strict" + ("" if value else "; max-age=0")
    cookie = json.dumps(f"{COOKIE}={value or ''}{attrs}")
    st.html(f"<script>document.cookie = {cookie};</script>", unsafe_allow_javascript=True)


def grant() -> bool:
    """The right passcode was entered: a new session in the store, this Streamlit session's and, through the
    cookie, the browser's next ones. False (with the store's refusal shown) when the store cannot keep it."""
    db = store(warn=True)
    try:
        token = sessions.issue(db) if db is not None else None
    except StorageError as e:
        st.error(message(e))
        token = None
    if token is None:
        return False
    if (earlier := _token()) is not None:  # entered again (the store was away): one session per browser is open
        try:
            db.revoke_instructor_session(earlier)
        except StorageError:
            pass  # it expires by itself; this browser holds only the new one
    st.session_state[UNLOCKED] = token
    st.session_state.pop(LOCKED, None)
    _write_cookie(token)  # a token is URL-safe base64: nothing to escape in a cookie
    if st.session_state.get(CLASS):
        remember()  # apart: a class code the store refuses leaves the session open, with the store's warning
    return True


def keep_cookie() -> None:
    """The cookie set again to this session's token while the browser has not sent it back: the script that set it
    can be lost (on a busy server a rerun can replace it before the browser runs it), and a reload would then meet
    the passcode form, or an earlier session of this browser with another class."""
    token = _token()
    if token is not None and _cookie() != token:
        _write_cookie(token)


def remember() -> bool:
    """The instructor's class changed: kept with the session in the store, for the browser's next session. False
    while the store cannot keep it now (it is tried again at the next run); a class code it refuses is not."""
    token, db = _token(), store()
    if token is None:
        return True
    if db is None:
        return False
    try:
        db.set_instructor_class(token, st.session_state.get(CLASS, ""))
    except StorageError as e:
        st.warning(message(e), icon="⚠️")
        return e.code not in ("unavailable", "replaced")  # an outage, not a refusal
    return True


def _forget_here() -> None:
    st.session_state.pop(UNLOCKED, None)
    st.session_state[LOCKED] = True  # this session's cookies were read when it connected: ignore them from now on
    _write_cookie(None)


def revoke() -> None:
    """Lock: this browser's session ends (in the store too, so a copy of its cookie opens nothing)."""
    token, db = _token(), store(warn=True)
    if token is not None and db is not None:
        try:
            db.revoke_instructor_session(token)
        except StorageError as e:
            st.warning(message(e), icon="⚠️")
    _forget_here()


def sign_out_everywhere() -> None:
    """Every instructor session ends, in every browser and replica, this one included."""
    db = store(warn=True)
    if db is not None:
        try:
            db.revoke_instructor_sessions()
        except StorageError as e:
            st.warning(message(e), icon="⚠️")
    _forget_here()


def _token() -> str | None:
    token = st.session_state.get(UNLOCKED)
    return token if isinstance(token, str) else None


def _open(token) -> bool | None:
    """Whether the store has this token's session open (None: the store cannot say now); its class becomes this
    session's when it has none."""
    db = store()
    if db is None:
        return None
    try:
        found = sessions.valid(db, token)
    except StorageError:
        return None
    if found is not None:
        st.session_state.setdefault(CLASS, found.class_code)
    return found is not None


def _cookie() -> str | None:
    """The cookie as the browser sent it when this session connected."""
    return (st.context.cookies or {}).get(COOKIE)


def _from_cookie() -> bool:
    """A cookie from an earlier session of this browser whose session the store still has open: unlocked again,
    with its class."""
    raw = _cookie()
    if not raw or st.session_state.get(LOCKED) or not _open(raw):
        return False
    st.session_state[UNLOCKED] = raw
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
    """Entered the passcode in this session (or in an earlier one of this browser), a passcode is still configured,
    and the store still has the session open: Lock, "sign out everywhere" or a new passcode ends it at the next
    run of every session that holds it."""
    if passcode.configured() is None:
        return False
    token = _token()
    if token is not None:
        is_open = _open(token)
        if is_open is not False:  # None: the store is away for now; the session stays, locked until it is back
            return bool(is_open)
        st.session_state.pop(UNLOCKED, None)
    return _from_cookie()


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
