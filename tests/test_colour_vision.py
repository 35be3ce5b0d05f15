"""Every picture can be read with a colour vision deficiency: under simulated protanopia, deuteranopia and
tritanopia (Machado 2009, severity 1.0) each pair of categories a student must tell apart differs by at least
a CIEDE2000 threshold, and where meaning rides on colour a second cue (hatching, shape, dash, label) carries it too."""
import itertools

import numpy as np
import pytest

from colour_support import DEFICIENCIES, VISIONS, contrast, delta_e
from viz import palette
from viz.blocks import STAMPS, block_code
from viz.charts import memory_split
from viz.figure import cell_pictures
from viz.palette import (FREE, GAUGE_COLORS, GAUGE_DASHES, HUES, IDLE, MARK, MARK_EDGE, RUN_COLORS, SPLIT_COLORS,
                         SPLIT_PATTERNS, tint)
from viz.server import gauge_timeline
from viz.timeline import PREEMPTION_MARK

# CIEDE2000: a few named categories drawn as areas or lines must differ plainly; request colours, 20 of them,
# must differ from their neighbours in admission order (requests running side by side) and from each other's tints
FEW, MANY = 15.0, 12.0
NEIGHBOURS = 4  # any 4 requests admitted one after another have 4 different colours
CLASSES = 6  # the first 6 hues are the request classes' (palette.CLASS_HUES)
OLD_SPLIT = {"token_states": "#2ca02c", "reserved": "#fdb462", "internal_fragmentation": "#fb8072",
             "external_fragmentation": "#bc80bd", "free": "#e6e6ea"}


def weakest(pairs, vision: str) -> tuple[float, tuple]:
    return min((delta_e(a, b, vision), (a, b)) for a, b in pairs)


@pytest.mark.parametrize("vision", VISIONS)
def test_memory_split_shares_stay_apart(vision):
    got, pair = weakest(itertools.combinations(SPLIT_COLORS.values(), 2), vision)
    assert got >= FEW, (vision, pair, got)


def test_the_threshold_catches_the_old_palette():
    """The measure fails on the colours the issue reported: the old memory split under deuteranopia."""
    assert weakest(itertools.combinations(OLD_SPLIT.values(), 2), "deuteranopia")[0] < FEW
    assert delta_e("#2ca02c", "#d62728", "deuteranopia") < FEW  # the old running (green) and waiting (red)


def test_fragmentation_is_hatched_and_token_states_are_not():
    fig = memory_split([{"token_states": 2, "reserved": 1, "internal_fragmentation": 1, "external_fragmentation": 1,
                         "free": 3, "total": 8}], 0, 1, {k: k for k in (*SPLIT_COLORS, "step")})
    shapes = {trace.name: trace.fillpattern.shape for trace in fig.data}
    assert shapes["token_states"] in ("", None)
    hatched = [shapes[k] for k in ("reserved", "internal_fragmentation", "external_fragmentation")]
    assert all(hatched) and len(set(hatched)) == 3
    assert SPLIT_PATTERNS["internal_fragmentation"] != SPLIT_PATTERNS["token_states"]


@pytest.mark.parametrize("vision", VISIONS)
def test_neighbouring_request_colours_stay_apart(vision):
    """Slots and blocks: requests admitted one after another, and the request classes, differ in colour."""
    near = [(HUES[i], HUES[(i + k) % len(HUES)]) for i in range(len(HUES)) for k in range(1, NEIGHBOURS)]
    got, pair = weakest(near, vision)
    assert got >= MANY, (vision, pair, got)
    got, pair = weakest(itertools.combinations(HUES[:CLASSES], 2), vision)
    assert got >= MANY, (vision, pair, got)


@pytest.mark.parametrize("vision", VISIONS)
def test_slots_tell_decode_from_prefill_and_busy_from_idle(vision):
    got, pair = weakest(((h, tint(h)) for h in HUES), vision)  # decode vs prefill of one request
    assert got >= MANY, (vision, pair, got)
    got, pair = weakest(((h, c) for h in HUES for c in (IDLE, FREE)), vision)  # busy vs idle, owned vs free
    assert got >= FEW, (vision, pair, got)


def test_a_blocks_fill_level_is_its_shape():
    """Full, partly filled and reserved-but-empty blocks of one owner, and free vs cached blocks, differ in the
    pattern of their pixels, not only in shade."""
    cells = cell_pictures([[0, 0, 0]] * (max(STAMPS) + 2), 12, 12, STAMPS)
    full, partial, empty = (block_code("r", fill, 1, False, 16, {"r": 3}) for fill in (16, 5, 0))
    free, cached = block_code(None, 0, 0, False, 16, {}), block_code(None, 0, 0, True, 16, {})
    inner = cells[:, :-1, :-1]  # the white gap right of and below each cell left out
    masks = {code: (inner[code] != inner[code][0, 0]).any(axis=2) for code in (full, partial, empty, free, cached)}
    assert not masks[full].any() and not masks[free].any()  # solid
    assert masks[partial].any() and masks[empty].any() and masks[cached].any()
    assert not np.array_equal(masks[partial], masks[empty])


@pytest.mark.parametrize("vision", VISIONS)
def test_server_gauges_differ_in_colour_dash_and_name(vision):
    got, pair = weakest(itertools.combinations(GAUGE_COLORS.values(), 2), vision)
    assert got >= FEW, (vision, pair, got)
    assert len(set(GAUGE_DASHES.values())) == len(GAUGE_DASHES)
    timeline = [{"t": 0.5 * i, "running": i, "waiting": 4 - i, "kv_usage": i / 8} for i in range(5)]
    fig = gauge_timeline(timeline, {k: f"<{k}>" for k in ("running", "waiting", "kv_usage", "seconds", "requests")})
    assert {a.text for a in fig.layout.annotations} == {"<running>", "<waiting>", "<kv_usage>"}  # direct labels
    assert len({trace.line.dash for trace in fig.data}) == 3


@pytest.mark.parametrize("vision", VISIONS)
def test_a_preemption_mark_stands_out_on_every_request_colour(vision):
    """Policies: the mark is a shape no cell has, and its fill or its edge differs from any cell under it."""
    assert PREEMPTION_MARK["symbol"] == "x" and PREEMPTION_MARK["line"]["color"] == MARK_EDGE
    cells = [c for h in HUES for c in (h, tint(h))]
    got = min(max(delta_e(MARK, c, vision), delta_e(MARK_EDGE, c, vision)) for c in cells)
    assert got >= FEW, (vision, got)
    assert min(max(contrast(MARK, c), contrast(MARK_EDGE, c)) for c in cells) >= 3.0


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("kinds", [("static", "continuous"), ("contiguous", "paged", "paged-no-sharing", "paged-swap"),
                                   ("fcfs", "sjf", "priority", "edf")])
def test_runs_side_by_side_have_colours_apart(vision, kinds):
    got, pair = weakest(itertools.combinations((RUN_COLORS[k] for k in kinds), 2), vision)
    assert got >= FEW, (vision, kinds, pair, got)


def test_every_palette_colour_is_okabe_ito_or_paul_tol():
    okabe_ito = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}
    tol = {"#4477AA", "#66CCEE", "#228833", "#CCBB44", "#EE6677", "#AA3377", "#BBBBBB", "#0077BB", "#33BBEE",
           "#009988", "#EE7733", "#CC3311", "#EE3377", "#332288", "#88CCEE", "#44AA99", "#117733", "#999933",
           "#DDCC77", "#CC6677", "#882255", "#AA4499", "#DDDDDD", "#77AADD", "#99DDFF", "#44BB99", "#BBCC33",
           "#AAAA00", "#EEDD88", "#EE8866", "#FFAABB", "#555555"}
    named = set(HUES) | set(GAUGE_COLORS.values()) | set(RUN_COLORS.values()) | set(palette.TRIO) | {
        palette.NEUTRAL, palette.ACCENT} | {c for k, c in SPLIT_COLORS.items() if k != "free"}
    assert named <= okabe_ito | tol, named - okabe_ito - tol
    assert set(DEFICIENCIES) == {"protanopia", "deuteranopia", "tritanopia"}
