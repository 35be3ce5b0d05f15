"""Follow a request: pick one request of a run and see its journey (engine/lab/journey.py): when it waited and
why, when it entered the batch (its prefill, in chunks), decoded, was preempted, came back and finished, and how
many blocks its block table held, on the run's step axis with the player's step marked; the same in words, a row
per stage, for the keyboard and screen readers."""
from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import streamlit as st

from engine.lab.journey import journey
from ui.shell.i18n import lang, t
from ui.views.base import html_table, html_view, over_run
from viz.html import journey_html

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun
    from engine.lab.journey import Stage


def follow(page: str, runs: list[LiveRun], frame: int, names: list[str]) -> None:
    """Under a lab page's views, when the student asks (it reads every step of the run): a request picked by name
    in one of the runs, and its journey following the player."""
    if not st.toggle(t("journey.title"), key=f"{page}.follow", help=t("journey.intro")):
        return
    with st.container(border=True):
        st.caption(t("journey.intro"))
        c = st.columns([1, 2])
        which = c[0].selectbox(t("journey.run"), range(len(runs)), format_func=names.__getitem__,
                               key=f"{page}.follow.run") if len(runs) > 1 else 0
        run = runs[which]
        ids = list(run.recorder.requests)
        if not ids:
            return
        rid = c[1].selectbox(t("journey.pick"), ids, index=ids.index(_telling(run)), key=f"{page}.follow.{run.label}",
                             help=t("journey.pick_help"))
        stages = over_run(run, f"journey:{rid}", lambda: journey(run.snapshots, rid))
        steps = over_run(run, "steps", lambda: [s.step for s in run.snapshots])
        mode = run.config.preemption_mode
        html_view(run, frame, ("journey", lang(), rid),
                  lambda i: journey_frame_html(rid, stages, steps, i, mode, run.done), f"{page}.journey.{run.label}")


def _telling(run: LiveRun) -> str:
    """The request to show first: the first one preempted, else the one that waited longest before its first
    step (the first of equals)."""
    requests = run.recorder.requests
    preempted = next((rid for rid, r in requests.items() if r.num_preemptions), None)
    if preempted:
        return preempted

    def waited(r) -> int:
        return (r.first_scheduled_step - r.arrival_step) if r.first_scheduled_step is not None else -1
    return max(requests, key=lambda rid: waited(requests[rid]))


def stage_text(s: Stage, preemption_mode: str = "recompute") -> str:
    """What happened to the request in a stage, in words, with its figures."""
    if s.state == "waiting":
        w = s.wait
        return t(f"wait.{w.code}", have=w.have, need=w.need, behind=w.behind) if w else t("journey.waiting")
    blocks = (t("journey.blocks_kept", n=s.blocks_after) if s.blocks_before == s.blocks_after
              else t("journey.blocks_grew", before=s.blocks_before, after=s.blocks_after))
    if s.state == "prefill":
        steps = s.last - s.first + 1
        text = (t("journey.prefill_one", tokens=s.tokens) if steps == 1
                else t("journey.prefill", tokens=s.tokens, steps=steps)) + blocks
    elif s.state == "decode":
        text = t("journey.decode", tokens=s.tokens) + blocks
    elif s.state == "held":
        text = t("held")
    elif s.state == "preempted":
        text = t(f"journey.preempted.{preemption_mode}", blocks=s.blocks_before)
    else:
        text = t("journey.finished", blocks=s.blocks_before)
    return text + (t("journey.shared", n=s.shared) if s.shared else "")


def journey_frame_html(rid: str, stages: list[Stage], steps: list[int], frame: int, preemption_mode: str,
                       done: bool) -> str:
    """The journey at the player's frame: the strip with the frame's step marked, and the stages in words, the
    one the frame is in marked as current."""
    if not stages:
        return f"<div>{escape(t('journey.not_yet', rid=rid))}</div>"
    now = steps[min(frame, len(steps) - 1)] if steps else None
    first, last = (steps[0], steps[-1]) if steps else (stages[0].first, stages[-1].last)

    def title_of(s: Stage) -> str:
        return f"{_steps(s)} · {t(f'journey.state.{s.state}')}: {stage_text(s, preemption_mode)}"
    rows = [[_steps(s) + (" ◀" if now is not None and s.first <= now <= s.last else ""),
             t(f"journey.state.{s.state}"), stage_text(s, preemption_mode)] for s in stages]
    ended = stages[-1].state == "finished"
    note = "" if ended or done else f"<div>{escape(t('journey.so_far'))}</div>"
    return (journey_html(stages, first, last, now, title_of, t("journey.strip", rid=rid))
            + f'<div style="font-size:0.8rem">{escape(t("journey.legend"))}</div>' + note
            + html_table([t("journey.steps"), t("journey.state"), t("journey.what")], rows))


def _steps(s: Stage) -> str:
    return str(s.first) if s.first == s.last else f"{s.first}–{s.last}"
