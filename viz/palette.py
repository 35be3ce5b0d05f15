"""Colours: one per request (stable for a run), light tints for prefill, greys for free memory."""
from __future__ import annotations

# 20 distinguishable hues (Tableau 20's strong half and D3's category20 tones)
HUES = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
        "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354",
        "#756bb1", "#636363"]
IDLE = "#f4f4f6"
FREE = "#e6e6ea"
CACHED_FREE = "#cfd8e3"  # free, but still holds a prefix-cache hash
CLASS_COLORS = {"chat": "#1f77b4", "report": "#ff7f0e", "support": "#2ca02c", "batch": "#9467bd",
                "interactive": "#2ca02c", "default": "#1f77b4"}
SPLIT_COLORS = {"token_states": "#2ca02c", "reserved": "#fdb462", "internal_fragmentation": "#fb8072",
                "external_fragmentation": "#bc80bd", "free": "#e6e6ea"}


def tint(hex_color: str, amount: float = 0.55) -> str:
    """Mix a colour with white: amount 0 keeps it, 1 is white."""
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    mix = lambda c: round(c + (255 - c) * amount)  # noqa: E731
    return f"#{mix(r):02x}{mix(g):02x}{mix(b):02x}"


def color_indices(request_ids) -> dict[str, int]:
    """Request id -> hue index, in order of first appearance."""
    out: dict[str, int] = {}
    for rid in request_ids:
        if rid not in out:
            out[rid] = len(out) % len(HUES)
    return out


def request_color(index: int, prefill: bool = False) -> str:
    return tint(HUES[index % len(HUES)]) if prefill else HUES[index % len(HUES)]


def class_color(name: str, classes: list[str]) -> str:
    return CLASS_COLORS.get(name) or HUES[classes.index(name) % len(HUES)]


def heatmap_colorscale() -> list:
    """z = 0 idle; 1..20 decode hues; 21..40 prefill tints (discrete bands)."""
    colors = [IDLE] + HUES + [tint(h) for h in HUES]
    n = len(colors)
    scale = []
    for i, c in enumerate(colors):
        scale += [[i / n, c], [(i + 1) / n, c]]
    return scale


HEATMAP_ZMAX = 2 * len(HUES) + 1
