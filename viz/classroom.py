"""The class view's and the live poll's charts: a class's answers, predictions and criteria as counts.
Pure: plain numbers and labels in, a plotly figure out; names and tokens never reach a chart."""
from __future__ import annotations

import math
from html import escape

import plotly.graph_objects as go

from viz.figure import figure
from viz.figure import title as title_
from viz.palette import ACCENT, NEUTRAL, TRIO

RIGHT, WRONG, MEASURED = TRIO[0], NEUTRAL, TRIO[1]


def bins(values: list[float], measured: float | None = None, target: int = 12) -> tuple[float, float, list[int]]:
    """(first edge, bin width, counts): round-width bins covering every value and the measured value,
    about `target` of them. One value (or all equal) gets one bin of width 1 around it."""
    points = [*values, *([measured] if measured is not None else [])]
    lo, hi = min(points), max(points)
    if hi - lo < 1e-12:
        width = 1.0 if lo == 0 else 10 ** math.floor(math.log10(abs(lo))) / 2
        start = lo - width / 2
    else:
        raw = (hi - lo) / target
        power = 10 ** math.floor(math.log10(raw))
        width = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
        start = math.floor(lo / width) * width
    n = max(1, math.floor((hi - start) / width + 1e-9) + 1)
    counts = [0] * n
    for v in values:
        counts[min(n - 1, max(0, math.floor((v - start) / width + 1e-9)))] += 1
    return start, width, counts


def prediction_histogram(values: list[float], measured: float | None, labels: dict, height: int = 260,
                         title: str = "") -> go.Figure:
    """How many predicted each value (bars), and the measured value (a red line) once it is known.
    labels: count, value, measured, none (shown when there is no prediction yet), and optionally figure (a
    function writing the measured value with its unit)."""
    layout = {"title": title_(title), "height": height, "margin": {"l": 40, "r": 10, "t": 36 if title else 10, "b": 40},
              "bargap": 0.05, "showlegend": False, "xaxis": {"title": {"text": labels["value"], "standoff": 4}},
              "yaxis": {"title": {"text": labels["count"]}, "rangemode": "tozero", "dtick": 1}}
    if not values and measured is None:
        layout["annotations"] = [{"text": labels["none"], "showarrow": False, "xref": "paper", "yref": "paper",
                                  "x": 0.5, "y": 0.5}]
        layout["xaxis"]["visible"] = layout["yaxis"]["visible"] = False
        return figure([], layout)
    start, width, counts = bins(values, measured)
    centres = [start + (i + 0.5) * width for i in range(len(counts))]
    traces = [{"type": "bar", "x": centres, "y": counts, "width": [width] * len(counts),
               "marker": {"color": ACCENT}, "name": labels["count"],
               "customdata": [[start + i * width, start + (i + 1) * width] for i in range(len(counts))],
               "hovertemplate": "%{customdata[0]:.3g} – %{customdata[1]:.3g}: %{y}<extra></extra>"}]
    if measured is not None:
        layout["shapes"] = [{"type": "line", "x0": measured, "x1": measured, "xref": "x", "y0": 0, "y1": 1,
                             "yref": "paper", "line": {"color": MEASURED, "width": 3}}]
        shown = labels.get("figure") or (lambda v: f"{v:.3g}")
        layout["annotations"] = [{"text": f"{labels['measured']} {shown(measured)}", "x": measured, "xref": "x",
                                  "y": 1, "yref": "paper", "yanchor": "bottom", "showarrow": False,
                                  "font": {"color": MEASURED}}]
        layout["margin"]["t"] = max(layout["margin"]["t"], 28)
    return figure(traces, layout)


def answer_bars(counts: dict[str, int], correct: set[str] | None, labels: dict,
                height: int | None = None) -> go.Figure:
    """One bar per answer given (how many chose it), the correct answers green (None: not known yet, every bar in
    one neutral colour). labels: count."""
    answers = list(counts)
    height = height or 60 + 28 * max(1, len(answers))
    # a student's answer is text: plotly would draw <b>..</b> in a label as bold, and an entity shows as typed
    trace = {"type": "bar", "orientation": "h", "y": [escape(a, quote=False) for a in answers],
             "x": [counts[a] for a in answers],
             "marker": {"color": [ACCENT if correct is None else RIGHT if a in correct else WRONG for a in answers]},
             "hovertemplate": "%{y}: %{x}<extra></extra>"}
    return figure([trace], {"height": height, "margin": {"l": 10, "r": 10, "t": 6, "b": 30}, "showlegend": False,
                            "xaxis": {"title": {"text": labels["count"], "standoff": 2}, "rangemode": "tozero",
                                      "dtick": 1 if max(counts.values(), default=0) <= 10 else None},
                            "yaxis": {"autorange": "reversed", "automargin": True}})


def criteria_bars(passed: dict[str, int], students: int, labels: dict, height: int | None = None) -> go.Figure:
    """Per criterion of a worksheet task, how many of the `students` met it. labels: students."""
    names = list(passed)
    height = height or 60 + 28 * max(1, len(names))
    trace = {"type": "bar", "orientation": "h", "y": names, "x": [passed[n] for n in names],
             "marker": {"color": RIGHT}, "hovertemplate": f"%{{y}}: %{{x}} / {students}<extra></extra>"}
    return figure([trace], {"height": height, "margin": {"l": 10, "r": 10, "t": 6, "b": 30}, "showlegend": False,
                            "xaxis": {"title": {"text": labels["students"], "standoff": 2},
                                      "range": [0, max(1, students)], "dtick": 1 if students <= 10 else None},
                            "yaxis": {"autorange": "reversed", "automargin": True}})
