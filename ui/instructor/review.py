"""The instructor reviews explanations: per task and explanation, every student's text, their self-assessment and
the current mark, and a form to mark it ✓ or "needs work" with a comment. Outside the live fragment: a view
that redraws itself every few seconds would take a half-typed comment away."""
from __future__ import annotations

import re

import streamlit as st

from classroom import StorageError
from classroom.reviews import MAX_COMMENT
from lessons import load_tasks
from ui.instructor.access import message
from ui.shell.i18n import lang, t

PAGE = "class-view"
MARKS = ("ok", "needs_work")
_MARKUP = re.compile(r"([\\`*_\[\]<>#$~|!])")  # what Markdown (and Streamlit's $math$, :color[...]) would act on


def _who(student: dict, show_names: bool) -> str:
    """The student as the page writes them: their name as typed (escaped: `*x*` is no emphasis, `<b>` no tag)."""
    if show_names and student["name"]:
        return _MARKUP.sub(r"\\\1", student["name"])
    return t("review.student", n=student["n"])


def explanations(db, code: str, show_names: bool) -> None:
    st.subheader(t("review.title"))
    c = st.columns([5, 1], vertical_alignment="center")
    c[0].caption(t("review.help"))
    c[1].button(t("review.refresh"), key=f"{PAGE}.review.refresh")  # a click reruns the page: fresh texts
    try:
        students = db.class_explanations(code)
    except StorageError as e:
        st.error(message(e))
        return
    if not students:
        st.info(t("cv.no_students"))
        return
    for task in load_tasks(lang()):
        for f in task.explanations():
            written = [s for s in students if (s["texts"].get(task.id, {}).get(f.id) or "").strip()]
            to_mark = [s for s in written if _current_mark(s, task.id, f.id) is None]
            with st.expander(t("review.field", task=task.title, field=f.label, written=len(written),
                               total=len(students), open=len(to_mark)), expanded=bool(to_mark)):
                for student in students:
                    _one(db, code, task, f, student, show_names)


def _current_mark(student: dict, task_id: str, field_id: str):
    """The mark on the text as it stands (a mark on an earlier version does not count)."""
    mark = student["marks"].get(task_id, {}).get(field_id)
    text = student["texts"].get(task_id, {}).get(field_id)
    return mark if mark is not None and mark.text == text else None


def _quoted(text: str) -> str:
    """The student's text as typed, quoted: "$5 and $6" is no formula, "*" no emphasis, ![..](..) no image."""
    return "\n".join("> " + _MARKUP.sub(r"\\\1", line) for line in text.splitlines())


def _one(db, code: str, task, f, student: dict, show_names: bool) -> None:
    text = (student["texts"].get(task.id, {}).get(f.id) or "").strip()
    who = _who(student, show_names)
    if not text:
        st.caption(t("review.not_written", who=who))
        return
    assessed = student["self"].get(task.id, {}).get(f.id)
    mark, earlier = _current_mark(student, task.id, f.id), student["marks"].get(task.id, {}).get(f.id)
    with st.container(border=True, key=f"review-{task.id}-{f.id}-{student['n']}"):
        status = t(f"review.mark.{mark.mark}") if mark else t("review.earlier") if earlier else t("review.unmarked")
        st.markdown(f"**{who}** · {t('review.self', value=t(f'ex.sa.{assessed}') if assessed else '—')} · {status}")
        st.markdown(_quoted(text))
        key = f"{PAGE}.review.{task.id}.{f.id}.{student['n']}"
        with st.form(key, border=False):
            names = {m: t(f"review.mark.{m}") for m in MARKS}
            c = st.columns([2, 4, 1], vertical_alignment="bottom")
            chosen = c[0].radio(t("review.mark"), MARKS, format_func=names.get, horizontal=True, key=f"{key}.mark",
                                index=MARKS.index(mark.mark) if mark else None)
            comment = c[1].text_input(t("review.comment"), value=mark.comment if mark else "", key=f"{key}.comment",
                                      max_chars=MAX_COMMENT)
            saved = c[2].form_submit_button(t("review.save"), type="primary")
        if saved:
            if chosen is None:
                st.warning(t("review.pick_mark"))
                return
            try:
                db.mark(code, student["token"], task.id, f.id, chosen, comment)
            except StorageError as e:
                st.error(message(e))
                return
            st.rerun()
