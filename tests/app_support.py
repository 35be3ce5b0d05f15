"""Shared pieces of the AppTest tests."""
from streamlit.testing.v1 import AppTest


def runs_ended(at: AppTest) -> AppTest:
    """A moment's or a Run's recorded runs end in a background thread (ui/playback/run_cache.py), and the page draws
    what needs a whole run once they have: in a browser the page reruns itself then (ui.playback.player's
    _await fragment, on a timer AppTest does not keep). Wait for the runs and rerun, as it would."""
    from ui.playback.run_cache import RUNS

    RUNS.join()
    return at.run()
