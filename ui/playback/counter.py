"""The player's frame counter: one slim line with a progress bar, "step 12 / 345", and while the runs are still
computed, how far the engine has got. Played in the browser, every frame of it is encoded once for every session."""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import streamlit as st

from ui.playback import client_player, frame_files
from ui.shell.i18n import t

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


def position(page: str, runs: list[LiveRun], frame: int, last: int) -> None:
    """The frame counter with a progress bar, one slim line, redrawn with every frame. While the runs are still
    computed it says so, and how far the engine has got: the step it is at, which is the counter's total, and grows."""
    label = t("player.frame")
    live = "" if all(r.done for r in runs) else t("player.computing", step=last)
    with st.container(key=f"{page}-frame-counter"):
        if client_player.current() is None:
            st.html(_position_html(frame, last, live, label))
        else:
            # the frames sent with a later chunk say how far the engine had got by then, not what it said at ▶
            client_player.html_view(f"{page}.counter", lambda: _counter_frames(
                (ready := client_player.current()["last"]), live and t("player.computing", step=ready), label),
                _position_html(frame, last, live, label))


@functools.lru_cache(maxsize=256)
def _counter_frames(last: int, live: str, label: str) -> str:
    """Every frame of the counter, encoded once for every session (a page reran for each played it): the
    URL of their file."""
    frames = client_player.encode([_position_html(f, last, live, label) for f in range(last + 1)])
    return frame_files.publish(client_player.to_json(frames))


def _position_html(frame: int, last: int, live: str, label: str) -> str:
    """`live`: what the counter says of runs still computed (empty once they have ended)."""
    share = 100 * frame / max(1, last)
    computing = f' <span class="lab-frame-computing">{live}</span>' if live else ""
    return (f'<div class="lab-frame"><div class="lab-frame-bar"><div style="width:{share:.1f}%"></div></div>'
            f'<span class="lab-frame-label">{label}</span> '
            f'<span class="lab-frame-value">{frame} / {last}{" …" if live else ""}</span>{computing}</div>')
