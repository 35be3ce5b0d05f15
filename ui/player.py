"""The player: play / pause / step / step back / scrub / speed over recorded frames.

Runs are recorded, so going back costs nothing; in live mode, playing past the last recorded
frame steps the engines. The views redraw inside a fragment that reruns every `interval`
seconds while playing (no `while` loops), so the rest of the page stays put.
"""
from __future__ import annotations

import time
from typing import Callable

import streamlit as st

from engine.experiment import LiveRun
from ui.i18n import t

SPEEDS = (2, 5, 10, 20, 50, 100)  # engine steps per second
BASE_INTERVAL = 0.1  # seconds between redraws at most 10 frames/s


def _k(page: str, name: str) -> str:
    return f"{page}.{name}"


def reset(page: str) -> None:
    """A new experiment: back to frame 0, paused."""
    st.session_state[_k(page, "frame")] = 0
    st.session_state[_k(page, "playing")] = False


def _last_frame(runs: list[LiveRun]) -> int:
    return max(0, max(r.frames for r in runs) - 1)


def _seek(page: str, runs: list[LiveRun], frame: int) -> None:
    for r in runs:
        r.ensure(frame)
    st.session_state[_k(page, "frame")] = max(0, min(frame, _last_frame(runs)))
    _pause(page)


def _pause(page: str) -> None:
    if st.session_state.get(_k(page, "playing")):
        st.session_state[_k(page, "playing")] = False
        st.session_state[_k(page, "rerun_app")] = True  # run_every is set when the fragment is defined


def _toggle(page: str, runs: list[LiveRun]) -> None:
    ss = st.session_state
    if ss[_k(page, "playing")]:
        _pause(page)
        return
    if ss[_k(page, "frame")] >= _last_frame(runs) and all(r.done for r in runs):
        ss[_k(page, "frame")] = 0  # play again from the start
    ss[_k(page, "playing")] = True
    ss[_k(page, "rerun_app")] = True


def _scrub(page: str, runs: list[LiveRun]) -> None:
    _seek(page, runs, st.session_state[_k(page, "slider")])


def _interval(page: str) -> float:
    speed = st.session_state.get(_k(page, "speed"), 10)
    cost = st.session_state.get(_k(page, "cost"), 0.0)  # measured seconds per redraw
    return max(BASE_INTERVAL, 1.0 / speed, 1.3 * cost)


def _advance(page: str, runs: list[LiveRun]) -> int:
    ss = st.session_state
    per_tick = max(1, round(ss.get(_k(page, "speed"), 10) * _interval(page)))
    target = ss[_k(page, "frame")] + per_tick
    for r in runs:
        r.ensure(target)
    last = _last_frame(runs)
    if target >= last and all(r.done for r in runs):
        target = last
        _pause(page)
    return min(target, last)


def player(page: str, runs: list[LiveRun], render: Callable[[int], None]) -> None:
    """Draw the controls and `render(frame)`, animated while playing."""
    ss = st.session_state
    ss.setdefault(_k(page, "frame"), 0)
    ss.setdefault(_k(page, "playing"), False)
    ss.setdefault(_k(page, "speed"), 10)
    for r in runs:
        r.ensure(0)
    playing = ss[_k(page, "playing")]

    @st.fragment(run_every=_interval(page) if playing else None)
    def animated():
        if ss.pop(_k(page, "rerun_app"), False):
            st.rerun()
        started = time.perf_counter()
        if ss[_k(page, "playing")]:
            ss[_k(page, "frame")] = _advance(page, runs)
        last = _last_frame(runs)
        frame = min(ss[_k(page, "frame")], last)
        ss[_k(page, "frame")] = frame
        ss[_k(page, "slider")] = frame
        controls(page, runs, frame, last)
        render(frame)
        cost = time.perf_counter() - started
        ss[_k(page, "cost")] = 0.7 * ss.get(_k(page, "cost"), cost) + 0.3 * cost
        if ss[_k(page, "playing")] and ss[_k(page, "cost")] > 1.2 * _interval(page) and not ss.get(_k(page, "slowed")):
            ss[_k(page, "slowed")] = True  # redraws are slower than the clock: redefine the fragment once
            st.rerun()

    animated()


def controls(page: str, runs: list[LiveRun], frame: int, last: int) -> None:
    ss = st.session_state
    live = not all(r.done for r in runs)
    cols = st.columns([1, 1, 1.3, 1, 1.8, 7, 2.2], vertical_alignment="bottom")
    cols[0].button("⏮", key=_k(page, "first"), help=t("player.first"), on_click=_seek, args=(page, runs, 0))
    cols[1].button("◀", key=_k(page, "back"), help=t("player.back"), on_click=_seek, args=(page, runs, frame - 1))
    playing = ss[_k(page, "playing")]
    cols[2].button("⏸" if playing else "▶", key=_k(page, "play"), type="primary",
                   help=t("player.pause") if playing else t("player.play"), on_click=_toggle, args=(page, runs))
    cols[3].button("▶|", key=_k(page, "step"), help=t("player.step"), on_click=_seek, args=(page, runs, frame + 1),
                   disabled=frame >= last and not live)
    cols[4].selectbox(t("player.speed"), SPEEDS, key=_k(page, "speed"), format_func={s: f"{s} {t('player.per_s')}" for s in SPEEDS}.get,
                      on_change=lambda: ss.pop(_k(page, "slowed"), None))
    cols[5].slider(t("player.scrub"), 0, max(1, last), key=_k(page, "slider"), on_change=_scrub, args=(page, runs),
                   disabled=last == 0)
    with cols[6].container(key=f"{page}-frame-counter"):
        st.metric(t("player.frame"), f"{frame} / {last}{' …' if live else ''}")
    if live:
        st.caption(t("player.live_note"))

