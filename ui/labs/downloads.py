"""Exports: metrics (JSON, CSV), the run itself (a replayable JSONL trace), figures (HTML; PNG from each
chart's camera button)."""
from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

import streamlit as st

from engine.lab.metrics import request_metrics
from engine.lab.trace import write_trace

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


def trace_text(run: LiveRun, header: dict) -> str:
    out = io.StringIO()
    write_trace(out, {**header, "engine_config": run.config.to_dict(), "summary": run.summary()},
                run.trace_requests, run.snapshots)
    return out.getvalue()


def requests_csv(run: LiveRun) -> str:
    rows = [{k: v for k, v in request_metrics(r, run.config.max_num_batched_tokens).items() if k != "itl_s"}
            for r in run.recorder.requests.values()]
    return table_csv(rows)


def table_csv(rows: list[dict]) -> str:
    if not rows:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def figures_html(figures: list) -> str:
    """One self-contained page (plotly.js embedded once), so it opens offline."""
    parts = [fig.to_html(full_html=False, include_plotlyjs=(i == 0)) for i, fig in enumerate(figures)]
    return "<html><head><meta charset='utf-8'></head><body>" + "".join(parts) + "</body></html>"


def buttons(run: LiveRun, name: str, header: dict, figures, labels: dict) -> None:
    """Files are built only when clicked (Streamlit calls the lambdas then)."""
    c = st.columns(4)
    c[0].download_button(labels["metrics_json"], lambda: json.dumps(run.summary(), indent=2), f"{name}-metrics.json",
                         "application/json", key=f"dl.json.{name}", on_click="ignore")
    c[1].download_button(labels["requests_csv"], lambda: requests_csv(run), f"{name}-requests.csv", "text/csv",
                         key=f"dl.csv.{name}", on_click="ignore")
    c[2].download_button(labels["trace"], lambda: trace_text(run, header), f"{name}.jsonl", "application/jsonl",
                         key=f"dl.trace.{name}", on_click="ignore")
    c[3].download_button(labels["figures"], lambda: figures_html(figures()), f"{name}-figures.html", "text/html",
                         key=f"dl.html.{name}", on_click="ignore")
