"""A run's figures: the live metrics panel at one frame, the whole-run summary table, and saving runs."""
from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import streamlit as st

from ui.labs import downloads
from ui.shell.i18n import class_name, lang, run_name, t
from ui.views.base import fmt, html_table, html_view, metric_grid
from ui.labs import models

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


def metrics_panel(run: LiveRun, frame: int, key: str = "metrics") -> None:
    html_view(run, frame, ("metrics", lang()), lambda i: metrics_html(run, i), key)


def bound(value: str, censored: int) -> str:
    """A figure that counts requests with their time so far is a lower bound, and says so."""
    return f"≥ {value}" if censored and value != "–" else value


def metrics_html(run: LiveRun, frame: int) -> str:
    """What the numbers were at this frame, over every request that had arrived by then: the ones still
    waiting count with their time so far (engine.lab.recorder.frame_metrics), and the panel says how many."""
    m = run.recorder.frame_metrics(min(frame, run.frames - 1))
    # tokens/step counts steps, so a busy server cannot change it; tokens/s is wall time and says so
    items = [(t("m.tok_per_step"), fmt(m["tok_per_step"], ".2f"), ""),
             (t("m.tok_per_s"), fmt(m["tok_per_s"], ".0f"), t("m.tok_per_s_help")),
             (t("m.queue"), m["queue"], ""),
             (t("m.slot_util"), fmt(100 * m["slot_util_now"], ".0f", "%"),
              t("m.slot_util_help", mean=fmt(100 * m["slot_util_mean"], ".0f", "%"))),
             (t("m.kv_util"), fmt(100 * m["kv_util_now"], ".0f", "%"), ""),
             (t("m.fairness"), fmt(m["fairness_jain"], ".2f"), t("m.fairness_help")),
             (t("m.preemptions"), m["preemptions"], ""),
             (t("m.finished"), f"{m['finished']} / {len(run.recorder.requests)}", "")]
    html = metric_grid(items)
    if m["classes"]:  # plain HTML: far cheaper to redraw 10 times a second than a data grid
        head = [t("m.class"), t("m.ttft_p50"), t("m.ttft_p95"), t("m.ttft_p50_ms"), t("m.slo")]
        rows = [[class_name(cls), *(bound(fmt(c[k]), c["ttft_censored"])
                                    for k in ("ttft_p50_steps", "ttft_p95_steps", "ttft_p50_ms")),
                 fmt(None if c["slo_attainment"] is None else 100 * c["slo_attainment"], ".0f", "%")]
                for cls, c in m["classes"].items()]
        html += html_table(head, rows)
    if m["unfinished"]:
        note = t("m.so_far", waiting=m["ttft_censored"], unfinished=m["unfinished"])
        html += f'<p class="lab-note">{escape(note)}</p>'
    return html


def summary_rows(runs: list[LiveRun]) -> list[dict]:
    rows = []
    for run in runs:
        s = run.summary()
        # no tokens/s here: runs side by side are ranked by what a busy server cannot change (steps)
        row = {t("sum.run"): run_name(run.label), t("sum.steps"): s["steps"],
               t("sum.tok_per_step"): fmt(s["throughput_tok_per_step"], ".2f"),
               t("sum.ttft_p50"): fmt(s["latency"]["ttft_steps"]["p50"]),
               t("sum.ttft_p95"): fmt(s["latency"]["ttft_steps"]["p95"]),
               t("sum.slot_util"): fmt(100 * s["slot_utilisation"], ".0f", "%"),
               t("sum.kv_waste"): fmt(100 * s["kv_waste_share"], ".1f", "%"),
               t("sum.fairness"): fmt(s["fairness_jain"], ".2f"), t("sum.preemptions"): s["preemptions"]}
        for cls, d in s["by_class"].items():
            row[t("sum.ttft_p50_class", cls=class_name(cls))] = fmt(d["ttft_steps"]["p50"])
            row[t("sum.ttft_p95_class", cls=class_name(cls))] = fmt(d["ttft_steps"]["p95"])
            if d.get("slo_attainment") is not None:
                row[t("sum.slo_class", cls=class_name(cls))] = fmt(100 * d["slo_attainment"], ".0f", "%")
        rows.append(row)
    return rows


def summary_table(runs: list[LiveRun]) -> None:
    st.dataframe(summary_rows(runs), hide_index=True)


def save_runs(runs: list[LiveRun], page: str) -> None:
    """Instructors record a run here and replay it later in the playground, with no model loaded."""
    with st.expander(t("save.title")):
        st.caption(t("save.help"))
        for run in runs:
            st.download_button(t("save.one", label=run.label), lambda run=run: downloads.trace_text(
                run, {"model": models.chosen(), "workload": page, "label": run.label}),
                f"{page}-{run.label}.jsonl", "application/jsonl", key=f"{page}.save.{run.label}", on_click="ignore")
