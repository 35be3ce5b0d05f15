"""The slot timeline (slots x steps, who ran where) and the waiting queue at the door."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from engine.snapshot import StepSnapshot
from viz.palette import HEATMAP_ZMAX, HUES, heatmap_colorscale, request_color

COLORSCALE = heatmap_colorscale()


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


def slot_timeline(columns: list[TimelineColumn], frame: int, total_frames: int, labels: dict,
                  window: int = 120, height: int = 320, title: str = "") -> go.Figure:
    """Slots (rows) x steps (columns) up to `frame`; later steps stay blank, axes stay fixed."""
    start, end = window_range(frame, total_frames, window)
    shown = columns[start:min(frame + 1, end)]
    slots = len(columns[0].z) if columns else 1
    width = end - start
    z = np.full((slots, width), np.nan)
    text = np.full((slots, width), "", dtype=object)
    for j, col in enumerate(shown):
        z[:, j] = col.z
        text[:, j] = col.text
    fig = go.Figure(go.Heatmap(
        z=z, x=np.arange(start, end), y=np.arange(slots), colorscale=COLORSCALE, zmin=0, zmax=HEATMAP_ZMAX,
        showscale=False, hovertext=text, hovertemplate="%{hovertext}<extra>" + labels["step"] + " %{x}</extra>",
        xgap=1, ygap=1))
    px = [c.step for c in shown for _ in c.preempted_slots]
    py = [s for c in shown for s in c.preempted_slots]
    fig.add_trace(go.Scatter(x=px, y=py, mode="markers", name=labels["preempted"], hoverinfo="name",
                             marker=dict(symbol="x-thin", size=10, line=dict(width=2.5, color="#d62728"))))
    if shown:
        fig.add_vline(x=shown[-1].step, line=dict(color="#444", width=1.5, dash="dot"))
    fig.update_layout(title=dict(text=title, font=dict(size=14)), height=height, margin=dict(l=40, r=10, t=36, b=30),
                      showlegend=False, uirevision="timeline", plot_bgcolor="white",
                      xaxis=dict(title=labels["step"], range=[start - 0.5, end - 0.5], showgrid=False, zeroline=False),
                      yaxis=dict(title=labels["slot"], range=[slots - 0.5, -0.5], showgrid=False, zeroline=False,
                                 dtick=1 if slots <= 16 else None))
    return fig


def waiting_queue(snap: StepSnapshot, color_of: dict[str, int], labels: dict, capacity: int = 40,
                  height: int = 90) -> go.Figure:
    """The queue at the door, in the order the policy will admit it; the head says why it waits."""
    shown = snap.waiting[:capacity]
    hover = []
    for i, rid in enumerate(shown):
        view = snap.requests.get(rid)
        why = snap.blocked.get(rid)
        reason = f"<br>{labels['blocked']}: {labels.get('why_' + why, why)}" if why else ""
        waited = f" · {labels['waiting_since']} {view.arrival_step}" if view else ""
        hover.append((request_label(view, labels) if view else rid) + waited + reason)
    fig = go.Figure(go.Scatter(
        x=list(range(len(shown))), y=[0] * len(shown), mode="markers", hovertext=hover, hoverinfo="text",
        marker=dict(symbol="square", size=16, color=[request_color(color_of.get(r, 0)) for r in shown],
                    line=dict(width=[2 if r in snap.blocked else 0 for r in shown], color="#d62728"))))
    more = len(snap.waiting) - len(shown)
    title = f"{labels['waiting']}: {len(snap.waiting)}" + (f" (+{more})" if more > 0 else "")
    fig.update_layout(title=dict(text=title, font=dict(size=13)), height=height, margin=dict(l=10, r=10, t=30, b=5),
                      showlegend=False, uirevision="queue", plot_bgcolor="white",
                      xaxis=dict(range=[-0.7, capacity - 0.3], visible=False),
                      yaxis=dict(range=[-0.6, 0.6], visible=False))
    return fig
