"""The block pool: every physical block, who owns it, how full it is, who shares it."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from viz.figure import cell_mask, figure, image_trace, palette_rgb
from viz.figure import title as title_
from viz.palette import CACHED_FREE, FREE, HUES, MARK, MARK_EDGE, tint

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.core.snapshot import StepSnapshot


# z codes: 0 free, 1 free but prefix-cached, then per hue three fill levels (full, partial, reserved-empty)
_LEVELS = 3
POOL_CELL = (12, 12)  # pixels per block (w, h) of the picture


def _colorscale() -> list:
    colors = [FREE, FREE] + [c for h in HUES for c in (h,) * _LEVELS]
    n = len(colors)
    return [[x, c] for i, c in enumerate(colors) for x in (i / n, (i + 1) / n)]


def _rgb(hex_color: str) -> list[int]:
    return [int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]


def _stamps() -> dict:
    """A block's fill level is its shape, not only its shade: a full block is solid, a partly filled one has its
    upper half pale, one reserved but still empty is an outline; a free block holding a prefix-cache hash has a dot."""
    top, inside, dot = (cell_mask(kind, *POOL_CELL) for kind in ("top", "inside", "dot"))
    stamps = {1: [_rgb(CACHED_FREE), dot]}
    for i, h in enumerate(HUES):
        stamps[2 + i * _LEVELS + 1] = [_rgb(tint(h, 0.6)), top]
        stamps[2 + i * _LEVELS + 2] = [_rgb(tint(h, 0.85)), inside]
    return stamps


COLORSCALE = _colorscale()
STAMPS = _stamps()
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
               title: str = "", hover: bool = True) -> go.Figure:
    """Each cell a physical block: coloured by owner, its upper half pale when partly filled, an outline when
    reserved but empty (STAMPS); shared blocks show their ref count; blocks written this step are outlined."""
    n = snap.num_blocks
    rows, cols = grid_shape(n)
    z = np.full(rows * cols, np.nan)
    texts = np.full(rows * cols, "", dtype=object)
    for b in range(n):
        owner, fill, refs, cached = (snap.block_owner[b], snap.block_fill[b], snap.block_ref_count[b],
                                     snap.block_cached[b])
        z[b] = block_code(owner, fill, refs, cached, snap.block_size, color_of)
        if not hover:
            continue
        if refs:
            texts[b] = (f"{labels['block']} {b} · {owner} · {fill}/{snap.block_size} {labels['slots_filled']}"
                        + (f" · {labels['shared_by']} {refs}" if refs > 1 else ""))
        else:
            texts[b] = f"{labels['block']} {b} · " + (labels["free_cached"] if cached else labels["free"])
    picture = image_trace(z.reshape(rows, cols), COLORSCALE, 0, *POOL_CELL, stamps=STAMPS)
    images = []
    if hover:  # the same picture under a transparent heatmap that carries the hover texts (and the codes)
        cells = {"type": "heatmap", "z": z.reshape(rows, cols), "colorscale": COLORSCALE, "zmin": 0, "zmax": ZMAX,
                 "showscale": False, "opacity": 0, "hovertext": texts.reshape(rows, cols), "hoverinfo": "text"}
        images = [{"source": picture["source"], "xref": "x", "yref": "y", "x": -0.5, "y": -0.5, "sizex": cols,
                   "sizey": rows, "sizing": "stretch", "layer": "below"}]
    else:  # while animating: one small picture (see viz.figure.grid_png)
        cells = picture
    shared = [b for b in range(n) if snap.block_ref_count[b] > 1]
    height = height or max(140, 60 + rows * 22)
    written = list(snap.written_blocks)
    fig = figure([
        cells,
        {"type": "scatter", "mode": "text", "x": [b % cols for b in shared], "y": [b // cols for b in shared],
         "text": [f"×{snap.block_ref_count[b]}" for b in shared], "hoverinfo": "skip",
         "textfont": {"size": 10, "color": MARK, "shadow": f"0 0 2px {MARK_EDGE}"}},
        {"type": "scatter", "mode": "markers", "x": [b % cols for b in written], "y": [b // cols for b in written],
         "hoverinfo": "skip", "marker": {"symbol": "square-open", "size": max(4, (height - 60) / rows * 0.9),
                                         "line": {"width": 2}, "color": MARK}},
    ], {"title": title_(title), "height": height, "images": images,
        "margin": {"l": 10, "r": 10, "t": 32, "b": 10}, "showlegend": False,
        "uirevision": "pool", "plot_bgcolor": "white", "xaxis": {"visible": False, "range": [-0.5, cols - 0.5]},
        "yaxis": {"visible": False, "range": [rows - 0.5, -0.5], "scaleanchor": "x"}})
    return fig



def pool_frames(snaps: list[StepSnapshot], color_of: dict[str, int], titles: list[str]) -> dict:
    """Every step of a finished run's block pool, for a browser that draws each frame itself
    (ui/playback/live_chart.html repeats block_pool's picture, ref-count labels and written outlines): the
    first step's codes, then per step only the blocks whose code changed."""
    n = snaps[0].num_blocks if snaps else 0
    changes, before = [], None
    for snap in snaps:
        codes = [block_code(snap.block_owner[b], snap.block_fill[b], snap.block_ref_count[b], snap.block_cached[b],
                            snap.block_size, color_of) for b in range(n)]
        changes.append([[b, c] for b, c in enumerate(codes) if before is None or before[b] != c])
        before = codes
    return {"kind": "pool", "grid": grid_shape(n), "blocks": n, "cell": POOL_CELL, "rgb": palette_rgb(COLORSCALE),
            "stamps": STAMPS,
            "changes": changes,
            "shared": [[[b, r] for b, r in enumerate(s.block_ref_count) if r > 1] for s in snaps],
            "written": [list(s.written_blocks) for s in snaps], "titles": titles}
