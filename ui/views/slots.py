"""The slot timeline, the queue at the door and the side-by-side columns of runs on one step axis."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import streamlit as st

from ui.playback import client_player
from ui.playback.derived import derived
from ui.playback.live_chart import Fit, figure_json, live_chart
from ui.shell.i18n import class_name, lang, t
from ui.shell.style import scaled
from ui.views.base import (DERIVING, MIN_FIT, animating, chart_config, colors, heading_html, html_view, total_frames,
                           view_labels)
from ui.views import journey, words
from ui.views.results import metrics_panel
from viz.html import class_legend_html, queue_html
from viz.figure import Look as FigureLook
from viz.palette import class_indices
from viz.timeline import slot_timeline, timeline_column, timeline_frames

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


@dataclass(frozen=True)
class Look:
    """How a timeline is drawn. `fit`: the timeline is the page's main picture and takes the window's height
    left below it, less what `below` (a CSS selector) names: the views that stay on screen under it."""
    title: str = ""
    by_class: bool = False
    height: int = 300
    fit: bool = False
    below: str | None = None


def timeline_columns(run: LiveRun, frame: int, by_class: bool):
    key = ("timeline", lang(), by_class)
    snaps, color_of, lab = run.snapshots, colors(run, by_class), view_labels()
    with DERIVING:
        cols = derived(run).setdefault(key, [])
        for i in range(len(cols), min(frame + 1, len(snaps))):
            cols.append(timeline_column(snaps[i], snaps[i - 1] if i else None, color_of, lab))
    return cols


def timeline(run: LiveRun, frame: int, total: int | Callable[[], int], key: str, look: Look = Look()) -> None:
    """`total`: the steps on the axis, or how to count them (playing runs still computed in the browser, the
    next chunk's frames are made later, on a longer axis)."""
    title, by_class, height = look.title, look.by_class, look.height
    # an ended run keeps the player's frame (its window follows the runs beside it); one still computed holds
    # at its newest step
    frame = frame if run.done else min(frame, run.frames - 1)
    total_now = total if callable(total) else lambda: total
    total = total_now()
    clock, frames = client_player.current(), None
    if clock is None:
        fig = slot_timeline(timeline_columns(run, frame, by_class), frame, total, view_labels(),
                            FigureLook(scaled(height), title, hover=not animating()))
    else:
        def made() -> dict:
            n = client_player.shown(run)
            done = t("tl.done_note", step=run.snapshots[-1].step) if run.done and n == run.frames else None
            return timeline_frames(timeline_columns(run, n - 1, by_class)[:n], total_now(), done_text=done)
        frames = client_player.animated(key, lambda: client_player.run_frames(run, ("timeline", by_class, total_now()),
                                                                              made))
        # the browser draws every frame's picture, marks, window and cursor itself: what the figure keeps
        # (axes, titles, sizes) does not change with the frame, so one is built for all sessions
        cache = derived(run)
        fig = cache.get(base := ("timeline-base", lang(), by_class, total, scaled(height), title))
        if fig is None:
            fig = cache[base] = figure_json(slot_timeline(timeline_columns(run, 0, by_class), 0, total,
                                                          view_labels(),
                                                          FigureLook(scaled(height), title, hover=False)))
    live_chart(fig, key, scaled(height), chart_config(), fit=Fit(MIN_FIT, scaled(height) * 2, look.below) if look.fit
               else None, playing=client_player.playing(frames, clock))


def queue(run: LiveRun, frame: int, key: str, by_class: bool = False, columns: int = 1) -> None:
    """`columns`: how many runs stand side by side (three or more: a third of the window holds fewer cells)."""
    capacity = 48 if columns <= 2 else 36
    with st.container(key=key):
        color_of, lab = colors(run, by_class), view_labels()
        html_view(run, frame, ("queue", lang(), by_class, capacity),
                  lambda i: queue_html(run.snapshots[i], color_of, lab, capacity), key)


def _run_heading(page: str, run: LiveRun, runs: list[LiveRun], frame: int, text: str) -> None:
    """A column's title; "done at step n" appears once the player passes the run's end, in lines the heading has
    kept for it from the start (a run still computed keeps them for a four-digit step)."""
    done_at = f" · {t('svc.done_at', step=run.frames - 1)}" if run.done else ""
    room = text + (done_at or f" · {t('svc.done_at', step=9999)}")

    def at(f: int) -> str:
        return heading_html(text + (done_at if run.done and f >= run.frames else ""), run.label, room)
    if client_player.current() is None:
        st.html(at(frame))
    else:
        client_player.html_view(f"{page}.h.{run.label}", lambda: client_player.run_frames(
            run, ("heading", text, done_at, total_frames(runs)),
            lambda: client_player.encode([at(f) for f in range(total_frames(runs))])), at(frame))


def class_legend(runs: list[LiveRun]) -> str:
    """The classes of the runs' requests (in arrival order) with the colours every by-class view gives them."""
    classes = list(dict.fromkeys(r.request_class for run in runs for r in run.recorder.requests.values()))
    return class_legend_html({c: class_name(c) for c in classes}, class_indices(classes), t("tl.class_legend_note"))


def side_by_side(page: str, runs: list[LiveRun], frame: int, title, by_class: bool = False, height: int = 300) -> None:
    """One column per run, all on the same step axis: timeline, the queue at the door, live metrics. Drawn a row
    per view (a row of headings, of timelines, ...), so each view starts at the same height in every column
    whatever the others above it take; the timelines fill the window but for the queues, which stay on the first
    screen under them (the metrics may be scrolled to)."""
    def row():
        return zip(st.columns(len(runs)), runs)
    for col, run in row():
        with col:
            _run_heading(page, run, runs, frame, title(run))
            words.summary(run, frame, f"{page}.{run.label}", title(run))
    if by_class:  # which colour is which class, on the first screen above the pictures
        st.html(class_legend(runs))
    queues = ", ".join(f".st-key-{page}-q-{run.label}" for run in runs)
    for col, run in row():
        with col:
            timeline(run, frame, lambda: total_frames(runs), f"{page}.tl.{run.label}",
                     Look(by_class=by_class, height=height, fit=True, below=queues))
    for col, run in row():
        with col:
            queue(run, frame, key=f"{page}.q.{run.label}", by_class=by_class, columns=len(runs))
    for col, run in row():
        with col:
            metrics_panel(run, frame, key=f"{page}.m.{run.label}")
    words.tables(page, runs, frame, [title(run) for run in runs])
    journey.follow(page, runs, frame, [title(run) for run in runs])
