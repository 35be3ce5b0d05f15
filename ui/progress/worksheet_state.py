"""Worksheet answers as the session holds them: each field's text outlives its widget (a page switch drops
widgets), and every change is written through to the student's saved progress."""
from __future__ import annotations

import streamlit as st

from ui.progress import keys
from ui.progress.saved import draft


def answers() -> dict:
    """task id -> field id -> text."""
    return st.session_state.setdefault(keys.ANSWERS, {})


def keep(task_id: str, field_id: str, text: str) -> None:
    """A field's new text: into the session, its widget and the store."""
    answers().setdefault(task_id, {})[field_id] = st.session_state[keys.task_field(task_id, field_id)] = text
    draft(task_id, field_id, text)


def take(loaded: dict, tasks) -> int:
    """Answers read from an export, for the fields these tasks have; returns how many were taken."""
    known = {task.id: {f.id for f in task.fields} for task in tasks}
    n = 0
    for task_id, fields in loaded.items():
        for field_id, text in fields.items():
            if field_id in known.get(task_id, ()):
                keep(task_id, field_id, text)
                n += 1
    return n
