"""The playground's run history: one row of figures per finished run, the table, a chart of one figure across
runs, and its CSV."""
from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from ui.labs import downloads
from ui.shell.i18n import choice, run_name, t
from ui.shell.style import CHART_CONFIG
from viz.charts import history_chart

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


NAMED = ("batcher", "policy", "kv")  # values that are run names, translated like the labs' runs
WALL_CLOCK = ("tok_per_s",)  # shown with a word that load moves them, never charted as a ranking of runs


def rows(page: str) -> list[dict]:
    return st.session_state.setdefault(f"{page}.history", [])


def record(page: str, run: LiveRun, name: str) -> None:
    """A finished run's row, once."""
    history, cfg = rows(page), run.config
    if history and history[-1]["_run"] is run:
        return
    s = run.summary()
    history.append({"_run": run, "name": name, "batcher": cfg.batcher, "policy": cfg.policy, "kv": cfg.kv_layout,
                    "steps": s["steps"], "tok_per_s": s["throughput_tok_per_s"],
                    "tok_per_step": s["throughput_tok_per_step"], "ttft_p50": s["latency"]["ttft_steps"]["p50"],
                    "ttft_p95": s["latency"]["ttft_steps"]["p95"], "kv_waste": s["kv_waste_share"],
                    "fairness": s["fairness_jain"], "preemptions": s["preemptions"]})


def show(page: str) -> None:
    history = rows(page)
    if not history:
        return
    st.subheader(t("pg.history"))
    table = [{t(f"hist.{k}"): run_name(v) if k in NAMED else v for k, v in row.items() if not k.startswith("_")}
             for row in history]
    st.dataframe(table, hide_index=True)
    st.caption(t("hist.wall_note"))
    metrics = [k for k in history[0] if not k.startswith("_") and k not in ("name", *NAMED, *WALL_CLOCK)]
    metric = choice(st.selectbox, t("pg.compare_metric"), metrics, f"{page}.metric", "hist.")
    chart_rows = [{"name": row["name"], metric: row[metric]} for row in history]
    st.plotly_chart(history_chart(chart_rows, metric, t(f"hist.{metric}")), key=f"{page}.history_chart",
                    config=CHART_CONFIG, theme=None)
    c = st.columns([2, 2, 6])
    c[0].download_button(t("pg.history_csv"), lambda: downloads.table_csv(table), "history.csv", "text/csv",
                         key=f"{page}.history_csv", on_click="ignore")
    if c[1].button(t("pg.clear_history"), key=f"{page}.clear"):
        st.session_state[f"{page}.history"] = []
        st.rerun()
