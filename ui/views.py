"""Views of one run at one frame, shared by the lab pages: timeline, queue, metrics, memory."""
from __future__ import annotations

import threading
from html import escape
from typing import Callable

import streamlit as st

from engine import LiveRun, blocks_to_reserve, free_runs, kv_split
from ui import client_player
from ui.i18n import class_name, labels, lang, run_name, t
from ui.live_chart import figure_json, live_chart
from ui.style import font_scale, scaled
from viz.blocks import block_pool, pool_frames
from viz.charts import memory_split, split_frames, split_legend_html
from viz.html import block_tables_html, queue_html
from viz.palette import class_indices, color_indices, run_color
from viz.timeline import slot_timeline, timeline_column, timeline_frames

CHART_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}
# While the player runs, charts are static pictures: no hover layers, no modebar. It halves the
# browser's work per frame, and nobody can hover a moving chart anyway.
ANIMATING_CONFIG = {"staticPlot": True}
MIN_FIT = 200  # a fitted chart is never shorter than this (a small window scrolls instead)
VIEW_LABELS = ("prompt", "output", "idle", "prefill", "decode", "held", "step", "slot", "preempted", "waiting",
               "blocked", "waiting_since", "why_slots", "why_budget", "why_memory", "why_fragmentation", "waiting",
               "running", "finished", "block", "slots_filled", "shared_by", "free", "free_cached", "logical",
               "physical", "logical_block", "token_states", "reserved", "internal_fragmentation",
               "external_fragmentation", "queue_more")


def animating() -> bool:
    """The player is playing: charts skip their hover texts (nobody can hover a moving chart)."""
    return bool(st.session_state.get("player.animating"))


def chart_config() -> dict:
    return ANIMATING_CONFIG if animating() else CHART_CONFIG


# A recorded run is shared by every session (ui.run_cache): its derived rows are extended under a lock,
# or two sessions drawing the same frame would both append the same column.
_DERIVING = threading.Lock()


def view_labels() -> dict:
    return labels(*VIEW_LABELS)


def colors(run: LiveRun, by_class: bool = False) -> dict[str, int]:
    """Stable colours: per request in arrival order, or per class."""
    key = ("colors", by_class)
    if key not in run.cache:
        rids = [r.request_id for r in run.trace_requests] or list(run.recorder.requests)
        if by_class:
            classes = class_indices(run.recorder.requests[r].request_class for r in rids)
            run.cache[key] = {r: classes[run.recorder.requests[r].request_class] for r in rids}
        else:
            run.cache[key] = color_indices(rids)
    return run.cache[key]


def timeline_columns(run: LiveRun, frame: int, by_class: bool):
    key = ("timeline", lang(), by_class)
    snaps, color_of, lab = run.snapshots, colors(run, by_class), view_labels()
    with _DERIVING:
        cols = run.cache.setdefault(key, [])
        for i in range(len(cols), min(frame + 1, len(snaps))):
            cols.append(timeline_column(snaps[i], snaps[i - 1] if i else None, color_of, lab))
    return cols


def timeline(run: LiveRun, frame: int, total: int | Callable[[], int], key: str, title: str = "",
             by_class: bool = False, height: int = 300, fit: bool = False) -> None:
    """`total`: the steps on the axis, or how to count them (playing runs still computed in the browser, the
    next chunk's frames are made later, on a longer axis). `fit`: the timeline is the page's main picture
    and takes the window's height left below it."""
    frame = min(frame, run.frames - 1)
    total_now = total if callable(total) else lambda: total
    total = total_now()
    clock, frames = client_player.current(), None
    if clock is None:
        fig = slot_timeline(timeline_columns(run, frame, by_class), frame, total, view_labels(), height=scaled(height),
                            title=title, hover=not animating())
    else:
        def made() -> dict:
            n = client_player.shown(run)
            return timeline_frames(timeline_columns(run, n - 1, by_class)[:n], total_now())
        frames = client_player.animated(key, lambda: client_player.run_frames(run, ("timeline", by_class, total_now()),
                                                                              made))
        # the browser draws every frame's picture, marks, window and cursor itself: what the figure keeps
        # (axes, titles, sizes) does not change with the frame, so one is built for all sessions
        fig = run.cache.get(base := ("timeline-base", lang(), by_class, total, scaled(height), title))
        if fig is None:
            fig = run.cache[base] = figure_json(slot_timeline(timeline_columns(run, 0, by_class), 0, total,
                                                              view_labels(), height=scaled(height), title=title,
                                                              hover=False))
    live_chart(fig, key, scaled(height), chart_config(), fit=(MIN_FIT, scaled(height) * 2) if fit else None,
               font_scale=font_scale(), frames=frames, clock=clock and client_player.clock_args(clock))


def _html(run: LiveRun, frame: int, key: tuple, frame_html, view_key: str) -> None:
    """A per-frame HTML view: one still frame, or (playing in the browser) every frame of the run."""
    if client_player.current() is None:
        st.html(frame_html(min(frame, run.frames - 1)))
    else:
        client_player.html_view(view_key, lambda: client_player.html_frames(run, key, frame_html),
                                frame_html(min(frame, run.frames - 1)))


def queue(run: LiveRun, frame: int, key: str, by_class: bool = False) -> None:
    with st.container(key=key):
        color_of, lab = colors(run, by_class), view_labels()
        _html(run, frame, ("queue", lang(), by_class), lambda i: queue_html(run.snapshots[i], color_of, lab), key)


def _fmt(value, spec=".1f", suffix=""):
    return "–" if value is None else f"{value:{spec}}{suffix}"


def metric_grid(items: list[tuple[str, str, str]]) -> str:
    """(label, value, tooltip) cells that reflow to the column's width: a narrow column (three runs
    side by side, or instructor mode's larger type) gets more rows, never a cut value."""
    cells = "".join(f'<div class="lab-metric" title="{escape(tip)}"><div class="lab-metric-label">{escape(label)}'
                    f'</div><div class="lab-metric-value">{escape(str(value))}</div></div>' for label, value, tip in items)
    return f'<div class="lab-metrics">{cells}</div>'


def html_table(head: list[str], rows: list[list]) -> str:
    """A small table that scrolls inside its own column rather than spilling into the next one."""
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="lab-scroll-x"><table class="lab-table"><tr>{th}</tr>{body}</table></div>'


def metrics_panel(run: LiveRun, frame: int, key: str = "metrics") -> None:
    _html(run, frame, ("metrics", lang()), lambda i: metrics_html(run, i), key)


def metrics_html(run: LiveRun, frame: int) -> str:
    """What the numbers were at this frame: only requests seen by then count."""
    m = run.recorder.frame_metrics(min(frame, run.frames - 1))
    items = [(t("m.tok_per_s"), _fmt(m["tok_per_s"], ".0f"), ""),
             (t("m.tok_per_step"), _fmt(m["tok_per_step"], ".2f"), ""),
             (t("m.queue"), m["queue"], ""),
             (t("m.slot_util"), _fmt(100 * m["slot_util_now"], ".0f", "%"),
              t("m.slot_util_help", mean=_fmt(100 * m["slot_util_mean"], ".0f", "%"))),
             (t("m.kv_util"), _fmt(100 * m["kv_util_now"], ".0f", "%"), ""),
             (t("m.fairness"), _fmt(m["fairness_jain"], ".2f"), t("m.fairness_help")),
             (t("m.preemptions"), m["preemptions"], ""),
             (t("m.finished"), f"{m['finished']} / {len(run.recorder.requests)}", "")]
    html = metric_grid(items)
    if m["classes"]:  # plain HTML: far cheaper to redraw 10 times a second than a data grid
        head = [t("m.class"), t("m.ttft_p50"), t("m.ttft_p95"), t("m.ttft_p50_ms"), t("m.slo")]
        rows = [[class_name(cls), _fmt(c["ttft_p50_steps"]), _fmt(c["ttft_p95_steps"]), _fmt(c["ttft_p50_ms"]),
                 _fmt(None if c["slo_attainment"] is None else 100 * c["slo_attainment"], ".0f", "%")]
                for cls, c in m["classes"].items()]
        html += html_table(head, rows)
    return html


def kv_rows(run: LiveRun) -> list[dict]:
    """The memory split per step. Until the run ends, a request is assumed to use its max_tokens."""
    key = ("kv", run.done)
    with _DERIVING:
        rows = run.cache.setdefault(key, [])
        if len(rows) < run.frames:
            final = {rid: r.num_prompt_tokens + (r.num_output_tokens if r.is_finished else r.sampling_params.max_tokens)
                     for rid, r in run.recorder.requests.items()}
            rows += [kv_split(s, final) for s in run.snapshots[len(rows):]]
    return rows


def memory(run: LiveRun, frame: int, total: int, key: str, show_tables: bool = True,
           selected: list[str] | None = None) -> None:
    """Block pool, memory split over time, and the block tables of the selected requests (default:
    the ones running now)."""
    frame = min(frame, run.frames - 1)
    snap, lab, clock = run.snapshots[frame], view_labels(), client_player.current()
    pool = block_pool(snap, colors(run), lab, title=_pool_title(snap), hover=not animating())
    def made() -> dict:
        snaps = run.snapshots[:client_player.shown(run)]
        return pool_frames(snaps, colors(run), [_pool_title(s) for s in snaps])
    frames = clock and client_player.animated(f"{key}.pool", lambda: client_player.run_frames(run, ("pool", lang()), made))
    live_chart(pool, f"{key}.pool", pool.layout.height, chart_config(), font_scale=font_scale(), frames=frames,
               clock=clock and client_player.clock_args(clock))
    if clock is None:
        refusal_note(run, frame)
    else:  # the note as HTML, in the colours of st.warning
        _html(run, frame, ("refusal", lang()), lambda i: "".join(
            f'<div class="lab-refusal">{escape(text)}</div>' for text in refusals(run, i)), f"{key}.refusal")
    frames = clock and client_player.animated(f"{key}.split", lambda: client_player.run_frames(
        run, ("split",), lambda: split_frames(kv_rows(run)[:client_player.shown(run)])))
    live_chart(memory_split(kv_rows(run), frame, total, lab, height=scaled(240), title=t("kv.split_title")),
               f"{key}.split", scaled(240), chart_config(), font_scale=font_scale(), frames=frames,
               clock=clock and client_player.clock_args(clock))
    st.html(split_legend_html(lab))
    if show_tables:
        st.caption(t("kv.tables_caption"))
        _html(run, frame, ("tables", lang(), tuple(selected or ())), lambda i: _tables(run, i, selected, lab),
              f"{key}.tables")


def _pool_title(snap) -> str:
    return t("kv.pool_title", used=snap.num_used_blocks, total=snap.num_blocks, partial=snap.num_partial_blocks)


def _tables(run: LiveRun, frame: int, selected: list[str] | None, lab: dict) -> str:
    snap = run.snapshots[frame]
    shown = [rid for rid in selected if rid in snap.block_tables] if selected else [rid for rid in snap.slots if rid][:6]
    widest = _widest_table(run) if run.done else max((len(tb) for tb in snap.block_tables.values()), default=1)
    return f'<div class="lab-scroll-x">{block_tables_html(snap, shown, colors(run), lab, widest)}</div>'


def _widest_table(run: LiveRun) -> int:
    """The longest block table of an ended run (every frame's table is drawn that wide), scanned once."""
    if "widest_table" not in run.cache:  # not setdefault: its default would scan every snapshot each call
        run.cache["widest_table"] = max((len(tb) for s in run.snapshots for tb in s.block_tables.values()), default=1)
    return run.cache["widest_table"]


def refusals(run: LiveRun, frame: int) -> list[str]:
    """Why the contiguous layout turned a request away at this frame, in words."""
    snap, notes = run.snapshots[min(frame, run.frames - 1)], []
    for rid, why in snap.blocked.items():
        if why == "fragmentation":
            view = snap.requests[rid]
            need = blocks_to_reserve(view.num_prompt_tokens, view.max_tokens, run.config)
            notes.append(t("kv.refused", rid=rid, need=need, free=snap.num_free_blocks,
                           largest=max(free_runs(snap.block_ref_count), default=0)))
    return notes


def refusal_note(run: LiveRun, frame: int) -> None:
    """Explain, at the moment it happens, why the contiguous layout turned a request away."""
    for note in refusals(run, frame):
        st.warning(note)


def _over_run(run: LiveRun, name: str, compute):
    """A figure read off every step: once a run has ended it is kept with the run (a pass over a long
    recorded run rebuilds each of its snapshots), and every session showing the run reads it."""
    if not run.done:
        return compute()
    if name not in run.cache:
        run.cache[name] = compute()
    return run.cache[name]


def peak_blocks(run: LiveRun) -> int:
    """The most KV blocks in use at any step: the memory this run needed."""
    return _over_run(run, "peak_blocks", lambda: max((s.num_used_blocks for s in run.snapshots), default=0))


def blocks_saved_by_sharing(run: LiveRun) -> int:
    """At the step where sharing saved most: blocks that would have been separate copies (each extra
    reference to a shared block is one block not allocated)."""
    return _over_run(run, "saved_by_sharing", lambda: max(
        (sum(r - 1 for r in s.block_ref_count if r > 1) for s in run.snapshots), default=0))


def first_refusal(run: LiveRun) -> int | None:
    return _over_run(run, "first_refusal", lambda: next(
        (i for i, s in enumerate(run.snapshots) if "fragmentation" in s.blocked.values()), None))


def summary_rows(runs: list[LiveRun]) -> list[dict]:
    rows = []
    for run in runs:
        s = run.summary()
        row = {t("sum.run"): run_name(run.label), t("sum.steps"): s["steps"], t("sum.tok_per_s"): _fmt(s["throughput_tok_per_s"], ".0f"),
               t("sum.tok_per_step"): _fmt(s["throughput_tok_per_step"], ".2f"),
               t("sum.ttft_p50"): _fmt(s["latency"]["ttft_steps"]["p50"]),
               t("sum.ttft_p95"): _fmt(s["latency"]["ttft_steps"]["p95"]),
               t("sum.slot_util"): _fmt(100 * s["slot_utilisation"], ".0f", "%"),
               t("sum.kv_waste"): _fmt(100 * s["kv_waste_share"], ".1f", "%"),
               t("sum.fairness"): _fmt(s["fairness_jain"], ".2f"), t("sum.preemptions"): s["preemptions"]}
        for cls, d in s["by_class"].items():
            row[t("sum.ttft_p50_class", cls=class_name(cls))] = _fmt(d["ttft_steps"]["p50"])
            if d.get("slo_attainment") is not None:
                row[t("sum.slo_class", cls=class_name(cls))] = _fmt(100 * d["slo_attainment"], ".0f", "%")
        rows.append(row)
    return rows


def summary_table(runs: list[LiveRun]) -> None:
    st.dataframe(summary_rows(runs), hide_index=True)


def save_runs(runs: list[LiveRun], page: str) -> None:
    """Instructors record a run here and replay it later in the playground, with no model loaded."""
    from ui import downloads

    with st.expander(t("save.title")):
        st.caption(t("save.help"))
        for run in runs:
            st.download_button(t("save.one", label=run.label), lambda run=run: downloads.trace_text(
                run, {"model": st.session_state.get("model", "tiny"), "workload": page, "label": run.label}),
                f"{page}-{run.label}.jsonl", "application/jsonl", key=f"{page}.save.{run.label}", on_click="ignore")


def heading(text: str, kind: str) -> None:
    """A side-by-side column's title, underlined in its run kind's colour (the same in every view)."""
    st.html(heading_html(text, kind))


def heading_html(text: str, kind: str) -> str:
    return f'<h4 class="lab-run-heading" style="border-bottom:3px solid {run_color(kind)}">{escape(text)}</h4>'



def total_frames(runs: list[LiveRun]) -> int:
    """The step axis every view of these runs shares: their longest run (as far as the page shows it)."""
    return max(client_player.shown(r) for r in runs)


def _run_heading(page: str, run: LiveRun, runs: list[LiveRun], frame: int, text: str) -> None:
    """A column's title; "done at step n" appears once the player passes the run's end."""
    done_at = f" · {t('svc.done_at', step=run.frames - 1)}" if run.done else ""

    def at(f: int) -> str:
        return heading_html(text + (done_at if run.done and f >= run.frames else ""), run.label)
    if client_player.current() is None:
        st.html(at(frame))
    else:
        client_player.html_view(f"{page}.h.{run.label}", lambda: client_player.run_frames(
            run, ("heading", text, done_at, total_frames(runs)),
            lambda: client_player.encode([at(f) for f in range(total_frames(runs))])), at(frame))


def side_by_side(page: str, runs: list[LiveRun], frame: int, title, by_class: bool = False, height: int = 300) -> None:
    """One column per run, all on the same step axis: timeline, the queue at the door, live metrics."""
    for col, run in zip(st.columns(len(runs)), runs):
        with col:
            _run_heading(page, run, runs, frame, title(run))
            timeline(run, frame, lambda: total_frames(runs), key=f"{page}.tl.{run.label}", by_class=by_class,
                     height=height, fit=True)
            queue(run, frame, key=f"{page}.q.{run.label}", by_class=by_class)
            metrics_panel(run, frame, key=f"{page}.m.{run.label}")
