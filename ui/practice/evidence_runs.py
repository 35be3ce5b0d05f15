"""The runs a student makes as worksheet evidence: made here, listed with their figures, kept in the student's
progress as specs (a worksheet field of kind `runs`, JSON), and measured again from the spec when needed:
the engine is deterministic and runs are shared between sessions, so a reload costs a moment, not a figure."""
from __future__ import annotations

import json

import streamlit as st

from engine.lab.workload import PRESETS
from lessons.evidence.metrics import METRICS
from lessons.evidence.runs import RunSpec, SpecError, task_seed
from ui.labs import experiments, models
from ui.progress import saved as progress
from ui.progress import worksheet_state
from ui.shell.i18n import run_name, t

SUMMARIES = "evidence.summaries"  # (model, spec key) -> summarize() dict, this session's
VARIANT = {"batching": "batcher", "paging": "kv_layout"}  # the setting each comparison's runs differ in
SHOWN = {"batching": ("throughput", "wait_mean"), "paging": ("running", "kv_waste", "refusals")}


def seed(task) -> int:
    """The workload seed of this student's runs for the task (lessons.evidence.runs.task_seed; a token is made if
    there is none yet)."""
    return task_seed(task.evidence, progress.token() or "", task.id)


def stored_runs(task) -> dict[str, RunSpec]:
    """The task's runs, key -> spec, in the order made. A stored entry the lab cannot run (an edited import) is
    left out with a warning rather than stopping the page."""
    text = worksheet_state.answers().get(task.id, {}).get("runs") or "[]"
    try:
        entries = json.loads(text)
    except ValueError:
        entries = None
    if not isinstance(entries, list):
        st.warning(t("ev.runs_unreadable"))
        return {}
    runs = {}
    for entry in entries:
        try:
            spec = RunSpec.from_dict(entry)
        except SpecError as err:
            st.warning(t("ev.run_unreadable", code=err.code))
            continue
        runs[spec.key] = spec
    return runs


def _keep_runs(task, runs: dict[str, RunSpec]) -> None:
    worksheet_state.keep(task.id, "runs", json.dumps([s.to_dict() for s in runs.values()]))


def summary(spec: RunSpec) -> dict | None:
    """The spec's measured summary: this session's, or a real run now (shared with other sessions)."""
    cache = st.session_state.setdefault(SUMMARIES, {})
    key = (models.chosen(), spec.key)
    if key not in cache:
        workload, settings = spec.built()
        measured = experiments.summary_of_run(workload, spec.seed, settings)
        if measured is None:
            return None
        cache[key] = measured
    return cache[key]


def label(spec: RunSpec, runs: dict[str, RunSpec], evidence: str) -> str:
    """How a run is listed and picked: "#2 · chat-and-reports · static (96 blocks)"."""
    config = spec.config()
    text = f"#{list(runs).index(spec.key) + 1} · {spec.workload} · {run_name(getattr(config, VARIANT[evidence]))}"
    if evidence == "paging":
        text += " · " + t("ev.blocks", n=config.num_blocks if config.num_blocks else "auto")
    return text


def maker(task) -> None:
    """Pick a workload and the compared setting (and, for paging, the memory), press Run: the run joins the list."""
    evidence, runs = task.evidence, stored_runs(task)
    with st.container(border=True):
        st.markdown(f"**{t('ev.make_run')}**")
        c = st.columns([2, 3, 1.6, 1] if evidence == "paging" else [2, 3, 1], vertical_alignment="bottom")
        workload = c[0].selectbox(t("ev.workload"), list(PRESETS), key=f"ev.{task.id}.workload")
        setting = VARIANT[evidence]
        values = ("static", "continuous") if evidence == "batching" else ("contiguous", "paged")
        names = {v: run_name(v) for v in values}  # a dict, not run_name: formatting must not need this run's language
        variant = c[1].segmented_control(t(f"ev.setting.{setting}"), values, format_func=names.get, default=values[0],
                                         key=f"ev.{task.id}.variant")
        settings = {setting: variant or values[0]}
        if evidence == "paging":
            hint = PRESETS[workload].engine_hints.get("num_blocks") or 96
            settings["num_blocks"] = int(c[2].number_input(t("ev.num_blocks"), 8, 1024, hint, step=8,
                                                           key=f"ev.{task.id}.blocks.{workload}"))
        if c[-1].button(t("ev.run"), type="primary", key=f"ev.{task.id}.run"):
            spec = RunSpec(workload, settings, seed(task))
            if summary(spec) is not None:
                _keep_runs(task, {**runs, spec.key: spec})
                st.rerun()
    table(task, stored_runs(task))


def table(task, runs: dict[str, RunSpec]) -> None:
    """The student's runs with the figures the worksheet asks for, as the lab measured them."""
    if not runs:
        st.caption(t("ev.no_runs"))
        return
    rows = []
    for spec in runs.values():
        measured = summary(spec)
        row = {t("ev.col.run"): label(spec, runs, task.evidence)}
        for metric_id in SHOWN[task.evidence]:
            m = METRICS[metric_id]
            value = m.value(measured) if measured else None
            row[t(f"ev.metric.{metric_id}")] = "—" if value is None else f"{value:.{m.digits}f}"
        rows.append(row)
    st.dataframe(rows, hide_index=True)
