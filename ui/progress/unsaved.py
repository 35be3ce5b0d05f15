"""The session's outbox (classroom/outbox.py): every write of the student's progress goes through it, so a write
the database cannot take now stays in the session and is sent again, in order, on the next run (and every few
seconds while the page shows that something waits: ui/progress/saved.py `notices`).

A database opened anew under the running app (a deleted or replaced SQLite file) gets the session's whole
progress again, the student's row first, on the session's next run: what the student did here is not lost, and a
restart finds it."""
from __future__ import annotations

import time

import streamlit as st

from classroom.errors import StorageError
from classroom.outbox import Op, Outbox
from classroom.store import get_store, new_token
from ui.progress import keys
from ui.progress.keys import NOTICE, TOKEN, UNAVAILABLE


def outbox() -> Outbox:
    return st.session_state.setdefault(keys.OUTBOX, Outbox())


def pending() -> int:
    box = st.session_state.get(keys.OUTBOX)
    return box.pending if box is not None else 0


def send(method: str, *args) -> None:
    """`Store.<method>(*args)` after everything sent before it; kept until the store has it."""
    outbox().add(method, *args)
    flush()


def flush() -> None:
    """Send what waits. A write refused for its content becomes a message; while the database cannot take them,
    the writes stay and UNAVAILABLE says why; when the last one goes through after that, SAVED_AGAIN."""
    ss = st.session_state
    box = ss.get(keys.OUTBOX)
    if box is None or not box.ops:
        return
    try:
        store = get_store()
    except StorageError as err:
        ss[UNAVAILABLE] = box.error = err
        return
    waited = box.pending
    for err in box.flush(store):
        ss[NOTICE] = ("error", f"classroom.error.{err.code}", err.params)
    if box.error is not None:
        ss[UNAVAILABLE] = box.error
    elif waited and ss.pop(UNAVAILABLE, None) is not None:
        ss[keys.SAVED_AGAIN] = True


def new_student(name: str = "", class_code: str = "") -> str:
    """A token for this session, made here: the student can keep working, and is saved, while the database is
    away (the row goes first, the milestones reached before the token after it)."""
    ss = st.session_state
    tok = ss[TOKEN] = new_token()
    st.query_params["s"] = tok
    ss[keys.ATTEMPT_NO] = ss[keys.QUIZ_ATTEMPT_NO] = 1  # a new student's first attempt
    box = ss[keys.OUTBOX] = Outbox()
    box.add("ensure_student", tok, name, class_code, time.time())
    for mid in sorted(ss.get(keys.MILESTONES, set())):
        box.add("reach_milestone", tok, mid, 1)
    flush()
    return tok


def loaded(store, ops: list[Op]) -> None:
    """The progress just read from `store`: kept, to be written again should the database lose it."""
    box = st.session_state[keys.OUTBOX] = Outbox()
    box.loaded(ops, store.epoch)
