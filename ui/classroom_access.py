"""What the class view and the live polls share: the store, its refusals in the user's language, who is
looking (a student's token and class code; an instructor who entered the passcode, and their class)."""
from __future__ import annotations

import streamlit as st

from classroom import StorageError, get_store
from ui import passcode
from ui.i18n import strings, t

UNLOCKED = "instructor.unlocked"  # session key: this session entered the right passcode
CLASS = "instructor.class_code"  # session key: the class the instructor looks at and polls


def store():
    """The process's store, or None (with a warning) when the database cannot be used."""
    try:
        return get_store()
    except StorageError as e:
        st.warning(message(e), icon="⚠️")
        return None


def message(err: StorageError) -> str:
    key = f"classroom.error.{err.code}"
    return t(key, **err.params) if key in strings() else err.code


def unlocked() -> bool:
    """Entered the passcode in this session, and a passcode is still configured."""
    return bool(st.session_state.get(UNLOCKED)) and passcode.configured() is not None


def instructor_class() -> str | None:
    """The instructor's class code, once unlocked and chosen."""
    return (st.session_state.get(CLASS) or None) if unlocked() else None


def student() -> tuple[str | None, str | None]:
    """This session's student token and class code (set by the progress panel, ui/progress.py)."""
    ss = st.session_state
    token, code = ss.get("student.token"), ss.get("student.class_code")
    if token and not code and (db := store()) is not None:
        try:
            found = db.student(token)
        except StorageError:
            found = None
        code = found.class_code if found else None
    return token, code or None
