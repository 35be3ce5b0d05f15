"""A run's frames for in-browser playback, written once as a file each browser fetches for itself.

A view's frames are up to a megabyte or two of JSON. Sent inside the page, they would go into every session's
page run, serialised, hashed and written to each student's websocket under the one interpreter lock, once per
student and per chunk of a run still being computed: forty students playing one run would keep the server
busy for seconds at every chunk's end. So the frames are gzipped once, into a folder Streamlit already
serves (the live-chart component's, ui/playback/component.py), and a page carries only the file's URL.
Streamlit's own gzip layer leaves `application/gzip` alone, so a request costs the server a file read;
the browser unpacks it (DecompressionStream, ui/playback/client_player.js and ui/playback/live_chart.html).

Files live as long as what they were built for: a run's go when the run is collected, the rest when the
process exits. (Several replicas behind a load balancer need sticky sessions for these, as they do for
Streamlit's own media files.)
"""
from __future__ import annotations

import atexit
import gzip
import json
import os
import shutil
import time
import uuid
import weakref
from pathlib import Path

import streamlit as st

from ui.playback.component import COMPONENT_DIR, COMPONENT_NAME

ROOT = COMPONENT_DIR / "runs"
STALE_S = 24 * 3600  # another process's folder untouched this long is left from a crash


def _process_folder() -> Path:
    folder = ROOT / f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True, exist_ok=True)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    for other in ROOT.iterdir():
        try:
            if other != folder and time.time() - other.stat().st_mtime > STALE_S:
                shutil.rmtree(other, ignore_errors=True)
        except OSError:
            pass
    return folder


_FOLDER: Path | None = None


def _folder() -> Path:
    global _FOLDER
    if _FOLDER is None or not _FOLDER.is_dir():
        _FOLDER = _process_folder()
    return _FOLDER


def publish(data_json: str, owner: object | None = None) -> str:
    """Write `data_json` (gzipped) as a new file and return the URL a browser fetches it at. With `owner`
    (a run), the file is removed once the owner is garbage collected."""
    path = _folder() / f"{uuid.uuid4().hex}.json.gz"
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(gzip.compress(data_json.encode(), compresslevel=6, mtime=0))
    os.replace(tmp, path)  # a browser never reads half a file
    if owner is not None:
        weakref.finalize(owner, _remove, path)
    return url_of(path)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def url_of(path: Path) -> str:
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    return ("/" + base if base else "") + f"/component/{COMPONENT_NAME}/{path.relative_to(COMPONENT_DIR).as_posix()}"


def path_of(url: str) -> Path:
    return COMPONENT_DIR / url.split(f"/component/{COMPONENT_NAME}/", 1)[1]


def read(url: str) -> dict:
    """What the browser gets at `url` (for tests)."""
    return json.loads(gzip.decompress(path_of(url).read_bytes()))
