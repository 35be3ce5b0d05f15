"""The slot timeline: slots x steps, who ran where, what was prefill and what decode."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from viz.figure import PLAIN, Look, figure, image_trace, palette_rgb
from viz.figure import title as title_
from viz.palette import HEATMAP_ZMAX, HUES, MARK, MARK_EDGE, heatmap_colorscale

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.core.snapshot import StepSnapshot


COLORSCALE = heatmap_colorscale()
WINDOW = 120  # steps shown at once
CELL = (4, 5)  # pixels per cell (w, h) of the picture drawn while animating
CURSOR_LINE = {"color": "#444", "width": 1.5, "dash": "dot"}
# a pre-emption: a filled black cross with a white edge, a shape no cell has, 3:1 off any request colour
PREEMPTION_MARK = {"symbol": "x", "size": 11, "color": MARK, "line": {"width": 1.5, "color": MARK_EDGE}}


@dataclass(frozen=True)
class TimelineColumn:
    """One step of the timeline: per slot a colour code (0 idle, 1..20 decode, 21..40 prefill) and hover text."""

    step: int
    z: tuple[int, ...]
    text: tuple[str, ...]
    preempted_slots: tuple[int, ...]


def request_label(view, labels: dict) -> str:
    return (f"{view.request_id} · {view.request_class} · {labels['prompt']} {view.num_prompt_tokens} · "
            f"{labels['output']} {view.num_output_tokens}/{view.max_tokens} · {labels.get(view.status, view.status)}")


def timeline_column(snap: StepSnapshot, prev: StepSnapshot | None, color_of: dict[str, int],
                    labels: dict) -> TimelineColumn:
    z, text = [0] * len(snap.slots), [labels["idle"]] * len(snap.slots)
    ran = {b.slot: b for b in snap.batch if b.slot >= 0}
    for slot in range(len(snap.slots)):
        entry = ran.get(slot)
        rid = entry.request_id if entry else snap.slots[slot]
        if rid is None:
            continue
        prefill = entry is None or entry.num_prefill_tokens > 0  # held but not run: drawn pale, like prefill
        z[slot] = color_of.get(rid, 0) + 1 + (len(HUES) if prefill else 0)
        phase = (labels["prefill"] + f" {entry.num_prefill_tokens}") if entry and entry.num_prefill_tokens else (
            labels["decode"] if entry else labels["held"])
        view = snap.requests.get(rid)
        text[slot] = f"{request_label(view, labels) if view else rid}<br>{phase}"
    preempted = ()
    if prev is not None and snap.preempted:
        where = {rid: i for i, rid in enumerate(prev.slots) if rid}
        preempted = tuple(where[r] for r in snap.preempted if r in where)
    return TimelineColumn(snap.step, tuple(z), tuple(text), preempted)


def window_range(frame: int, total: int, window: int) -> tuple[int, int]:
    """First and last column shown: the whole run if it fits, else `window` columns ending at frame."""
    if total <= window:
        return 0, max(window, total)
    start = max(0, min(frame - window + 1, total - window))
    return start, start + window


def _plot_height(height: int) -> int:
    return max(1, height - 54)  # the plot area's height: the figure less its top and bottom margins


def slot_dtick(slots: int, height: int) -> int:
    """Label every slot while each row is tall enough for its number, else every 2nd, 4th, ..."""
    step = 1
    while slots / step * 14 > _plot_height(height):
        step *= 2
    return step


def slot_timeline(columns: list[TimelineColumn], frame: int, total_frames: int, labels: dict, look: Look = PLAIN,
                  window: int = WINDOW) -> go.Figure:
    """Slots (rows) x steps (columns) up to `frame`; later steps stay blank, axes stay fixed. `frame` is the
    player's: past the last column (a run that ended before the others it is shown beside) the window still
    follows it, so every run's timeline shows the same steps, and the lane says where this run ended
    (`labels["tl.done_note"]`, formatted with the step, in two lines: a narrow lane holds them). Without
    `look.hover` (while animating) the per-cell texts are left out."""
    height, title, hover = look.height or 320, look.title, look.hover
    start, end = window_range(frame, total_frames, window)
    shown = columns[start:min(frame + 1, end)]
    ended_before = bool(columns) and frame >= len(columns)
    slots = len(columns[0].z) if columns else 1
    width = end - start
    z = np.full((slots, width), np.nan)
    text = np.full((slots, width), "", dtype=object) if hover else None
    for j, col in enumerate(shown):
        z[:, j] = col.z
        if hover:
            text[:, j] = col.text
    if hover:
        cells = {"type": "heatmap", "z": z, "x": np.arange(start, end), "y": np.arange(slots), "colorscale": COLORSCALE,
                 "zmin": 0, "zmax": HEATMAP_ZMAX, "showscale": False, "xgap": 1, "ygap": 1, "hovertext": text,
                 "hovertemplate": "%{hovertext}<extra>" + labels["step"] + " %{x}</extra>"}
    else:  # while animating: one tiny PNG, one pixel per cell, instead of plotly painting every cell
        cells = image_trace(z, COLORSCALE, start, *CELL)
    preempted = {"type": "scatter", "mode": "markers", "name": labels["preempted"], "hoverinfo": "name",
                 "x": [c.step for c in shown for _ in c.preempted_slots],
                 "y": [s for c in shown for s in c.preempted_slots],
                 "marker": PREEMPTION_MARK}
    cursor = [{"type": "line", "x0": shown[-1].step, "x1": shown[-1].step, "y0": 0, "y1": 1, "yref": "paper",
               "line": CURSOR_LINE}] if shown else []
    done = [done_note(labels["tl.done_note"].format(step=columns[-1].step))] if ended_before else []
    # right margin: half the label of a four-digit step at the axis' end (instructor type), never cut by the frame
    fig = figure([cells, preempted], {
        "title": title_(title, 14), "height": height, "margin": {"l": 40, "r": 20, "t": 36 if title else 8, "b": 46},
        "showlegend": False, "uirevision": "timeline", "plot_bgcolor": "white", "shapes": cursor, "annotations": done,
        "xaxis": {"title": {"text": labels["step"], "standoff": 6}, "range": [start - 0.5, end - 0.5],
                  "showgrid": False, "zeroline": False},
        "yaxis": {"title": {"text": labels["slot"]}, "range": [slots - 0.5, -0.5], "showgrid": False, "zeroline": False,
                  "dtick": slot_dtick(slots, height), "scaleanchor": False}})
    return fig



def done_note(text: str) -> dict:
    """The words in an ended run's lane, while the runs beside it go on: a line for each part of `text` between
    its " · " (a narrow lane holds them)."""
    return {"text": text.replace(" · ", "<br>"), "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5,
            "showarrow": False, "font": {"size": 15, "color": "#444"}, "bgcolor": "rgba(255,255,255,0.85)"}


def timeline_frames(columns: list[TimelineColumn], total_frames: int, window: int = WINDOW,
                    done_text: str | None = None) -> dict:
    """Every column of a run so far, for a browser that draws each frame itself (ui/playback/live_chart.html
    repeats slot_timeline's window, picture and cursor from these). `done_text`: the run has ended (these are
    all its columns): past them the window follows the player and the lane says this. Hover texts stay out:
    frames are only drawn while playing, when the server leaves them out too."""
    return {"kind": "timeline", "z": [c.z for c in columns], "preempted": [c.preempted_slots for c in columns],
            "steps": [c.step for c in columns], "total": total_frames, "window": window, "cell": CELL,
            "rgb": palette_rgb(COLORSCALE), "cursor": CURSOR_LINE,
            "done": done_note(done_text) if done_text else None}
