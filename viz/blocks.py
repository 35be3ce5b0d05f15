"""The block pool (every physical block) and block tables (logical -> physical, per request)."""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from engine.snapshot import StepSnapshot
from viz.palette import CACHED_FREE, FREE, HUES, tint

# z codes: 0 free, 1 free but prefix-cached, then per hue three fill levels (full, partial, reserved-empty)
_LEVELS = 3


def _colorscale() -> list:
    colors = [FREE, CACHED_FREE] + [c for h in HUES for c in (h, tint(h, 0.5), tint(h, 0.82))]
    n = len(colors)
    return [[x, c] for i, c in enumerate(colors) for x in (i / n, (i + 1) / n)]


COLORSCALE = _colorscale()
ZMAX = 2 + len(HUES) * _LEVELS


def block_code(owner: str | None, fill: int, refs: int, cached: bool, block_size: int, color_of: dict) -> int:
    if refs == 0:
        return 1 if cached else 0
    level = 0 if fill >= block_size else (1 if fill > 0 else 2)
    return 2 + color_of.get(owner, 0) * _LEVELS + level


def grid_shape(num_blocks: int) -> tuple[int, int]:
    cols = min(32, max(8, math.ceil(math.sqrt(num_blocks * 2))))
    return math.ceil(num_blocks / cols), cols


def block_pool(snap: StepSnapshot, color_of: dict[str, int], labels: dict, height: int | None = None,
               title: str = "") -> go.Figure:
    """Each cell a physical block: coloured by owner, paler when partly filled, palest when reserved
    but empty; shared blocks show their ref count; blocks written this step are outlined."""
    n = snap.num_blocks
    rows, cols = grid_shape(n)
    z = np.full(rows * cols, np.nan)
    hover = np.full(rows * cols, "", dtype=object)
    for b in range(n):
        owner, fill, refs, cached = snap.block_owner[b], snap.block_fill[b], snap.block_ref_count[b], snap.block_cached[b]
        z[b] = block_code(owner, fill, refs, cached, snap.block_size, color_of)
        if refs:
            hover[b] = (f"{labels['block']} {b} · {owner} · {fill}/{snap.block_size} {labels['slots_filled']}"
                        + (f" · {labels['shared_by']} {refs}" if refs > 1 else ""))
        else:
            hover[b] = f"{labels['block']} {b} · " + (labels["free_cached"] if cached else labels["free"])
    fig = go.Figure(go.Heatmap(z=z.reshape(rows, cols), colorscale=COLORSCALE, zmin=0, zmax=ZMAX, showscale=False,
                               hovertext=hover.reshape(rows, cols), hoverinfo="text", xgap=2, ygap=2))
    shared = [b for b in range(n) if snap.block_ref_count[b] > 1]
    fig.add_trace(go.Scatter(x=[b % cols for b in shared], y=[b // cols for b in shared], mode="text",
                             text=[f"×{snap.block_ref_count[b]}" for b in shared], hoverinfo="skip",
                             textfont=dict(size=10, color="white")))
    height = height or max(140, 60 + rows * 22)
    cell = max(4, (height - 60) / rows * 0.9)
    written = list(snap.written_blocks)
    fig.add_trace(go.Scatter(x=[b % cols for b in written], y=[b // cols for b in written], mode="markers",
                             hoverinfo="skip", marker=dict(symbol="square-open", size=cell, line=dict(width=2),
                                                           color="#d62728")))
    fig.update_layout(title=dict(text=title, font=dict(size=13)), height=height, margin=dict(l=10, r=10, t=32, b=10),
                      showlegend=False, uirevision="pool", plot_bgcolor="white",
                      xaxis=dict(visible=False, range=[-0.5, cols - 0.5]),
                      yaxis=dict(visible=False, range=[rows - 0.5, -0.5], scaleanchor="x"))
    return fig


def block_tables(snap: StepSnapshot, request_ids: list[str], color_of: dict[str, int], labels: dict,
                 max_blocks: int, height: int | None = None) -> go.Figure:
    """For each chosen request: logical block i -> the physical block that holds it (cell text)."""
    rows = [rid for rid in request_ids if rid in snap.block_tables] or ["—"]
    width = max(1, max_blocks)
    z = np.full((len(rows), width), np.nan)
    text = np.full((len(rows), width), "", dtype=object)
    for i, rid in enumerate(rows):
        for j, b in enumerate(snap.block_tables.get(rid, ())[:width]):
            z[i, j] = block_code(rid, snap.block_fill[b], snap.block_ref_count[b], False, snap.block_size, color_of)
            text[i, j] = str(b)
    fig = go.Figure(go.Heatmap(z=z, x=list(range(width)), y=rows, colorscale=COLORSCALE, zmin=0, zmax=ZMAX,
                               showscale=False, text=text, texttemplate="%{text}", textfont=dict(size=10),
                               hovertemplate=f"%{{y}} · {labels['logical']} %{{x}} → {labels['physical']} %{{text}}<extra></extra>",
                               xgap=2, ygap=2))
    fig.update_layout(height=height or max(120, 50 + 26 * len(rows)), margin=dict(l=60, r=10, t=10, b=30),
                      uirevision="tables", plot_bgcolor="white",
                      xaxis=dict(title=labels["logical_block"], range=[-0.5, width - 0.5], dtick=1 if width <= 32 else None),
                      yaxis=dict(autorange="reversed", type="category"))
    return fig
