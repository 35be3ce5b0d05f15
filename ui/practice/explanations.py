"""An explanation after the student submits it: the keyword reader's hints (labelled as hints, never a verdict),
the task's rubric beside a model answer, the student's own judgement against the rubric, and the
instructor's mark once there is one."""
from __future__ import annotations

import streamlit as st

from lessons import check_field
from lessons.loader import SELF_ASSESSMENT
from ui.progress import keys, worksheet_state
from ui.progress import saved as progress
from ui.shell.i18n import lang, t


def assessments() -> dict:
    """task id -> field id -> met | partly | not_yet, as this session holds them (loaded with the progress)."""
    return st.session_state.setdefault(keys.SELF_ASSESSED, {})


def marks() -> dict:
    """task id -> field id -> the instructor's Mark (ok | needs_work, comment), loaded with the progress."""
    return st.session_state.get(keys.MARKS) or {}


def _keep(task_id: str, field_id: str) -> None:
    value = st.session_state[f"{keys.SELF_ASSESS_PREFIX}{task_id}.{field_id}"]
    if value is not None:
        assessments().setdefault(task_id, {})[field_id] = value
        progress.self_assessed(task_id, field_id, value)


def hints(f, text: str) -> None:
    found = check_field(f, text, lang())
    lines = [m for m in found.messages[:1] if found.empty or found.rejected or found.stuffed]
    lines += [c.feedback for c in found.criteria if not c.met]
    if lines:
        st.caption(t("ex.hints_label"))
        st.markdown("\n\n".join("💡 " + line for line in lines))


def review(task, f, text: str) -> None:
    """Below a submitted explanation."""
    with st.container(border=True, key=f"explain-{task.id}-{f.id}"):
        hints(f, text)
        left, right = st.columns(2)
        left.markdown(f"**{t('ex.rubric')}**\n\n" + "\n".join(f"- {item}" for item in f.rubric))
        examples = task.model_answers_for(f.id, worksheet_state.answers().get(task.id, {}))
        if examples:
            right.markdown(f"**{t('ex.model_answer')}**\n\n> {examples[0]}")
        key = f"{keys.SELF_ASSESS_PREFIX}{task.id}.{f.id}"
        if key not in st.session_state:
            st.session_state[key] = assessments().get(task.id, {}).get(f.id)
        names = {v: t(f"ex.sa.{v}") for v in SELF_ASSESSMENT}
        st.radio(t("ex.self_assess"), SELF_ASSESSMENT, format_func=names.get, index=None,
                 horizontal=True, key=key, on_change=_keep, args=(task.id, f.id))
        mark(task.id, f.id, text)


def mark(task_id: str, field_id: str, text: str) -> None:
    given = marks().get(task_id, {}).get(field_id)
    if given is None:
        return
    if given.text != text:
        st.info(t("ex.marked_earlier", mark=t("ex.marked_ok") if given.mark == "ok" else given.comment or "—"),
                icon="🕘")
    elif given.mark == "ok":
        st.success(t("ex.marked_ok") + (f" — {given.comment}" if given.comment else ""), icon="✅")
    else:
        st.warning(t("ex.marked_needs_work", comment=given.comment or "—"), icon="✍️")
