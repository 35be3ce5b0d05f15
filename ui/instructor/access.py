"""What the class view and the live polls share: the store, its refusals in the user's language, who is
looking (a student's token and class code; an instructor who entered the passcode, and their class)."""
from __future__ import annotations

import streamlit as st

from classroom import StorageError, get_store
from ui.instructor import passcode
from ui.progress import saved as progress

UNLOCKED = "instructor.unlocked"  # session key: this session entered the right passcode
CLASS = "instructor.class_code"  # session key: the class the instructor looks at and polls


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
    """Entered the passcode in this session, and a passcode is still configured."""
    return bool(st.session_state.get(UNLOCKED)) and passcode.configured() is not None


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
