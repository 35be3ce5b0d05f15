"""The lab's one palette: a colour per request (stable for a run), per request class and per run kind,
the same in every chart and table; light tints for prefill, greys for free memory.

Every colour is Okabe–Ito's or Paul Tol's, picked so that the categories a student must tell apart stay apart
for protanopia, deuteranopia and tritanopia too (tests/test_colour_vision.py simulates them and measures the
CIEDE2000 difference of every such pair). Colour is never the only cue: the memory split's shares are hatched
(SPLIT_PATTERNS), a block's fill level is drawn as its shape (viz/blocks.py), the server's gauges differ in dash
and carry their names, and a pre-emption is a black cross with a white edge on any colour."""
from __future__ import annotations

# 20 request hues, ordered so that any 4 consecutive ones (requests admitted one after another) and the first 6
# (request classes, CLASS_HUES) differ for every common colour vision deficiency
HUES = ["#CC79A7", "#332288", "#999933", "#56B4E9", "#117733", "#EE3377", "#009988", "#EE8866", "#882255", "#CC3311",
        "#0072B2", "#AAAA00", "#CC6677", "#77AADD", "#0077BB", "#AA3377", "#E69F00", "#D55E00", "#009E73", "#AA4499"]
IDLE = "#f4f4f6"
FREE = "#e6e6ea"
CACHED_FREE = "#b8c4d6"  # free, but still holds a prefix-cache hash
MARK = "#000000"  # marks drawn over request colours: pre-emptions, blocks written this step, a blocked queue head
MARK_EDGE = "#ffffff"  # a mark's edge: black or white stands 3:1 off any colour
# A request class keeps its hue everywhere: slot timelines coloured by class, the queue, box plots, bars.
CLASS_HUES = {"chat": 0, "report": 1, "support": 2, "interactive": 2, "batch": 3, "default": 0, "mixed": 4}
OTHER_CLASS_HUES = (5, 6, 7, 8, 9, 10, 11, 12)  # classes of a custom workload, in order of appearance
# A run kind keeps its colour everywhere it is named (column headings of side-by-side views).
RUN_COLORS = {"static": "#555555", "continuous": "#0077BB", "contiguous": "#000000", "paged": "#0077BB",
              "paged-no-sharing": "#D55E00", "paged-swap": "#882255", "fcfs": "#000000", "sjf": "#D55E00",
              "priority": "#882255", "edf": "#0077BB"}
SPLIT_COLORS = {"token_states": "#117733", "reserved": "#77AADD", "internal_fragmentation": "#E69F00",
                "external_fragmentation": "#AA3377", "free": FREE}
# the second cue of the memory split: plotly's fill patterns (and the legend's CSS hatching, viz/charts.py)
SPLIT_PATTERNS = {"token_states": "", "reserved": ".", "internal_fragmentation": "/", "external_fragmentation": "x",
                  "free": ""}
# the Real server's gauges: a colour, a dash and the name written at the line's end
GAUGE_COLORS = {"running": "#0072B2", "waiting": "#D55E00", "kv_usage": "#000000"}
GAUGE_DASHES = {"running": "solid", "waiting": "dash", "kv_usage": "dot"}
# three measures on one chart (load curves, class results): blue, vermilion, black
TRIO = ("#0077BB", "#D55E00", "#000000")
NEUTRAL = "#BBBBBB"  # a bar that counts but is not the point (a wrong answer)
# one request's journey (engine/lab/journey.py): a colour per state, and a second cue in viz/html.journey_html
# (waiting is hatched, a pre-emption and the finish are marks of their own)
JOURNEY_COLORS = {"waiting": "#e6e6ea", "prefill": "#77AADD", "decode": "#0077BB", "held": "#BBBBBB",
                  "preempted": "#000000", "finished": "#117733"}
ACCENT = "#0072B2"  # a single-series chart, the player's progress bar


def tint(hex_color: str, amount: float = 0.55) -> str:
    """Mix a colour with white: amount 0 keeps it, 1 is white."""
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    mix = lambda c: round(c + (255 - c) * amount)  # noqa: E731
    return f"#{mix(r):02x}{mix(g):02x}{mix(b):02x}"


def relative_luminance(hex_color: str) -> float:
    """WCAG 2.x relative luminance of an sRGB colour."""
    def linear(c: int) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(int(hex_color[i:i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2.x contrast ratio, 1 to 21."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def contrast_with_white(hex_color: str) -> float:
    return contrast_ratio(hex_color, "#ffffff")


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
    return RUN_COLORS.get(kind, "#555555")


def heatmap_colorscale() -> list:
    """z = 0 idle; 1..20 decode hues; 21..40 prefill tints (discrete bands)."""
    colors = [IDLE] + HUES + [tint(h) for h in HUES]
    n = len(colors)
    scale = []
    for i, c in enumerate(colors):
        scale += [[i / n, c], [(i + 1) / n, c]]
    return scale


HEATMAP_ZMAX = 2 * len(HUES) + 1
