"""The classroom benchmark's students (bench/ws_student.py) are real sessions of a real server.

They speak Streamlit's websocket as a browser does, so what bench/classroom_load.py reports about forty
of them is what the server does for forty browsers. Here eight press the same lecture moment within half a
second on a fresh `python -m ui.serve`: each must get the page, the moment's first frame and then frames
playing (or the views that play in the browser), with no exception drawn on any page: sessions that draw their
first figure at once, importing pandas together, each get the whole module (ui/serve.py imports it first).
Timings are the benchmark's job."""
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from browser_support import ROOT

sys.path.insert(0, str(ROOT / "bench"))

import classroom_load

pytestmark = pytest.mark.browser


def test_eight_students_pressing_one_moment_at_once_all_see_it_play_with_no_error():
    # in a thread of its own: the session's Playwright (tests/browser_support.py) runs an event loop in this one
    with ThreadPoolExecutor(1) as pool:
        r = pool.submit(classroom_load.time_to_first_frame, 8, "fixed-batch-holes", timeout=240, spread=0.5).result()
    assert r["first_frame"]["seen"] == 8, r
    assert r["playing"]["seen"] == 8, r
    assert all(r[what]["p50_s"] > 0 for what in ("first_frame", "playing"))
