"""The worksheet page's pieces: the import of answers, a task's fields laid out (runs and figures in the
columns compared, a choice beside its reason, the three features as rows), its submit, and where it stands."""
from __future__ import annotations

import streamlit as st

from lessons.answers_markdown import answers_from_markdown
from lessons.evidence.checks import Verdict
from lessons.worksheet_status import TaskStatus, task_status
from ui.practice import evidence_check, evidence_runs, explanations, worksheet_fields
from ui.progress import keys, worksheet_state
from ui.progress import saved as progress
from ui.shell.i18n import t


def import_answers(text: str, tasks) -> None:
    try:
        loaded = answers_from_markdown(text)
    except ValueError as e:
        st.error(t("tasks.import_error", msg=str(e)))
        return
    st.success(t("tasks.imported", n=worksheet_state.take(loaded, tasks)))


def _columns(task, by_id: dict, drawn: set) -> None:
    """A comparison's runs: the run maker, then per compared column its run and its figures."""
    evidence_runs.maker(task)
    for col, name in zip(st.columns(2), evidence_check.COLUMNS[task.evidence]):
        col.markdown(f"**{t(f'ev.column.{name}')}**")
        for f in by_id.values():
            if f.id.endswith(f"_{name}") and (f.kind == "number" or f.options_from == "runs"):
                worksheet_fields.draw(col, task, f)
                drawn.add(f.id)


def fields(task) -> None:
    by_id = {f.id: f for f in task.fields}
    drawn = {"runs"}
    if task.evidence in evidence_check.COLUMNS:
        _columns(task, by_id, drawn)
    for f in task.fields:
        if f.id in drawn or f.kind == "runs":
            continue
        number = f.id.rpartition("_")[2]
        if f.kind == "choice" and f"{f.id}_why" in by_id:  # a choice of fact and its one-line reason
            c = st.columns([1, 1.6])
            worksheet_fields.draw(c[0], task, f)
            worksheet_fields.draw(c[1], task, by_id[f"{f.id}_why"])
            drawn.add(f"{f.id}_why")
        elif f.id == f"change_{number}":  # a feature: its change, the metric it hurts, for whom
            st.markdown(f"**{t('ev.feature', n=number)}**")
            row = [by_id[f"{k}_{number}"] for k in ("change", "metric", "who")]
            for col, part in zip(st.columns(3), row):
                worksheet_fields.draw(col, task, part)
            drawn.update(p.id for p in row)
        elif f.id.endswith("_mode"):  # the goal's "measured as" beside its number
            value = by_id.get(f.id.replace("_mode", "_min")) or by_id[f.id.replace("_mode", "_bound")]
            _pair(task, f, value, drawn)
        else:
            worksheet_fields.draw(st, task, f)


def still_empty(task) -> None:
    """Above Check: the fields not yet filled, named, so a missing one is seen before the check says so."""
    answers, by_id = worksheet_state.answers().get(task.id, {}), {f.id: f for f in task.fields}

    def name(f) -> str:  # "Why (one line)" is drawn beside its choice: named with it
        choice = by_id.get(f.id.removesuffix("_why")) if f.id.endswith("_why") else None
        return f"{choice.label} · {f.label}" if choice else f.label
    empty = [name(f) for f in task.fields if f.kind != "runs" and not str(answers.get(f.id) or "").strip()]
    if empty:
        st.caption(t("tasks.still_empty", n=len(empty), fields="; ".join(empty)))


def _pair(task, mode, value, drawn: set) -> None:
    c = st.columns(2)
    worksheet_fields.draw(c[0], task, mode)
    worksheet_fields.draw(c[1], task, value)
    drawn.add(value.id)


def in_class() -> bool:
    student = progress.me()
    return bool(student and student.class_code)


def status(task) -> TaskStatus:
    answers = worksheet_state.answers().get(task.id, {})
    verified = evidence_check.verified(task)
    return task_status(task, answers, _flag(verified) if verified is not None else None,
                       explanations.assessments().get(task.id, {}),
                       {fid: m.mark for fid, m in explanations.marks().get(task.id, {}).items()
                        if m.text == answers.get(fid)} if in_class() else None,  # a mark is on the text it read
                       evidence_check.tries(task))


def _flag(verified: bool) -> Verdict:
    """A stored check's result as a verdict (its findings are shown only in the session that checked)."""
    v = Verdict()
    v.add(verified, "stored")
    return v


def submit(task) -> None:
    """Check the evidence against real runs; from now on the explanations show their rubric."""
    evidence_check.check(task)
    st.session_state.setdefault(keys.SUBMITTED, set()).add(task.id)
    st.rerun()


def record(task, now: TaskStatus) -> None:
    """Into the student's progress, when it changed: where the task stands, and the milestone once complete
    (a self-assessment or the instructor's mark can complete a task as well as a submit)."""
    recorded = st.session_state.setdefault(keys.RECORDED, {})
    touched = task.id in st.session_state.get(keys.SUBMITTED, set()) or explanations.assessments().get(task.id)
    if touched and recorded.get(task.id) != now:
        recorded[task.id] = now
        progress.worksheet_status(task, now)


def after_submit(task) -> None:
    evidence_check.findings(task)
    answers = worksheet_state.answers().get(task.id, {})
    submitted = task.id in st.session_state.get(keys.SUBMITTED, set())
    for f in task.explanations():
        text = answers.get(f.id) or ""
        if submitted or explanations.assessments().get(task.id, {}).get(f.id):
            st.markdown(f"**{f.label}**")
            explanations.review(task, f, text)
    if any(f.kind == "choice" and f.answer for f in task.fields):
        st.caption(t("tasks.choice_rule", check=t("tasks.check")))
    now = status(task)
    if task.evidence == "goal":
        st.caption(t("tasks.goal_rule", check=t("tasks.check")) + (
            " " + t("tasks.goal_attempts", n=now.goal_attempts) if now.goal_attempts else ""))
    if now.complete:
        st.success(t("tasks.complete"))
    else:
        st.caption(t("tasks.waiting", what="; ".join(t(f"tasks.wait.{code}") for code in now.waiting_for())))
