"""Animated charts that update in place.

st.plotly_chart rebuilds its chart whenever the figure changes: at 10 frames/s the chart is hidden
while the new one is measured, and it flickers. This tiny component keeps one Plotly div per chart
and hands it each new frame with Plotly.react. Its files (ui/playback/live_chart.html and the plotly.js that
ships inside the plotly package) are copied once into a cache folder that Streamlit serves.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import plotly
import plotly.io as pio
import streamlit.components.v1 as components

from engine import cache_root
from ui.shell.style import font_scale

HTML = Path(__file__).with_name("live_chart.html")
FIT_RESERVE = 12  # pixels kept free below a fitted chart


def _component_dir() -> Path:
    folder = cache_root() / f"live-chart-{plotly.__version__}-{int(HTML.stat().st_mtime)}"
    if not (folder / "index.html").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        _copy(files("plotly") / "package_data" / "plotly.min.js", folder / "plotly.min.js")
        _copy(HTML, folder / "index.html")  # last: its presence means "complete"
    return folder


def _copy(source, target: Path) -> None:
    """Copied under a name of this process's own, then renamed: processes starting together (a test session's
    servers) never serve or overwrite half a file."""
    part = target.with_name(f"{target.name}.{os.getpid()}.part")
    shutil.copyfile(source, part)
    os.replace(part, target)


COMPONENT_DIR = _component_dir()
_render = components.declare_component("serving_lab_live_chart", path=str(COMPONENT_DIR))
# its files are served at /component/<name>/ (ui/playback/frame_files.py writes there too)
COMPONENT_NAME = _render.name


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
    _render(spec=fig if isinstance(fig, str) else figure_json(fig), height=height, config=config or {}, key=key,
            default=None, fit=fitted,
            font_scale=font_scale(), frames=playing and playing["frames"], clock=playing and playing["clock"],
            anim_key=key)
