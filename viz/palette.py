"""The lab's one palette: a colour per request (stable for a run), per request class and per run kind,
the same in every chart and table; light tints for prefill, greys for free memory."""
from __future__ import annotations

# 20 distinguishable hues (Tableau 20's strong half and D3's category20 tones)
HUES = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
        "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354",
        "#756bb1", "#636363"]
IDLE = "#f4f4f6"
FREE = "#e6e6ea"
CACHED_FREE = "#cfd8e3"  # free, but still holds a prefix-cache hash
# A request class keeps its hue everywhere: slot timelines coloured by class, the queue, box plots, bars.
CLASS_HUES = {"chat": 0, "report": 1, "support": 2, "interactive": 2, "batch": 4, "default": 0, "mixed": 9}
OTHER_CLASS_HUES = (10, 11, 12, 13, 14, 5, 6, 8)  # classes of a custom workload, in order of appearance
# A run kind keeps its colour everywhere it is named (column headings of side-by-side views).
RUN_COLORS = {"static": "#7f7f7f", "continuous": "#1f77b4", "contiguous": "#8c564b", "paged": "#17becf",
              "paged-no-sharing": "#bcbd22", "paged-swap": "#e377c2", "fcfs": "#7f7f7f", "sjf": "#bcbd22",
              "priority": "#d62728", "edf": "#9467bd"}
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


def class_indices(classes) -> dict[str, int]:
    """Request class -> hue index: the fixed hue of a known class, else the next free one."""
    out: dict[str, int] = {}
    others = iter(OTHER_CLASS_HUES * 4)
    for name in classes:
        if name not in out:
            out[name] = CLASS_HUES[name] if name in CLASS_HUES else next(others)
    return out


def class_color(name: str, classes: list[str]) -> str:
    return HUES[class_indices(classes)[name]]


def run_color(kind: str) -> str:
    return RUN_COLORS.get(kind, "#636363")


def heatmap_colorscale() -> list:
    """z = 0 idle; 1..20 decode hues; 21..40 prefill tints (discrete bands)."""
    colors = [IDLE] + HUES + [tint(h) for h in HUES]
    n = len(colors)
    scale = []
    for i, c in enumerate(colors):
        scale += [[i / n, c], [(i + 1) / n, c]]
    return scale


HEATMAP_ZMAX = 2 * len(HUES) + 1
