"""The player: play / pause / step / step back / scrub / speed over recorded frames.

Runs are recorded, so going back costs nothing; in live mode, playing past the last recorded
frame steps the engines. The views redraw inside a fragment that reruns every `interval`
seconds while playing (no `while` loops), so the rest of the page stays put. A page whose views can
animate themselves plays recorded runs in the browser (ui/playback/client_player.py): ended runs whole, shared
runs still computed in the background a chunk of steps at a time.
"""
from __future__ import annotations

import math
import os
import time
from typing import TYPE_CHECKING, Callable

import streamlit as st

from ui.playback import client_player
from ui.playback.counter import position
from ui.shell import a11y
from ui.shell.i18n import lang, t
from ui.shell.keys import ANIMATING
from ui.shell.style import reduced_motion

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


SPEEDS = ("auto", 2, 5, 10, 20, 50, 100)  # engine steps per second; auto: the whole run in about LECTURE_S
LECTURE_S = 25  # auto plays ended runs in about this long: a lecture's pause, not two minutes of 1,196 steps
AUTO_SPEED = 10  # auto's speed while the runs are still computed (their length is not known yet), and its least
# Recorded runs play in the browser (ui/playback/client_player.py); SERVING_LAB_BROWSER_PLAYBACK=0 makes the server draw
# every frame instead (what a live run always does).
BROWSER_PLAYBACK = os.environ.get("SERVING_LAB_BROWSER_PLAYBACK", "1") != "0"
BASE_INTERVAL = 0.05  # at most 20 redraws a second
WAIT_S = 2.0  # while shared runs are computed in the background, a paused page looks this often
# A run still being computed plays in the browser in chunks that end at 16, 32, 64, then every 64 steps: the
# first comes soon after the press, and sessions pressing meanwhile share one encoding per chunk. (Chunks that
# doubled, 128, 256 ..., needed the computation twice as far ahead as the playback, or the browser waited.)
FIRST_CHUNK, CHUNK = 16, 64
CHUNK_WAIT_S = 0.5  # playing such a run, the browser has shown every step taken so far: look this often
CHUNK_POLL_S = 1.0  # playing such a run, the browser has steps left to show: look this often for the next chunk,
# and send it this long before the browser runs out (under load, the look and the fetch take a while)
CHUNK_LEAD_S = 4.0
SPEED_WIDTH = 215  # pixels: "Auto (48 steps/s)" at instructor mode's type size
JUMP_WIDTH = 250  # pixels: "First preemption: step 1,035"


def _k(page: str, name: str) -> str:
    return f"{page}.{name}"


def speed(page: str, runs: list[LiveRun]) -> int:
    """Steps a second: the one chosen, or auto's (ended runs in about LECTURE_S, at least AUTO_SPEED)."""
    chosen = st.session_state.get(_k(page, "speed"), "auto")
    if chosen != "auto":
        return chosen
    return max(AUTO_SPEED, math.ceil(_last_frame(runs) / LECTURE_S)) if all(r.done for r in runs) else AUTO_SPEED


def reset(page: str) -> None:
    """A new experiment: back to frame 0, paused, nothing of it seen yet."""
    st.session_state[_k(page, "frame")] = 0
    st.session_state[_k(page, "playing")] = False
    st.session_state[_k(page, "seen")] = 0


def _saw(page: str) -> None:
    """The frame about to be drawn is seen (seen_so_far)."""
    ss = st.session_state
    ss[_k(page, "seen")] = max(ss.get(_k(page, "seen"), 0), ss[_k(page, "frame")])


def seen_so_far(page: str) -> int:
    """The furthest frame the player has shown of the page's runs (what a prediction may already have seen)."""
    return st.session_state.get(_k(page, "seen"), 0)


def show_end(page: str, runs: list[LiveRun]) -> None:
    """Recorded runs opened at their last step, paused: the whole timeline in sight, to scrub back from."""
    st.session_state[_k(page, "frame")] = _last_frame(runs)
    st.session_state[_k(page, "playing")] = False


def _last_frame(runs: list[LiveRun]) -> int:
    return max(0, max(r.frames for r in runs) - 1)


def _seek(page: str, runs: list[LiveRun], frame: int) -> None:
    for r in runs:
        r.ensure(frame)
    st.session_state[_k(page, "frame")] = max(0, min(frame, _last_frame(runs)))
    _pause(page)


def _pause(page: str) -> None:
    st.session_state[_k(page, "playing")] = False
    st.session_state.pop(_k(page, "browser_clock"), None)


def _sync(page: str) -> None:
    """Playing in the browser, the server's frame is the one it started from: read the clock instead."""
    ss = st.session_state
    clock = ss.get(_k(page, "browser_clock"))
    if clock is not None and ss.get(_k(page, "playing")):
        ss[_k(page, "frame")] = client_player.frame_at(clock)


def _once(callback):
    """A click on a player button during playback can be handled twice: by a timer-driven fragment rerun and by
    the page rerun it causes (on a loaded server, more than half a second apart: ▶/⏸ say what they do, `_toggle`).
    Within half a second of a click made during playback, another is ignored; paused, every click counts."""
    def guarded(page: str, *args):
        ss, now = st.session_state, time.monotonic()
        if now - ss.get(_k(page, "played_click_at"), -1.0) < 0.5:
            return
        if ss[_k(page, "playing")]:
            ss[_k(page, "played_click_at")] = now
        _sync(page)
        callback(page, *args)
    return guarded


def _toggle(page: str, runs: list[LiveRun], play: bool) -> None:
    """Play or pause, as the button showed when clicked (`play`): a click handled twice does the same twice and
    never undoes itself. The click reruns the page, which redefines the fragment's timer."""
    ss = st.session_state
    if not play:
        return _pause(page)
    if ss[_k(page, "playing")]:
        return
    if ss[_k(page, "frame")] >= _last_frame(runs) and all(r.done for r in runs):
        ss[_k(page, "frame")] = 0  # play again from the start
    ss[_k(page, "playing")] = True
    ss.pop(_k(page, "clock"), None)
    ss.pop(_k(page, "browser_clock"), None)


def _scrub(page: str, runs: list[LiveRun]) -> None:
    # While playing the slider is hidden and its state dropped; a timer rerun can still carry the
    # browser's old slider value, which would look like a scrub to frame 0 and stop the playback.
    if st.session_state[_k(page, "playing")]:
        return
    _seek(page, runs, st.session_state[_k(page, "slider")])


def _interval(page: str, runs: list[LiveRun]) -> float:
    cost = st.session_state.get(_k(page, "cost"), 0.0)  # measured seconds per redraw
    return max(BASE_INTERVAL, 1.0 / speed(page, runs), 1.3 * cost)


def _advance(page: str, runs: list[LiveRun]) -> int:
    """The frame the wall clock says we should show: late redraws skip ahead, so the speed holds."""
    ss = st.session_state
    pace, now, frame = speed(page, runs), time.perf_counter(), ss[_k(page, "frame")]
    clock = ss.get(_k(page, "clock"))
    if clock is None or clock[2] != pace:  # (start time, start frame, speed): restart on play or new speed
        clock = ss[_k(page, "clock")] = (now, frame, pace)
    target = max(frame + 1, clock[1] + int((now - clock[0]) * pace))
    for r in runs:
        # a run computed in the background is not waited for: the player holds at its newest step
        if not r.in_background:
            r.ensure(target)
    last = _last_frame(runs)
    if target >= last and all(r.done for r in runs):
        target = last
        _pause(page)
        ss[_k(page, "rerun_app")] = True  # the fragment's timer stops only when the page reruns
    return min(target, last)


def landmarks(runs: list[LiveRun]) -> dict[str, int]:
    """The frame each landmark (engine.lab.recorder.LANDMARKS) first happened in, in any of the runs (so far, for
    runs still computed), the earliest first."""
    firsts: dict[str, int] = {}
    for r in runs:
        for kind, frame in r.recorder.firsts.items():
            firsts[kind] = min(frame, firsts.get(kind, frame))
    return dict(sorted(firsts.items(), key=lambda kv: kv[1]))


def _jump(page: str, runs: list[LiveRun], jumps: dict[str, int]) -> None:
    """To the chosen landmark's frame, paused; the box reads "Jump to…" again (set to None: a dropped value is kept)."""
    kind, st.session_state[_k(page, "jump_to")] = st.session_state.get(_k(page, "jump_to")), None
    if kind in jumps:
        _seek(page, runs, jumps[kind])


def _seek_by(page: str, runs: list[LiveRun], delta: int) -> None:
    _seek(page, runs, st.session_state[_k(page, "frame")] + delta)


def player(page: str, runs: list[LiveRun], render: Callable[[int], None], in_browser: bool = False) -> None:
    """Draw the controls and `render(frame)`, animated while playing.

    The buttons live outside the animated fragment (they change only when playing starts or
    stops, which reruns the page anyway); the fragment redraws the counter and the views.
    `in_browser`: every view `render` draws can animate itself (it reads client_player.current());
    a page of ended runs then plays in the browser."""
    ss = st.session_state
    ss.setdefault(_k(page, "frame"), 0)
    ss.setdefault(_k(page, "playing"), False)
    ss.setdefault(_k(page, "speed"), "auto")
    for r in runs:
        r.ensure(0)
    # the clock marks views as animated; a run stopped mid-draw by a click must not leave it to the next
    ss.pop(client_player.CLOCK, None)
    if ss[_k(page, "playing")] and reduced_motion():
        # reduce motion: ▶ shows where the runs have got to at once, no frames in between; nothing moves on its own
        _seek(page, runs, _last_frame(runs))
    _saw(page)
    playing, ended = ss[_k(page, "playing")], all(r.done for r in runs)
    to_browser = in_browser and BROWSER_PLAYBACK
    computing = any(r.in_background and not r.done for r in runs)
    holding = False  # playing, but the browser has played every step taken so far
    if playing and to_browser:
        ready, clock = _ready(runs), ss.get(_k(page, "browser_clock"))
        at = client_player.frame_at(clock) if clock else ss[_k(page, "frame")]
        if ready > at:
            _play_in_browser(page, runs, render, ready)
            return
        ss[_k(page, "frame")] = at
        ss.pop(_k(page, "browser_clock"), None)
        # a shared run: wait (cheaply) for its next chunk; a live run: the server steps and plays it
        holding = bool(computing)
    controls(page, runs)
    waiting = computing and (holding or not playing)  # for shared runs computed in the background
    ss[_k(page, "interval_used")] = _interval(page, runs)
    ss[_k(page, "defined_at")] = time.perf_counter()

    @st.fragment(run_every=ss[_k(page, "interval_used")] if playing and not holding else None)
    def animated():
        if ss.pop(_k(page, "rerun_app"), False):
            st.rerun()
        started = time.perf_counter()
        if ss[_k(page, "playing")]:
            ss[_k(page, "frame")] = _advance(page, runs)
            if ss[_k(page, "playing")] and not ended and all(r.done for r in runs):
                st.rerun()  # the runs have ended: what needs whole runs appears, and the rest plays in the browser
        last = _last_frame(runs)
        frame = min(ss[_k(page, "frame")], last)
        ss[_k(page, "frame")] = frame
        _saw(page)
        if waiting:  # the counter is the one progress read-out: it polls on its own, the views stay as drawn
            st.fragment(_await, run_every=CHUNK_WAIT_S if holding else WAIT_S)(page, runs, holding)
        else:
            position(page, runs, frame, last)
        ss[ANIMATING] = ss[_k(page, "playing")]
        render(frame)
        cost = time.perf_counter() - started
        ss[_k(page, "cost")] = 0.7 * ss.get(_k(page, "cost"), cost) + 0.3 * cost
        if ss[_k(page, "playing")] and _clock_is_off(page, runs):
            st.rerun()  # redefine the fragment with an interval the redraws can keep

    animated()


def _await(page: str, runs: list[LiveRun], holding: bool) -> None:
    """Runs still being computed (shared, in the background): the counter, with how far the engine has got,
    and the page again once they have all ended (what needs a whole run, a measured value or the downloads,
    appears then) or, while playing, once the next chunk can play in the browser. Polls without redrawing
    the views, so forty students waiting cost the server next to nothing."""
    frame = st.session_state[_k(page, "frame")]
    if all(r.done for r in runs) or (holding and _ready(runs) > frame):
        st.rerun()
    last = _last_frame(runs)
    position(page, runs, min(frame, last), last)


def _ready(runs: list[LiveRun]) -> int:
    """The last frame the browser can play: every frame of ended runs; of shared runs still computed in
    the background, the steps taken so far, to the end of the last whole chunk (-1: none yet, or a live
    run, which only the server can step)."""
    if all(r.done for r in runs):
        return _last_frame(runs)
    if not all(r.done or r.in_background for r in runs):
        return -1
    steps = min(r.frames for r in runs if not r.done)
    if steps < FIRST_CHUNK:
        return -1
    if steps < CHUNK:
        return (FIRST_CHUNK << (steps // FIRST_CHUNK).bit_length() - 1) - 1  # 16, 32 steps
    return steps // CHUNK * CHUNK - 1  # 64, 128, 192 ... steps


def _play_in_browser(page: str, runs: list[LiveRun], render: Callable[[int], None], ready: int) -> None:
    """Draw the page once with every frame up to `ready`. Of ended runs, one rerun when the clock reaches
    the end turns ⏸ back into ▶; of runs still being computed, the views get the next chunk a few seconds
    before the browser has played this one (`_extend`: the clock goes on from the frame the browser shows,
    and only a small script is sent), so playback does not stop at a chunk's end. No timer reruns the
    views: a watching student costs the server next to nothing."""
    ss = st.session_state
    clock = ss.get(_k(page, "browser_clock"))
    if clock is None or clock["speed"] != speed(page, runs) or ready > clock["last"]:
        # pressed play, a new speed, or the next chunk (sent while the browser still plays this one)
        start = ss[_k(page, "frame")] if clock is None else client_player.frame_at(clock)
        clock = ss[_k(page, "browser_clock")] = client_player.new_clock(start, speed(page, runs), ready)
    frame = ss[_k(page, "frame")] = client_player.frame_at(clock)
    last = clock["last"]
    # read before drawing: runs that end while the page is drawn leave a counter with "…" on it, and the
    # look below must then still see them end and redraw the page
    computing = not all(r.done for r in runs)
    controls(page, runs)
    ss[ANIMATING] = True
    ss[client_player.CLOCK] = clock
    ss[client_player.VIEWS] = {}  # the views drawn below say how their frames are made (for `_extend`)
    drawn = ss[_k(page, "drawn_clock")] = clock["id"]
    try:
        with st.container():  # one block where the paused page has its fragment's: a rerun replaces it in place
            position(page, runs, frame, last)
            render(frame)
    finally:
        del ss[client_player.CLOCK]

    # ended runs: one rerun when the clock reaches the end; runs still computed: a look every CHUNK_POLL_S,
    # and the next chunk CHUNK_LEAD_S before this one has played out (not at once: forty students asking at
    # every chunk computed would keep the server from computing), sent without drawing the page again
    @st.fragment(run_every=CHUNK_POLL_S if computing else client_player.seconds_left(clock) + 0.3)
    def the_end():
        now = ss.get(_k(page, "browser_clock"))
        if not (ss[_k(page, "playing")] and now and ss.get(_k(page, "drawn_clock")) == drawn):
            return  # paused, or drawn again since
        if computing:  # the browser holds at the chunk's last step by itself until the next one comes
            ready = _ready(runs)
            if all(r.done for r in runs):
                st.rerun()  # the runs have ended: what needs whole runs appears, and the rest plays on
            if client_player.seconds_left(now) <= CHUNK_LEAD_S and ready > now["last"]:
                now = _extend(page, ready)
            if ready < 0 and client_player.frame_at(now) >= now["last"]:
                st.rerun()  # the background computation stopped (it failed): the server steps the runs on
            # hidden (ui/shell/style.py); the same message again is ignored
            st.html(client_player.extension_body(now, ss[_k(page, "chunk_urls")]) if now["id"] != drawn
                    else client_player.NEXT_CHUNK_MARK, unsafe_allow_javascript=True)
        elif client_player.frame_at(clock) >= last:
            ss[_k(page, "frame")] = last
            if last >= _last_frame(runs) and all(r.done for r in runs):
                _pause(page)
            st.rerun()  # paused at the end

    the_end()


def _extend(page: str, ready: int) -> dict:
    """The next chunk of a run still computed, up to frame `ready`: a clock that goes on from the frame the
    browser shows (the same line: the page's views follow it), and every animated view's frames under it
    (built once for every session, ui/playback/client_player.py)."""
    ss = st.session_state
    old = ss[_k(page, "browser_clock")]
    clock = ss[_k(page, "browser_clock")] = client_player.new_clock(client_player.frame_at(old), old["speed"], ready,
                                                                    line=old["line"])
    ss[_k(page, "chunk_urls")] = client_player.extended(clock)
    return clock


def _clock_is_off(page: str, runs: list[LiveRun]) -> bool:
    """The redraw cost drifted far from what run_every was set for (at most every 2 s)."""
    ss = st.session_state
    used, wanted = ss[_k(page, "interval_used")], _interval(page, runs)
    settled = time.perf_counter() - ss[_k(page, "defined_at")] > 2.0
    return settled and not 0.75 * used <= wanted <= 1.25 * used


def controls(page: str, runs: list[LiveRun]) -> None:
    """One slim row: first, back, play/pause, step, speed and the scrub slider (labels as tooltips)."""
    ss = st.session_state
    frame, last, live = ss[_k(page, "frame")], _last_frame(runs), not all(r.done for r in runs)
    playing = ss[_k(page, "playing")]
    # a flex row: the buttons keep their natural width (at any font size), the slider takes the rest
    with st.container(key=f"{page}-player-controls", horizontal=True, gap="small", vertical_alignment="center"):
        st.button("⏮", key=_k(page, "first"), help=t("player.first"), on_click=_once(_seek), args=(page, runs, 0),
                  width="content")
        st.button("◀", key=_k(page, "back"), help=t("player.back"), on_click=_once(_seek_by), args=(page, runs, -1),
                  width="content")
        play_name = t("player.pause") if playing else t("player.play_reduced" if reduced_motion() else "player.play")
        st.button("⏸" if playing else "▶", key=_k(page, "play"), type="primary", help=play_name,
                  on_click=_once(_toggle), args=(page, runs, not playing), width="content")
        st.button("▶|", key=_k(page, "step"), help=t("player.step"), on_click=_once(_seek_by), args=(page, runs, 1),
                  disabled=frame >= last and not live and not playing, width="content")
        # the option labels carry the language, so the widget has a key per language and the speed itself
        # lives in session state: switching language mid-lecture keeps the speed
        speed_key, widget_key = _k(page, "speed"), f"{_k(page, 'speed')}@{lang()}"
        ss[widget_key] = ss[speed_key]
        auto = t("player.speed_auto", n=speed(page, runs), s=LECTURE_S)
        st.selectbox(t("player.speed"), SPEEDS, key=widget_key, label_visibility="collapsed",
                     format_func=lambda v: auto if v == "auto" else t("player.speed_value", n=v),
                     help=t("player.speed_help", s=LECTURE_S), width=SPEED_WIDTH,
                     on_change=lambda: ss.update({speed_key: ss[widget_key]}))
        jumps = landmarks(runs)
        st.selectbox(t("player.jump"), list(jumps), index=None, key=_k(page, "jump_to"), placeholder=t("player.jump"),
                     label_visibility="collapsed", help=t("player.jump_help"), disabled=not jumps,
                     format_func=lambda kind: t(f"player.jump.{kind}", frame=jumps[kind]), width=JUMP_WIDTH,
                     on_change=_once(_jump), args=(page, runs, jumps))
        if not playing:  # while playing there is no slider: a timer rerun could carry a stale position back
            ss[_k(page, "slider")] = min(frame, last)
            st.slider(t("player.scrub_with_steps"), 0, max(1, last), key=_k(page, "slider"), on_change=_scrub,
                      args=(page, runs), disabled=last == 0, label_visibility="collapsed", width="stretch")
    a11y.button_names({_k(page, "first"): t("player.first"), _k(page, "back"): t("player.back"),
                       _k(page, "play"): play_name, _k(page, "step"): t("player.step")})
    if live and not any(r.in_background for r in runs):
        st.caption(t("player.live_note"))
