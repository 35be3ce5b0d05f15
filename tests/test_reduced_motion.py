"""Reduce motion (the sidebar's switch, ?motion=reduce, or the browser's prefers-reduced-motion): ▶ shows the run's
last step at once and nothing plays on its own; the choice lives in the URL like the language."""
from types import SimpleNamespace

import pytest
from app_support import runs_ended
from test_app import RUN, app, click, frame_counter

from ui.shell import style, url_state
from ui.shell.keys import REDUCE_MOTION

PAGE = "static-vs-continuous"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_play_under_reduced_motion_jumps_to_the_last_step_and_stays_paused(lang):
    at = app(lang, "pages/static_vs_continuous.py", **{f"{PAGE}.scale": 0.25, REDUCE_MOTION: True})
    click(at, RUN[lang])
    runs_ended(at)
    frame, last = frame_counter(at)
    assert frame == 0 and last > 0
    next(b for b in at.button if b.key == f"{PAGE}.play").click().run()
    assert frame_counter(at) == (last, last)  # no frame in between was shown, and nothing plays on
    assert not at.session_state[f"{PAGE}.playing"]
    assert next(b for b in at.button if b.key == f"{PAGE}.play").label == "▶"
    assert any(t.label for t in at.toggle if t.key == f"{REDUCE_MOTION}.widget" and t.value)
    assert "animation-duration: 0.01ms" in "".join(h.value for h in at.html)  # no CSS transitions either


def test_without_reduced_motion_play_starts_playing():
    at = app("en", "pages/static_vs_continuous.py", **{f"{PAGE}.scale": 0.25})
    click(at, RUN["en"])
    runs_ended(at)
    next(b for b in at.button if b.key == f"{PAGE}.play").click().run()
    assert at.session_state[f"{PAGE}.playing"]
    assert "@media (prefers-reduced-motion: reduce)" in style.REDUCED_MOTION_CSS


@pytest.fixture
def browser(monkeypatch):
    fake = SimpleNamespace(session_state={}, query_params={}, context=SimpleNamespace(headers={}))
    monkeypatch.setattr(url_state, "st", fake)
    return fake


def rerun(fake, query: dict, click: dict | None = None) -> dict:
    fake.query_params = dict(query)
    fake.session_state.update(click or {})
    url_state.restore()
    url_state.persist()
    return dict(fake.query_params)


def test_reduced_motion_lives_in_the_url(browser):
    """A link with ?motion=reduce (or the browser's preference, written there by ui/shell/a11y.py) turns it on and
    keeps it on every page; the sidebar's switch turns it off, and the URL says so."""
    assert rerun(browser, {"lang": "en", "motion": "reduce"}) == {"lang": "en", "motion": "reduce"}
    assert browser.session_state[REDUCE_MOTION]
    assert rerun(browser, {"lang": "en"}) == {"lang": "en", "motion": "reduce"}  # a page link that clears the query
    # off: the address says so (else the browser's preference would turn it on again at the next load)
    off = rerun(browser, {"lang": "en", "motion": "reduce"}, {REDUCE_MOTION: False})
    assert off == {"lang": "en", "motion": "full"}
    assert not browser.session_state[REDUCE_MOTION]  # the old address, echoed once more, does not undo the click
    assert rerun(browser, {"lang": "en", "motion": "full"}) == {"lang": "en", "motion": "full"}
