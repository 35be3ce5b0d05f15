"""Follow a request: pick one request of a run and see its journey (engine/lab/journey.py): when it waited and
why, when it entered the batch (its prefill, in chunks), decoded, was preempted, came back and finished, and how
many blocks its block table held, on the run's step axis with the player's step marked; the same in words, a row
per stage, for the keyboard and screen readers."""
from __future__ import annotations

from bisect import bisect_right
from html import escape
from typing import TYPE_CHECKING

import streamlit as st

from engine.lab.journey import STATES, Step, stages as grouped, stages_so_far, steps_of
from lessons import load_moments
from ui.playback.player import seen_so_far
from ui.shell.i18n import choice, lang, t
from ui.views.base import html_table, html_view, over_run
from ui.views.words import wait_text
from viz.html import journey_html

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun
    from engine.lab.journey import Stage

NEXT = STATES  # what a student may predict for the next step: each state the engine records


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
        first = _asked_about(page, run) or _telling(run)
        rid = c[1].selectbox(t("journey.pick"), ids, index=ids.index(first), key=f"{page}.follow.{run.label}",
                             help=t("journey.pick_help"))
        its_steps = over_run(run, f"journey:{rid}", lambda: steps_of(run.snapshots, rid))
        so_far = over_run(run, f"journey-so-far:{rid}", lambda: stages_so_far(its_steps))
        steps = over_run(run, "steps", lambda: [s.step for s in run.snapshots])
        mode = run.config.preemption_mode
        html_view(run, frame, ("journey", lang(), rid),
                  lambda i: journey_frame_html(rid, so_far, steps, i, mode), f"{page}.journey.{run.label}")
        if steps:
            predict_next(f"{page}.predict.{run.label}", rid, its_steps, steps[min(frame, len(steps) - 1)], mode,
                         seen_so_far(page))


def keep_first(record: dict, rid: str, step: int, guess: str, right: bool, before_seeing: bool) -> None:
    """A prediction into the session's record: the first one at a request's step is the one that counts (checking
    again after the answer is shown changes nothing)."""
    record.setdefault((rid, step), (guess, right, before_seeing))


def tally(record: dict) -> tuple[int, int]:
    """(predictions made before the player had shown their step, how many of those were right)."""
    made = [right for _, right, before in record.values() if before]
    return len(made), sum(made)


def predict_next(key: str, rid: str, its_steps: list[Step], now: int, preemption_mode: str, seen: int = -1) -> None:
    """Paused at step `now`: the student predicts what the engine does to the request at the next step, and the
    engine's recorded next step says whether it was right, and what it did. A prediction counts as made before
    seeing only while the player has never been past `now` (`seen`: the furthest step it has shown these runs); the
    first one at each step is kept in the session, and the tally of those is shown."""
    by_step = {s.step: s for s in its_steps}
    after = by_step.get(now + 1)
    if after is None:
        st.caption(t("journey.no_next", rid=rid, step=now + 1))
        return
    before_seeing = seen <= now
    with st.form(key, border=False):
        guess = choice(st.radio, t("journey.predict", rid=rid, step=now + 1), NEXT, f"{key}.guess", "journey.next.",
                       horizontal=True, index=None)
        checked = st.form_submit_button(t("journey.check"))
    if not before_seeing:
        st.caption(t("journey.seen_already", seen=seen, step=now + 1))
    record = st.session_state.setdefault(f"{key}.record", {})
    if checked and guess is not None:
        st.session_state[f"{key}.said"] = (rid, now + 1, guess)
        keep_first(record, rid, now + 1, guess, guess == after.state, before_seeing)
    made, right = tally(record)
    if made:
        st.caption(t("journey.tally", made=made, right=right))
    said = st.session_state.get(f"{key}.said")
    if said and said[:2] == (rid, now + 1):
        held = len(by_step[now].blocks) if now in by_step else 0
        sep = "：" if lang() == "zh" else ": "
        did = t(f"journey.next.{after.state}") + sep + stage_text(grouped([after], held)[0], preemption_mode)
        if said[2] == after.state:
            st.success(t("journey.right", step=now + 1, did=did))
        else:
            st.error(t("journey.wrong", step=now + 1, did=did, guess=t(f"journey.next.{said[2]}")))


def _asked_about(page: str, run: LiveRun) -> str | None:
    """The request the page's lecture moment asks about, in the run it asks about (None: it asks about none)."""
    moment = load_moments().get(st.session_state.get(f"{page}.moment") or "")
    p = moment.predict if moment else {}
    rid = p.get("request")
    return rid if rid in run.recorder.requests and run.label in (p.get("runs") or ()) else None


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
        return wait_text(w) if w else t("journey.waiting")
    blocks = (t("journey.blocks_kept", n=s.blocks_after) if s.blocks_before == s.blocks_after
              else t("journey.blocks_grew", before=s.blocks_before, after=s.blocks_after))
    if s.state == "prefill":
        steps = s.last - s.first + 1
        text = (t("journey.prefill_one", tokens=s.tokens) if steps == 1
                else t("journey.prefill", tokens=s.tokens, steps=steps)) + blocks
    elif s.state == "decode":
        text = (t("journey.decode_one") if s.tokens == 1 else t("journey.decode", tokens=s.tokens)) + blocks
    elif s.state == "held":
        text = t("held")
    elif s.state == "preempted":
        text = t(f"journey.preempted.{preemption_mode}", blocks=s.blocks_before)
    else:
        text = t("journey.finished", blocks=s.blocks_before)
    return text + (t("journey.shared", n=s.shared) if s.shared else "")


def journey_frame_html(rid: str, so_far: dict[int, tuple[Stage, ...]], steps: list[int], frame: int,
                       preemption_mode: str) -> str:
    """The journey as far as the player's frame (`so_far`: engine.lab.journey.stages_so_far): the strip with the
    frame's step marked, and the stages in words, the one the frame is in marked as current. Nothing after the frame
    is shown, so what the request does next is for the student to predict, not to read."""
    now = steps[min(frame, len(steps) - 1)] if steps else None
    known = list(so_far)  # its steps, in order
    at = len(known) if now is None else bisect_right(known, now)
    if not at:
        return f"<div>{escape(t('journey.not_yet', rid=rid))}</div>"
    stages = so_far[known[at - 1]]
    first, last = (steps[0], steps[-1]) if steps else (stages[0].first, stages[-1].last)

    def title_of(s: Stage) -> str:
        return f"{_steps(s)} · {t(f'journey.state.{s.state}')}: {stage_text(s, preemption_mode)}"
    rows = [[_steps(s) + (" ◀" if now is not None and s.first <= now <= s.last else ""),
             t(f"journey.state.{s.state}"), stage_text(s, preemption_mode)] for s in stages]
    going_on = stages[-1].state != "finished" and (now is None or stages[-1].last >= now)  # not ended another way
    note = f"<div>{escape(t('journey.so_far'))}</div>" if going_on else ""
    return (journey_html(list(stages), first, last, now, title_of, t("journey.strip", rid=rid))
            + f'<div style="font-size:0.8rem">{escape(t("journey.legend"))}</div>' + note
            + html_table([t("journey.steps"), t("journey.state"), t("journey.what")], rows))


def _steps(s: Stage) -> str:
    return str(s.first) if s.first == s.last else f"{s.first}–{s.last}"
