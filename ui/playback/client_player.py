"""Recorded runs play in the browser: the server draws the page once, and the browser animates it.

Server-side playback redraws every view on the server for every frame (~7 ms at 64 slots x 512
blocks, up to 20 times a second per student). Once every run on a page has ended, nothing new can
happen, so pressing play draws each animated view once with all its frames and a clock (when
playback started, from which frame, at what speed); the browser picks the frame from the clock
(ui/playback/client_player.js for HTML views, ui/playback/live_chart.html for charts). The frames of a run are encoded
once, into a file every browser showing the run fetches (ui/playback/frame_files.py; its URL is kept with the run,
ui/playback/derived.py, shared by every session); a session's page carries only the URL.
Pause, step and scrub still go to the server, which reads the frame off the same clock.

A shared run still being computed in the background (ui/playback/run_cache.py) plays the same way, in chunks:
the clock runs up to the steps taken so far (rounded down to whole chunks, so the sessions pressing
meanwhile share one encoding, which grows by each chunk's new frames), and a few seconds before its
end the views get the next chunk's clock and files without a page run (`extended`, ui/playback/player.py).
"""
from __future__ import annotations

import json
import threading
import time
import uuid
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import streamlit as st

from ui.playback import frame_files
from ui.playback.derived import derived

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


CLOCK = "player.client"  # session key: the clock, set only while the player draws a page that plays in the browser
DRIVER = Path(__file__).with_name("client_player.js").read_text()


VIEWS = "player.client_views"  # session key: each animated view of the page playing now -> how its frames are made


def new_clock(frame: int, speed: int, last: int, line: str | None = None) -> dict:
    """`line`: the clock this one extends (the next chunk of a run still computed), whose views follow it."""
    clock_id = uuid.uuid4().hex[:12]
    return {"id": clock_id, "line": line or clock_id, "t0": time.time(), "start": frame, "speed": speed, "last": last}


def frame_at(clock: dict, now: float | None = None) -> int:
    """The frame the browser shows now (ui/playback/client_player.js computes the same)."""
    elapsed = (time.time() if now is None else now) - clock["t0"]
    return min(clock["last"], clock["start"] + int(max(0.0, elapsed) * clock["speed"]))


def seconds_left(clock: dict) -> float:
    return max(0.0, (clock["last"] - clock["start"]) / clock["speed"] - (time.time() - clock["t0"]))


def current() -> dict | None:
    """The clock while the page being drawn plays in the browser, else None (draw one still frame)."""
    return st.session_state.get(CLOCK)


def clock_args(clock: dict) -> dict:
    """What the browser gets: how long ago playback started rather than when (its clock may be off)."""
    return {"id": clock["id"], "line": clock["line"], "start": clock["start"], "speed": clock["speed"],
            "last": clock["last"], "elapsed_ms": round(1000 * (time.time() - clock["t0"]))}


def playing(frames_url: str | None, clock: dict | None) -> dict | None:
    """What a live chart needs to play by itself (ui/playback/live_chart.py): None when a still frame is drawn."""
    return None if clock is None else {"frames": frames_url, "clock": clock_args(clock)}


class Encoder:
    """Per frame an HTML string, cut before each tag and de-duplicated: consecutive frames share most
    of their cells, so a run's frames cost a table of distinct pieces and a list of indices each.
    Frames are added as they come: a run still being computed encodes each new chunk's frames only."""

    def __init__(self):
        self._pieces: dict[str, int] = {}
        self._frames: list[list[int]] = []
        self._known: list[int] = []  # how many pieces the frames so far use, after each frame

    def __len__(self) -> int:
        return len(self._frames)

    def extend(self, strings) -> None:
        pieces = self._pieces
        for s in strings:
            head, *tags = s.split("<")
            self._frames.append([pieces.setdefault(p, len(pieces)) for p in [head] + ["<" + t for t in tags] if p])
            self._known.append(len(pieces))

    def first(self, n: int) -> dict:
        """The first n frames, as encode() of them gives them."""
        return {"pieces": list(self._pieces)[:self._known[n - 1]] if n else [], "frames": self._frames[:n]}


def encode(strings: list[str]) -> dict:
    encoder = Encoder()
    encoder.extend(strings)
    return encoder.first(len(encoder))


def decode(data: dict, frame: int) -> str:
    """One frame's HTML, as ui/playback/client_player.js rebuilds it."""
    return "".join(data["pieces"][k] for k in data["frames"][min(frame, len(data["frames"]) - 1)])


def to_json(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"))


def shown(run: LiveRun) -> int:
    """How many of the run's frames the page being drawn shows: all of them, or while the browser plays a
    run still being computed, those up to the clock's last frame (the steps taken when play started)."""
    clock = current()
    return run.frames if clock is None else min(run.frames, clock["last"] + 1)


PARTIAL_KEPT = 4  # encodings kept per view of a run still being computed (sessions play different chunks)


def run_frames(run: LiveRun, key: tuple, build: Callable[[], dict]) -> str:
    """A run's frames for one view (the first `shown(run)` of them): the URL of their file
    (ui/playback/frame_files.py), built once and shared by every session; kept with an ended run; for a run still
    being computed, the newest PARTIAL_KEPT builds (forty students ask for their next chunk at moments of
    their own, some a chunk behind: keeping one build only, they rebuilt it in turn)."""
    n, cache = shown(run), derived(run)
    if run.done and n == run.frames:
        cache.pop(("client-partial",) + key, None)  # the chunks' encodings are not asked for again
        key = ("client",) + key
    else:
        key = ("client-partial",) + key
    # forty students pressing play at once: the first builds, the others wait for it (dict.setdefault
    # is atomic, so they all take the same lock)
    with cache.setdefault(("client-lock",) + key, threading.Lock()):
        kept = cache.setdefault(key, {})
        if n not in kept:
            kept[n] = frame_files.publish(to_json(build()), owner=run)
            for old in sorted(kept)[:-PARTIAL_KEPT]:
                del kept[old]
        return kept[n]


def html_frames(run: LiveRun, key: tuple, frame_html: Callable[[int], str]) -> str:
    def build() -> dict:
        n, cache = shown(run), derived(run)
        with cache.setdefault(("encoder-lock",) + key, threading.Lock()):
            encoder = cache.setdefault(("encoder",) + key, Encoder())
            encoder.extend(frame_html(i) for i in range(len(encoder), n))
            if run.done and n == run.frames:  # the whole run, kept as JSON from now on
                cache.pop(("encoder",) + key)
            return encoder.first(n)
    return run_frames(run, key, build)


def animated(key: str, frames_url: Callable[[], str]) -> str:
    """The URL of view `key`'s frames under the clock now. `frames_url` is kept for the page playing: with
    the next chunk of a run still computed, the player asks every view for its frames again without
    drawing the page (ui/playback/player.py `_extend`)."""
    st.session_state.setdefault(VIEWS, {})[key] = frames_url
    return frames_url()


def extended(clock: dict) -> dict[str, str]:
    """Every animated view's frames under `clock` (the next chunk): view key -> URL."""
    ss = st.session_state
    ss[CLOCK] = clock
    try:
        return {key: make() for key, make in ss.get(VIEWS, {}).items()}
    finally:
        del ss[CLOCK]


NEXT_CHUNK_MARK = '<span hidden class="lab-next-chunk"></span>'  # the element carrying it is hidden (ui/shell/style.py)


def extension_body(clock: dict, urls: dict[str, str]) -> str:
    """A script that hands the views of the page (and its charts) the next chunk's clock and frames."""
    args = json.dumps([clock_args(clock), urls]).replace("<", "\\u003c")
    return f'{NEXT_CHUNK_MARK}<script>{DRIVER}\nwindow.__labAnim.extend(...{args});</script>'


def html_view(key: str, frames_url: Callable[[], str], html: str) -> None:
    """An HTML view that animates itself: `html` (the frame the server reads off the clock now) until
    the script has fetched its frames (`frames_url()`, see `animated`) and takes over."""
    st.html(view_body(key, animated(key, frames_url), html, current()), unsafe_allow_javascript=True)


def view_body(key: str, frames_url: str, html: str, clock: dict) -> str:
    # Streamlit sanitizes st.html with DOMPurify, which drops a <script> whose text looks like markup
    # ("<" then a letter, "/" or "!"): in JSON, "<" only appears inside strings, where \u003c is the same.
    args = json.dumps([key, clock_args(clock), frames_url]).replace("<", "\\u003c")
    return (f'<div data-anim="{escape(key)}" data-clock="{clock["id"]}">{html}</div><script>{DRIVER}\n'
            f'window.__labAnim.track(...{args});</script>')
