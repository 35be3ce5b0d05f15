"""Build figures from plain dicts, skipping plotly.py's per-property validation.

At 10 frames/s validation costs more than everything else a frame does; tests/test_viz.py
validates every builder's output once instead.
"""
from __future__ import annotations

import base64
import io
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from PIL import Image


@dataclass(frozen=True)
class Look:
    """How a chart is framed: its height in pixels (None: the builder's own), its title, and whether each
    point carries a hover text (not while animating: nobody can hover a moving chart)."""
    height: int | None = None
    title: str = ""
    hover: bool = True


PLAIN = Look()  # the builder's own height, no title, hover texts on


def figure(data: list[dict], layout: dict) -> go.Figure:
    return go.Figure(data=data, layout=layout, _validate=False)


def title(text: str, size: int = 13) -> dict:
    return {"text": text, "font": {"size": size}}


def image_trace(codes: np.ndarray, colorscale: list, x_start: int, cell_w: int, cell_h: int,
                stamps: dict | None = None) -> dict:
    """A heatmap's cells as one picture, placed where the heatmap's cells would be (cell (r, c) centred
    on x = x_start + c, y = r). While animating this replaces a heatmap: the browser decodes one small
    PNG instead of plotly painting, encoding and decoding every cell."""
    return {"type": "image", "source": grid_png(codes, colorscale, cell_w, cell_h, stamps), "hoverinfo": "skip",
            "x0": x_start - 0.5 + 0.5 / cell_w, "dx": 1 / cell_w, "y0": -0.5 + 0.5 / cell_h, "dy": 1 / cell_h}


def grid_png(codes: np.ndarray, colorscale: list, cell_w: int, cell_h: int, stamps: dict | None = None) -> str:
    """Colour codes (NaN: blank) as a PNG data URI, each cell cell_w x cell_h pixels with a one-pixel
    white gap. `stamps` (code -> [rgb, mask], see cell_stamps): the cell's pixels where its mask is 1 take the
    second colour, a pattern that tells the code apart without its colour."""
    cells = cell_pictures(palette_rgb(colorscale), cell_w, cell_h, stamps)
    index = np.where(np.isnan(codes), len(cells) - 1, codes).astype(np.int64)
    rows, cols = index.shape
    pixels = cells[index].transpose(0, 2, 1, 3, 4).reshape(rows * cell_h, cols * cell_w, 3)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def cell_pictures(rgb: list, cell_w: int, cell_h: int, stamps: dict | None = None) -> np.ndarray:
    """Per code its cell as pixels (cell_h x cell_w x 3): the colour, the stamp's pattern, the white gap."""
    cells = np.array(rgb, dtype=np.uint8)[:, None, None, :].repeat(cell_h, axis=1).repeat(cell_w, axis=2)
    for code, (second, mask) in (stamps or {}).items():
        where = np.array(mask, dtype=bool).reshape(cell_h, cell_w)
        cells[int(code)][where] = second
    cells[:, cell_h - 1, :] = 255
    cells[:, :, cell_w - 1] = 255
    return cells


def cell_mask(kind: str, cell_w: int, cell_h: int) -> list[int]:
    """A pattern inside a cell (its gap excluded), as a flat 0/1 mask: "top" the upper half (a half-full block),
    "inside" all but a 2-pixel border (an empty box), "dot" a square in the middle."""
    w, h = cell_w - 1, cell_h - 1
    mask = np.zeros((cell_h, cell_w), dtype=np.uint8)
    if kind == "top":
        mask[:h // 2, :w] = 1
    elif kind == "inside":
        mask[2:h - 2, 2:w - 2] = 1
    elif kind == "dot":
        mask[h // 2 - 1:h // 2 + 2, w // 2 - 1:w // 2 + 2] = 1
    return mask.ravel().tolist()


def palette_rgb(colorscale: list) -> list[list[int]]:
    """The picture's colour per code (a stepped colorscale: every second stop), then white for blank."""
    return [[int(c[i:i + 2], 16) for i in (1, 3, 5)] for _, c in colorscale[1::2]] + [[255, 255, 255]]
