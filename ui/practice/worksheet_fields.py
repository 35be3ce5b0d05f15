"""One worksheet field drawn by its kind (text, long, number, choice), its value kept as text in the student's
answers (ui/progress/worksheet_state.py) so it outlives the widget and reaches the saved progress."""
from __future__ import annotations

import streamlit as st

from engine.config import POLICIES
from engine.lab.workload import PRESETS
from lessons.evidence.metrics import EFFECT_METRICS
from lessons.evidence.runs import CHANGES, RunSpec, SpecError
from ui.practice import evidence_runs
from ui.progress import keys, worksheet_state
from ui.shell.i18n import class_name, run_name, t


def _keep(task_id: str, field_id: str) -> None:
    value = st.session_state[keys.task_field(task_id, field_id)]
    worksheet_state.keep(task_id, field_id, "" if value is None else str(value))


def options(task, f) -> dict[str, str]:
    """value -> label: the field's own options, or those of its source, in the student's language."""
    if not f.options_from:
        return dict(f.options)
    if f.options_from == "runs":
        runs = evidence_runs.stored_runs(task)
        return {key: evidence_runs.label(spec, runs, task.evidence) for key, spec in runs.items()}
    if f.options_from == "workloads":
        return {name: name for name in PRESETS}
    if f.options_from == "changes":
        return {c: t(f"ev.change.{c}") for c in CHANGES}
    if f.options_from == "effect_metrics":
        return {m: t(f"ev.metric.{m}") for m in EFFECT_METRICS}
    if f.options_from == "policies":
        return {p: run_name(p) for p in POLICIES}
    workload = worksheet_state.answers().get(task.id, {}).get("workload")  # classes: of the baseline workload
    try:
        classes = RunSpec(workload).classes() if workload else ()
    except SpecError:
        classes = ()
    return {"all": t("ev.who_all"), **{c: class_name(c) for c in classes}}


def draw(container, task, f, label_visibility: str = "visible") -> None:
    key = keys.task_field(task.id, f.id)
    saved = worksheet_state.answers().get(task.id, {}).get(f.id, "")
    args = {"key": key, "on_change": _keep, "args": (task.id, f.id), "label_visibility": label_visibility}
    if f.kind == "choice":
        shown = options(task, f)
        if st.session_state.get(key) not in shown:  # a fresh widget, or an option that went away (a run removed)
            st.session_state[key] = saved if saved in shown else None
        # "for whom" lists the baseline's classes: until a baseline is picked, it says so (not only after Submit)
        waits = f.options_from == "classes" and not worksheet_state.answers().get(task.id, {}).get("workload")
        container.selectbox(f.label, list(shown), format_func=shown.get, index=None,
                            placeholder=t("ev.pick_baseline_first" if waits else "ev.choose"), **args)
        return
    if key not in st.session_state:
        st.session_state[key] = saved
    if f.kind == "long":
        container.text_area(f.label, **args)
    else:  # text and number: a number is typed as the page shows it, and checked against the run
        container.text_input(f.label + (f" ({f.unit})" if f.unit else ""), **args)
