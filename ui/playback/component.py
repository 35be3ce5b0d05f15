"""The live-chart component's files and its declaration: one folder Streamlit serves at /component/<name>/.

Its files (ui/playback/live_chart.html and the plotly.js that ships inside the plotly package) are copied once
into a cache folder; ui/playback/live_chart.py draws charts with the component, and ui/playback/frame_files.py
writes runs' frames into the same folder."""
from __future__ import annotations

import os
import shutil
from importlib.resources import files
from pathlib import Path

import plotly
import streamlit.components.v1 as components

from engine.models.loaded import cache_root

HTML = Path(__file__).with_name("live_chart.html")


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
LIVE_CHART = components.declare_component("serving_lab_live_chart", path=str(COMPONENT_DIR))
COMPONENT_NAME = LIVE_CHART.name  # its files are served at /component/<name>/
