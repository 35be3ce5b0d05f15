"""A click on ▶ or ⏸ that Streamlit hands the player twice (a timer's fragment rerun and the page rerun it causes,
which on a loaded server come more than the half second apart that `_once` covers) does what the button showed,
twice: a pause stays a pause, and a play stays playing."""
import pytest
import streamlit as st

from engine.lab.experiment import LiveRun, workload_requests
from engine.lab.workload import engine_config_for, preset
from ui.playback import player

PAGE = "clicks"


@pytest.fixture(scope="module")
def runs(tiny):
    workload = preset("uniform").scaled(0.25)
    run = LiveRun(tiny, workload_requests(tiny, workload, seed=0), engine_config_for(workload))
    run.run_to_end()
    return [run]


@pytest.fixture
def clock(monkeypatch):
    """time.monotonic as the player reads it, moved on by hand: the second handling comes a second later."""
    now = [1000.0]
    monkeypatch.setattr(player.time, "monotonic", lambda: now[0])
    return now


def fresh(playing: bool) -> None:
    """The player's state as a page left it: at frame 3, playing or not."""
    ss = st.session_state
    for key in list(ss):
        if key.startswith(f"{PAGE}."):
            del ss[key]
    ss[f"{PAGE}.frame"], ss[f"{PAGE}.playing"] = 3, playing


def handled_twice(runs, clock, playing: bool) -> bool:
    """The play/pause button as drawn while `playing`, its one click handled twice; playing afterwards?"""
    fresh(playing)
    click = player._once(player._toggle)
    for _ in range(2):
        click(PAGE, runs, not playing)
        clock[0] += 1.0
    return st.session_state[f"{PAGE}.playing"]


def test_a_pause_handled_twice_stays_paused(runs, clock):
    assert handled_twice(runs, clock, playing=True) is False


def test_a_play_handled_twice_stays_playing(runs, clock):
    assert handled_twice(runs, clock, playing=False) is True


def test_the_button_flips_what_it_does_once_drawn_again(runs, clock):
    """Clicks on the redrawn button still toggle: ▶, then ⏸, then ▶ again."""
    ss = st.session_state
    fresh(False)
    click = player._once(player._toggle)
    seen = []
    for _ in range(3):
        click(PAGE, runs, not ss[f"{PAGE}.playing"])
        clock[0] += 1.0
        seen.append(ss[f"{PAGE}.playing"])
    assert seen == [True, False, True]
