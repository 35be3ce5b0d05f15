"""The paged KV cache drawn: block pool, memory split over time, block tables, and why a request was refused."""
from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import streamlit as st

from engine.core.contiguous import blocks_to_reserve
from engine.lab.metrics import free_runs, kv_split
from ui.playback import client_player
from ui.playback.derived import derived
from ui.playback.live_chart import live_chart
from ui.shell.i18n import lang, t
from ui.shell.style import scaled
from ui.views import journey, words
from ui.views.slots import Look as TimelineLook, timeline
from ui.views.base import (DERIVING, animating, chart_config, colors, heading, html_view, over_run, total_frames,
                           view_labels)
from viz.blocks import block_pool, pool_frames
from viz.figure import Look
from viz.charts import memory_split, split_frames, split_legend_html
from viz.html import block_tables_html

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


def kv_rows(run: LiveRun) -> list[dict]:
    """The memory split per step. Until the run ends, a request is assumed to use its max_tokens."""
    key = ("kv", run.done)
    with DERIVING:
        rows = derived(run).setdefault(key, [])
        if len(rows) < run.frames:
            final = {rid: r.num_prompt_tokens + (r.num_output_tokens if r.is_finished else r.sampling_params.max_tokens)
                     for rid, r in run.recorder.requests.items()}
            rows += [kv_split(s, final) for s in run.snapshots[len(rows):]]
    return rows


def memory(run: LiveRun, frame: int, total: int, key: str, show_tables: bool = True,
           selected: list[str] | None = None) -> None:
    """Block pool, memory split over time, and the block tables of the selected requests (default:
    the ones running now), one under the other."""
    pool(run, frame, key)
    refusal(run, frame, key)
    split(run, frame, total, key)
    st.html(split_legend_html(view_labels()))
    if show_tables:
        st.caption(t("kv.tables_caption"))
        tables(run, frame, key, selected)


def side_by_side(page: str, runs: list[LiveRun], frame: int, selected: list[str] | None = None) -> None:
    """Two layouts on the first screen, every view in the same place in each run's half, so they line up: a row
    of headings; each run's block pool beside its memory split; one legend for both; each run's slot timeline
    beside its block tables and refusals (the one view whose height changes as it plays, last)."""
    def halves():
        cells = st.columns(2 * len(runs))
        return [(run, cells[2 * i], cells[2 * i + 1]) for i, run in enumerate(runs)]
    for col, run in zip(st.columns(len(runs)), runs):
        with col:
            heading(t(f"kv.v.{run.label}"), run.label)
            words.summary(run, frame, f"{page}.{run.label}", t(f"kv.v.{run.label}"))
    total = total_frames(runs)
    for run, left, right in halves():
        with left:
            pool(run, frame, f"{page}.mem.{run.label}", height=scaled(PLAY_HEIGHT), short=True)
        with right:
            split(run, frame, total, f"{page}.mem.{run.label}", height=scaled(PLAY_HEIGHT))
    st.html(split_legend_html(view_labels(), note=t("kv.tables_caption")))
    for run, left, right in halves():
        with left:
            timeline(run, frame, lambda: total_frames(runs), f"{page}.tl.{run.label}", TimelineLook(height=PLAY_HEIGHT))
        with right:  # the refusals in the tables' place: the cell keeps its height, and the picture fits the window
            tables(run, frame, f"{page}.mem.{run.label}", selected, most=PLAY_TABLES, with_refusals=True)
    words.tables(page, runs, frame, [t(f"kv.v.{run.label}") for run in runs])
    journey.follow(page, runs, frame, [t(f"kv.v.{run.label}") for run in runs])


PLAY_HEIGHT = 120  # each chart of the side-by-side views (before instructor mode's scale): two rows fit 1280x720
PLAY_TABLES = 3  # block tables shown beside the timeline (the selected requests, or the first ones running)


def pool(run: LiveRun, frame: int, key: str, height: int | None = None, short: bool = False) -> None:
    """`short`: the title in few words (a quarter of the window wide)."""
    frame = min(frame, run.frames - 1)
    snap, lab, clock = run.snapshots[frame], view_labels(), client_player.current()
    fig = block_pool(snap, colors(run), lab, height=height, title=_pool_title(snap, short), hover=not animating())

    def made() -> dict:
        snaps = run.snapshots[:client_player.shown(run)]
        return pool_frames(snaps, colors(run), [_pool_title(s, short) for s in snaps])
    frames = clock and client_player.animated(f"{key}.pool",
                                              lambda: client_player.run_frames(run, ("pool", lang(), short), made))
    live_chart(fig, f"{key}.pool", fig.layout.height, chart_config(), playing=client_player.playing(frames, clock))


def refusal(run: LiveRun, frame: int, key: str) -> None:
    """Why the contiguous layout turned a request away, at the frame it happens: one HTML element in the colours of
    st.warning, still or playing (a count of elements that changed with the frame would move the charts below, and
    the browser would build them anew, blank until drawn)."""
    html_view(run, frame, ("refusal", lang()),
              lambda i: f'<div class="lab-refusals">{_notes_html(refusals(run, i))}</div>', f"{key}.refusal")


def _notes_html(notes: list[str]) -> str:
    return "".join(f'<div class="lab-refusal">{escape(text)}</div>' for text in notes)


def split(run: LiveRun, frame: int, total: int, key: str, height: int | None = None) -> None:
    frame, clock = min(frame, run.frames - 1), client_player.current()
    height = height or scaled(240)
    frames = clock and client_player.animated(f"{key}.split", lambda: client_player.run_frames(
        run, ("split",), lambda: split_frames(kv_rows(run)[:client_player.shown(run)])))
    live_chart(memory_split(kv_rows(run), frame, total, view_labels(), Look(height, t("kv.split_title"))),
               f"{key}.split", height, chart_config(), playing=client_player.playing(frames, clock))


def tables(run: LiveRun, frame: int, key: str, selected: list[str] | None = None, most: int = 6,
           with_refusals: bool = False) -> None:
    """The block tables; `with_refusals`: a frame's refusal, in short, takes the place of two of them."""
    def frame_html(i: int) -> str:
        notes = refusals(run, i, short=True) if with_refusals else []
        rows = max(0, most - 2 * len(notes))
        return _notes_html(notes) + (_tables(run, i, selected, view_labels(), rows) if rows else "")
    html_view(run, frame, ("tables", lang(), tuple(selected or ()), most, with_refusals), frame_html, f"{key}.tables")


def _pool_title(snap, short: bool = False) -> str:
    return t("kv.pool_title_short" if short else "kv.pool_title", used=snap.num_used_blocks, total=snap.num_blocks,
             partial=snap.num_partial_blocks)


def _tables(run: LiveRun, frame: int, selected: list[str] | None, lab: dict, most: int = 6) -> str:
    snap = run.snapshots[frame]
    shown = ([rid for rid in selected if rid in snap.block_tables] if selected
             else [rid for rid in snap.slots if rid])[:most]
    widest = _widest_table(run) if run.done else max((len(tb) for tb in snap.block_tables.values()), default=1)
    # focusable: a keyboard can scroll a wide table sideways (WCAG 2.1.1, axe scrollable-region-focusable)
    return f'<div class="lab-scroll-x" tabindex="0">{block_tables_html(snap, shown, colors(run), lab, widest)}</div>'


def _widest_table(run: LiveRun) -> int:
    """The longest block table of an ended run (every frame's table is drawn that wide), scanned once."""
    cache = derived(run)
    if "widest_table" not in cache:  # not setdefault: its default would scan every snapshot each call
        cache["widest_table"] = max((len(tb) for s in run.snapshots for tb in s.block_tables.values()), default=1)
    return cache["widest_table"]


def refusals(run: LiveRun, frame: int, short: bool = False) -> list[str]:
    """Why the contiguous layout turned a request away at this frame, in words (`short`: fewer words each)."""
    snap, notes = run.snapshots[min(frame, run.frames - 1)], []
    for rid, why in snap.blocked.items():
        if why == "fragmentation":
            view = snap.requests[rid]
            need = blocks_to_reserve(view.num_prompt_tokens, view.max_tokens, run.config)
            notes.append(t("kv.refused_short" if short else "kv.refused", rid=rid, need=need, free=snap.num_free_blocks,
                           largest=max(free_runs(snap.block_ref_count), default=0)))
    return notes


def peak_blocks(run: LiveRun) -> int:
    """The most KV blocks in use at any step: the memory this run needed."""
    return over_run(run, "peak_blocks", lambda: max((s.num_used_blocks for s in run.snapshots), default=0))


def blocks_saved_by_sharing(run: LiveRun) -> int:
    """At the step where sharing saved most: blocks that would have been separate copies (each extra
    reference to a shared block is one block not allocated)."""
    return over_run(run, "saved_by_sharing", lambda: max(
        (sum(r - 1 for r in s.block_ref_count if r > 1) for s in run.snapshots), default=0))


def first_refusal(run: LiveRun) -> int | None:
    return over_run(run, "first_refusal", lambda: next(
        (i for i, s in enumerate(run.snapshots) if "fragmentation" in s.blocked.values()), None))
