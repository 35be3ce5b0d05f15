"""Figures for the Real server page: a server's own gauges over time, client latency per class, and
latency against load. Pure functions of the load client's result dicts (and labels)."""
from __future__ import annotations

import plotly.graph_objects as go

from viz.figure import figure
from viz.figure import title as title_
from viz.palette import GAUGE_COLORS, GAUGE_DASHES, TRIO, class_color


def gauge_timeline(timeline: list[dict], labels: dict, title: str = "", height: int = 280,
                   x_max: float | None = None) -> go.Figure:
    """Running and waiting requests (left axis) and KV-cache usage (right axis, 0-100 %) over seconds. Each line has
    its own dash and its name written at its last point, so no line is told by its colour alone."""
    x = [s["t"] for s in timeline]
    traces = [{"type": "scatter", "x": x, "y": [s.get(key) for s in timeline], "name": labels[key],
               "mode": "lines", "line": {"color": GAUGE_COLORS[key], "width": 2, "shape": "hv",
                                         "dash": GAUGE_DASHES[key]}}
              for key in ("running", "waiting")]
    traces.append({"type": "scatter", "x": x, "y": [s.get("kv_usage") for s in timeline], "name": labels["kv_usage"],
                   "mode": "lines", "yaxis": "y2", "line": {"color": GAUGE_COLORS["kv_usage"],
                                                           "dash": GAUGE_DASHES["kv_usage"]},
                   "hovertemplate": "%{y:.0%}"})
    xaxis = {"title": {"text": labels["seconds"]}}
    if x_max:
        xaxis["range"] = [0, x_max]
    return figure(traces, {"title": title_(title), "height": height, "margin": {"l": 45, "r": 50, "t": 36, "b": 30},
                           "annotations": _line_ends(timeline, labels),
                           "legend": {"orientation": "h", "y": -0.3}, "hovermode": "x unified", "xaxis": xaxis,
                           "yaxis": {"title": {"text": labels["requests"]}, "rangemode": "tozero"},
                           "yaxis2": {"overlaying": "y", "side": "right", "range": [0, 1], "tickformat": ".0%",
                                      "dtick": 0.25, "showgrid": False}})


def _line_ends(timeline: list[dict], labels: dict) -> list[dict]:
    """Each gauge's name at its last point, in its colour (a direct label: the legend is not needed to read it)."""
    if not timeline:
        return []
    last = timeline[-1]
    return [{"x": last["t"], "y": last.get(key) or 0, "yref": "y2" if key == "kv_usage" else "y", "text": labels[key],
             "showarrow": False, "xanchor": "right", "yanchor": "bottom",
             "font": {"color": GAUGE_COLORS[key], "size": 11}, "bgcolor": "rgba(255,255,255,0.8)"}
            for key in ("running", "waiting", "kv_usage")]


def class_latency(requests: list[dict], labels: dict, title: str = "", height: int = 280) -> go.Figure:
    """TTFT (left) and TPOT (right) of each finished request against when it was sent, coloured by class."""
    classes = sorted({r["request_class"] for r in requests})
    traces = []
    for cls in classes:
        done = [r for r in requests if r["request_class"] == cls and r["success"]]
        color = class_color(cls, classes)
        traces.append({"type": "scatter", "mode": "markers", "x": [r["start"] for r in done],
                       "y": [r["ttft"] * 1000 for r in done], "name": cls, "legendgroup": cls,
                       "marker": {"color": color, "size": 7}})
        traces.append({"type": "scatter", "mode": "markers", "x": [r["start"] for r in done],
                       "y": [(r["tpot"] or 0) * 1000 for r in done], "name": cls, "legendgroup": cls,
                       "showlegend": False, "xaxis": "x2", "yaxis": "y2", "marker": {"color": color, "size": 7}})
    return figure(traces, {"title": title_(title), "height": height, "margin": {"l": 50, "r": 10, "t": 36, "b": 30},
                           "legend": {"orientation": "h", "y": -0.3},
                           "xaxis": {"domain": [0, 0.45], "title": {"text": labels["sent_at"]}},
                           "xaxis2": {"domain": [0.55, 1], "title": {"text": labels["sent_at"]}},
                           "yaxis": {"title": {"text": labels["ttft_ms"]}, "rangemode": "tozero"},
                           "yaxis2": {"anchor": "x2", "title": {"text": labels["tpot_ms"]}, "rangemode": "tozero"}})


def load_curve(rows: list[dict], labels: dict, title: str = "", height: int = 320) -> go.Figure:
    """Mean and p99 TTFT, and mean TPOT, against the offered request rate: the knee of the curve.
    rows: [{"rate", "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "output_throughput", "source"}]."""
    traces = []
    for source, dash in (("server", "solid"), ("lab", "dot")):
        mine = sorted((r for r in rows if r.get("source", "server") == source), key=lambda r: r["rate"])
        if not mine:
            continue
        x = [r["rate"] for r in mine]
        for key, color in zip(("mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms"), TRIO):
            traces.append({"type": "scatter", "mode": "lines+markers", "x": x, "y": [r[key] for r in mine],
                           "name": f"{labels[key]} ({labels[source]})", "line": {"color": color, "dash": dash}})
    return figure(traces, {"title": title_(title), "height": height, "margin": {"l": 50, "r": 10, "t": 36, "b": 40},
                           "legend": {"orientation": "h", "y": -0.25},
                           "xaxis": {"title": {"text": labels["request_rate"]}},
                           "yaxis": {"title": {"text": labels["ms"]}, "rangemode": "tozero"}})
