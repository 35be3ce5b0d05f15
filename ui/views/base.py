"""What every drawn view shares: the chart config while playing or not, stable colours, the labels the views use, a
per-frame HTML view, small HTML tables and the run headings underlined in their run kind's colour."""
from __future__ import annotations

import threading
from html import escape
from typing import TYPE_CHECKING

import streamlit as st

from ui.playback import client_player
from ui.playback.derived import derived
from ui.shell.i18n import labels
from ui.shell.keys import ANIMATING
from ui.shell.style import ANIMATING_CONFIG, CHART_CONFIG
from engine.core.wait import CODES as WAIT_CODES
from viz.palette import class_indices, color_indices, run_color

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


MIN_FIT = 200  # a fitted chart is never shorter than this (a small window scrolls instead)
VIEW_LABELS = ("prompt", "output", "idle", "prefill", "decode", "held", "step", "slot", "preempted", "waiting",
               "blocked", "waiting_since", "why_slots", "why_budget", "why_memory", "why_fragmentation", "waiting",
               "running", "finished", "block", "slots_filled", "shared_by", "free", "free_cached", "logical",
               "physical", "logical_block", "token_states", "reserved", "internal_fragmentation",
               "external_fragmentation", "queue_more", "tl.done_note", *(f"wait.{code}" for code in WAIT_CODES))


def animating() -> bool:
    """The player is playing: charts skip their hover texts (nobody can hover a moving chart)."""
    return bool(st.session_state.get(ANIMATING))


def chart_config() -> dict:
    return ANIMATING_CONFIG if animating() else CHART_CONFIG


# A recorded run is shared by every session (ui.playback.run_cache): its derived rows are extended under a lock,
# or two sessions drawing the same frame would both append the same column.
DERIVING = threading.Lock()


def view_labels() -> dict:
    return labels(*VIEW_LABELS)


def colors(run: LiveRun, by_class: bool = False) -> dict[str, int]:
    """Stable colours: per request in arrival order, or per class."""
    key, cache = ("colors", by_class), derived(run)
    if key not in cache:
        rids = [r.request_id for r in run.trace_requests] or list(run.recorder.requests)
        if by_class:
            classes = class_indices(run.recorder.requests[r].request_class for r in rids)
            cache[key] = {r: classes[run.recorder.requests[r].request_class] for r in rids}
        else:
            cache[key] = color_indices(rids)
    return cache[key]


def html_view(run: LiveRun, frame: int, key: tuple, frame_html, view_key: str) -> None:
    """A per-frame HTML view: one still frame, or (playing in the browser) every frame of the run."""
    if client_player.current() is None:
        st.html(frame_html(min(frame, run.frames - 1)))
    else:
        client_player.html_view(view_key, lambda: client_player.html_frames(run, key, frame_html),
                                frame_html(min(frame, run.frames - 1)))


def fmt(value, spec=".1f", suffix=""):
    return "–" if value is None else f"{value:{spec}}{suffix}"


def metric_grid(items: list[tuple[str, str, str]]) -> str:
    """(label, value, tooltip) cells that reflow to the column's width: a narrow column (three runs
    side by side, or instructor mode's larger type) gets more rows, never a cut value."""
    cells = "".join(f'<div class="lab-metric" title="{escape(tip)}"><div class="lab-metric-label">{escape(label)}'
                    f'</div><div class="lab-metric-value">{escape(str(value))}</div></div>'
                    for label, value, tip in items)
    return f'<div class="lab-metrics">{cells}</div>'


def html_table(head: list[str], rows: list[list]) -> str:
    """A small table that scrolls inside its own column rather than spilling into the next one."""
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="lab-scroll-x" tabindex="0"><table class="lab-table"><tr>{th}</tr>{body}</table></div>'


def over_run(run: LiveRun, name: str, compute):
    """A figure read off every step: once a run has ended it is kept with the run (a pass over a long
    recorded run rebuilds each of its snapshots), and every session showing the run reads it."""
    if not run.done:
        return compute()
    cache = derived(run)
    if name not in cache:
        cache[name] = compute()
    return cache[name]


def heading(text: str, kind: str) -> None:
    """A side-by-side column's title, underlined in its run kind's colour (the same in every view)."""
    st.html(heading_html(text, kind))


def heading_html(text: str, kind: str, room: str = "") -> str:
    """A run's column heading. `room`: the longest text it will show, whose lines it takes from the start (a
    hidden twin in the same place), so that the picture below does not move when the heading grows."""
    # h2: the page's title is the h1, and headings go down one level at a time (WCAG 1.3.1, axe heading-order)
    style = f"border-bottom:3px solid {run_color(kind)}"
    if not room:
        return f'<h2 class="lab-run-heading" style="{style}">{escape(text)}</h2>'
    return (f'<h2 class="lab-run-heading lab-heading-room" style="{style}"><span class="lab-room" aria-hidden="true">'
            f'{escape(room)}</span><span>{escape(text)}</span></h2>')


def total_frames(runs: list[LiveRun]) -> int:
    """The step axis every view of these runs shares: their longest run (as far as the page shows it)."""
    return max(client_player.shown(r) for r in runs)
