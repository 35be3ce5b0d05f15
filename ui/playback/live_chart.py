"""Animated charts that update in place.

st.plotly_chart rebuilds its chart whenever the figure changes: at 10 frames/s the chart is hidden
while the new one is measured, and it flickers. This tiny component (ui/playback/component.py) keeps one
Plotly div per chart and hands it each new frame with Plotly.react.
"""
from __future__ import annotations

from dataclasses import dataclass

import plotly.io as pio

from ui.playback.component import LIVE_CHART
from ui.shell.style import font_scale

FIT_RESERVE = 12  # pixels kept free below a fitted chart


def figure_json(fig) -> str:
    return pio.to_json(fig, validate=False)


@dataclass(frozen=True)
class Fit:
    """The chart fills the window's height below it, between `low` and `high` pixels, leaving room for the views
    `below` names (a CSS selector: what must stay on the same screen under it)."""
    low: int
    high: int
    below: str | None = None


def live_chart(fig, key: str, height: int, config: dict | None = None, fit: Fit | None = None,
               playing: dict | None = None) -> None:
    """`fig`: a figure, or one already made JSON (figure_json) to be drawn by many sessions.
    `fit`: the chart's height from the window's (Fit).
    `playing` (client_player.playing: the URL of the frames' file and the clock): the chart plays a recorded run
    by itself. Chart text grows with instructor mode's type (ui/shell/style.py)."""
    fitted = {"min": fit.low, "max": fit.high, "reserve": FIT_RESERVE, "below": fit.below} if fit else None
    # Streamlit holds a new chart's place with a box `height` tall until the chart has loaded (seconds on a busy
    # server): a fitted chart's box is its least height, so one still loading never pushes the views below off screen
    height = min(height, fit.low) if fit else height
    LIVE_CHART(spec=fig if isinstance(fig, str) else figure_json(fig), height=height, config=config or {}, key=key,
               default=None, fit=fitted, font_scale=font_scale(), frames=playing and playing["frames"],
               clock=playing and playing["clock"], anim_key=key)
