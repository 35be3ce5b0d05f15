"""Line, bar and box charts: memory split over time, batch-size curves, per-class distributions, history."""
from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.figure import PLAIN, Look, figure
from viz.figure import title as title_
from viz.palette import ACCENT, SPLIT_COLORS, SPLIT_PATTERNS, TRIO, class_color

SPLIT_KEYS = ("token_states", "reserved", "internal_fragmentation", "external_fragmentation", "free")


def memory_split(rows: list[dict], frame: int, total_frames: int, labels: dict, look: Look = PLAIN,
                 legend: bool = False) -> go.Figure:
    """Stacked shares of KV slots over steps, up to `frame`, x fixed to the whole run. `legend`: a plotly
    legend below the plot (for a saved picture; the lab draws split_legend_html instead)."""
    height, title = look.height or 260, look.title
    shown = rows[:frame + 1]
    x = list(range(len(shown)))
    traces = [{"type": "scatter", "x": x, "y": [r[key] / r["total"] for r in shown], "name": labels[key],
               "stackgroup": "kv", "mode": "lines", "line": {"width": 0.5, "color": SPLIT_COLORS[key]},
               "fillcolor": SPLIT_COLORS[key], "fillpattern": _pattern(key), "hovertemplate": "%{y:.0%}"}
              for key in SPLIT_KEYS]
    # the legend is HTML below the chart (split_legend_html): in a narrow column a plotly legend wraps
    # onto the axis title and the ticks
    margin = {"l": 40, "r": 10, "t": 36, "b": 110 if legend else 40}
    fig = figure(traces, {"title": title_(title), "height": height, "margin": margin,
                          "uirevision": "split", "hovermode": "x unified", "showlegend": legend,
                          "legend": {"orientation": "h", "x": 0, "y": 0, "yref": "container", "yanchor": "bottom"},
                          "xaxis": {"title": {"text": labels["step"], "standoff": 4},
                                    "range": [0, max(1, total_frames - 1)]},
                          "yaxis": {"range": [0, 1], "tickformat": ".0%"}})
    return fig


def _pattern(key: str) -> dict:
    """A share's hatching in white over its colour: the second cue, for a student who cannot tell the colours."""
    shape = SPLIT_PATTERNS[key]
    return {"shape": shape, "fgcolor": "white", "bgcolor": SPLIT_COLORS[key], "size": 7, "solidity": 0.35} if shape \
        else {"shape": ""}


# the legend's swatches hatched as the chart's shares are (CSS: white lines over the share's colour)
_CSS_PATTERNS = {"/": "repeating-linear-gradient(45deg,#fff 0 1.5px,transparent 1.5px 5px)",
                 "x": "repeating-linear-gradient(45deg,#fff 0 1.5px,transparent 1.5px 5px),"
                      "repeating-linear-gradient(-45deg,#fff 0 1.5px,transparent 1.5px 5px)",
                 ".": "radial-gradient(circle,#fff 1.2px,transparent 1.6px) 0 0/4px 4px"}


def split_swatch(key: str) -> str:
    """The CSS background of a share's legend swatch."""
    shape = SPLIT_PATTERNS[key]
    return f"{_CSS_PATTERNS[shape]},{SPLIT_COLORS[key]}" if shape else SPLIT_COLORS[key]


def split_frames(rows: list[dict]) -> dict:
    """Every step of a finished run's memory split, for a browser that draws each frame itself (ui/
    live_chart.html shows each share's line up to the frame, as memory_split does)."""
    return {"kind": "series", "y": [[r[key] / r["total"] for r in rows] for key in SPLIT_KEYS]}


def nice_ticks(top: float, n: int = 5) -> list[float]:
    """Round tick values from 0 to at least `top`, about n of them, at 1, 2, 2.5 or 5 times a power of 10."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / n
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return [round(i * step, 10) for i in range(math.ceil(top / step - 1e-9) + 1)]


def split_legend_html(labels: dict, note: str = "") -> str:
    """The memory split's legend: one swatch and label per share, wrapping with the column (and a note after it)."""
    from html import escape

    items = "".join(f'<span style="white-space:nowrap;margin-right:0.8em"><span style="display:inline-block;'
                    f'width:0.9em;height:0.9em;background:{split_swatch(key)};margin-right:0.3em;'
                    f'outline:1px solid #555"></span>'
                    f'{escape(labels[key])}</span> ' for key in SPLIT_KEYS)
    note = f'<span style="color:#555">· {escape(note)}</span>' if note else ""
    return f'<div style="font-size:0.8rem;line-height:1.6">{items}{note}</div>'


def batch_curve(rows: list[dict], labels: dict, height: int = 340) -> go.Figure:
    """Tokens/s (bars) and ms per step (line; a dashed one for CPU time when rows and labels carry
    cpu_ms_per_step) against batch size: the median of repeated measurements, with whiskers from the
    fastest to the slowest when rows carry a range."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    sizes = [str(r["batch"]) for r in rows]

    def spread(key):
        if not all(f"{key}_min" in r for r in rows):
            return None
        return dict(type="data", symmetric=False, array=[r[f"{key}_max"] - r[key] for r in rows],
                    arrayminus=[r[key] - r[f"{key}_min"] for r in rows], thickness=1.5, width=4)

    fig.add_trace(go.Bar(x=sizes, y=[r["tok_per_s"] for r in rows], name=labels["tok_per_s"],
                         marker_color=TRIO[0], error_y=spread("tok_per_s")), secondary_y=False)
    fig.add_trace(go.Scatter(x=sizes, y=[r["ms_per_step"] for r in rows], name=labels["ms_per_step"],
                             mode="lines+markers", line=dict(color=TRIO[1], width=3), error_y=spread("ms_per_step")),
                  secondary_y=True)
    cpu = "cpu_ms_per_step" in labels and all("cpu_ms_per_step" in r for r in rows)
    if cpu:  # the measuring thread's CPU time: what a busy machine's waiting for a core leaves out
        fig.add_trace(go.Scatter(x=sizes, y=[r["cpu_ms_per_step"] for r in rows], name=labels["cpu_ms_per_step"],
                                 mode="lines+markers", line=dict(color=TRIO[2], width=2, dash="dash"),
                                 error_y=spread("cpu_ms_per_step")), secondary_y=True)
    fig.update_layout(height=height, margin=dict(l=50, r=50, t=20, b=40), uirevision="batch",
                      legend=dict(orientation="h", y=1.12), xaxis=dict(title=labels["batch_size"], type="category"))
    # automargin: the titles stand off their tick labels however wide the numbers (or the fonts) grow
    fig.update_yaxes(title_text=labels["tok_per_s"], secondary_y=False, rangemode="tozero", automargin=True)
    # Plotly would line the right axis's ticks up with the left grid (1, 2.01, 3.01 ...): give it its own round ones.
    keys = ("ms_per_step", "cpu_ms_per_step") if cpu else ("ms_per_step",)
    ticks = nice_ticks(max(r.get(f"{k}_max", r[k]) for r in rows for k in keys) * 1.05)
    fig.update_yaxes(title_text=labels["ms_per_step"], secondary_y=True, range=[0, ticks[-1]], tickmode="array",
                     tickvals=ticks, showgrid=False, automargin=True)
    return fig


def class_boxes(runs: dict[str, list[dict]], metric: str, labels: dict, height: int = 320,
                names: dict[str, str] | None = None) -> go.Figure:
    """Per-class distributions of one per-request metric, one group of boxes per run.
    names: class -> the name shown in the legend (colours stay keyed by the class itself)."""
    classes = sorted({m["request_class"] for rows in runs.values() for m in rows})
    fig = go.Figure()
    for cls in classes:
        xs, ys = [], []
        for run_name, rows in runs.items():
            values = [m[metric] for m in rows if m["request_class"] == cls and m[metric] is not None]
            xs += [run_name] * len(values)
            ys += values
        fig.add_trace(go.Box(x=xs, y=ys, name=(names or {}).get(cls, cls), marker_color=class_color(cls, classes),
                             boxpoints="outliers"))
    fig.update_layout(boxmode="group", height=height, margin=dict(l=50, r=10, t=20, b=40), uirevision="boxes",
                      xaxis=dict(automargin=True), yaxis=dict(title=labels[metric], rangemode="tozero"),
                      legend=dict(orientation="h", y=1.1))
    return fig


def grouped_bars(values: dict[str, dict[str, float | None]], labels: dict, y_title: str, percent: bool = False,
                 height: int = 280, names: dict[str, str] | None = None) -> go.Figure:
    """values: run -> {class or metric -> value}; names: class or metric -> the name in the legend."""
    keys = sorted({k for d in values.values() for k in d})
    fig = go.Figure()
    for key in keys:
        fig.add_trace(go.Bar(x=list(values), y=[d.get(key) for d in values.values()], name=(names or {}).get(key, key),
                             marker_color=class_color(key, keys)))
    fig.update_layout(barmode="group", height=height, margin=dict(l=50, r=10, t=20, b=40), uirevision="bars",
                      xaxis=dict(automargin=True),
                      yaxis=dict(title=y_title, tickformat=".0%" if percent else None, rangemode="tozero"),
                      legend=dict(orientation="h", y=1.1))
    return fig


def history_chart(rows: list[dict], metric: str, label: str, height: int = 280) -> go.Figure:
    fig = go.Figure(go.Bar(x=[r["name"] for r in rows], y=[r.get(metric) for r in rows], marker_color=ACCENT))
    fig.update_layout(height=height, margin=dict(l=50, r=10, t=20, b=60), uirevision="history",
                      yaxis=dict(title=label, rangemode="tozero"))
    return fig


def frontier_chart(points, latency: str, labels: dict, chosen=None, slo: float | None = None,
                   height: int = 340) -> go.Figure:
    """Throughput (tokens per step, up) against a latency (`latency`: a key of each point's latency dict, right):
    each point a run of the sweep, named by its setting; the Pareto frontier joined by a line, points off it hollow;
    the SLO a dashed vertical line and the point chosen under it ringed."""
    shown = [p for p in points if p.latency[latency] is not None]
    front = sorted((p for p in shown if p.on_frontier), key=lambda p: p.latency[latency])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[p.latency[latency] for p in front], y=[p.throughput for p in front], mode="lines",
                             line=dict(color=TRIO[0], width=2), name=labels["frontier"], hoverinfo="skip"))
    for on in (True, False):
        group = [p for p in shown if p.on_frontier == on]
        fig.add_trace(go.Scatter(
            x=[p.latency[latency] for p in group], y=[p.throughput for p in group], mode="markers+text",
            text=[str(p.value) for p in group], textposition="top center", name=labels["on" if on else "off"],
            marker=dict(size=12, color=TRIO[0] if on else "#ffffff", line=dict(color=TRIO[0], width=2)),
            cliponaxis=False, hovertemplate="%{text}: %{y:.2f} / %{x:.2f}<extra></extra>"))
    if chosen is not None:
        fig.add_trace(go.Scatter(x=[chosen.latency[latency]], y=[chosen.throughput], mode="markers",
                                 name=labels["chosen"], hoverinfo="skip",
                                 marker=dict(size=22, color="rgba(0,0,0,0)", line=dict(color=TRIO[1], width=3))))
    if slo is not None:
        fig.add_vline(x=slo, line=dict(color=TRIO[1], dash="dash", width=2))
    fig.update_layout(height=height, margin=dict(l=60, r=20, t=30, b=50), uirevision="frontier",
                      legend=dict(orientation="h", y=1.12),
                      xaxis=dict(title=labels["latency"], rangemode="tozero", automargin=True),
                      yaxis=dict(title=labels["throughput"], rangemode="tozero", automargin=True))
    return fig
