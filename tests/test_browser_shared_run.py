"""A lecture moment plays while its runs are still being computed, for every student who presses it.

The first press starts the moment's runs in the background (ui/playback/run_cache.py); the first frame is drawn at
once, ▶ plays the steps already taken (in the browser, a chunk at a time), a second student pressing the
same moment gets the same runs (their first frame too, before the runs have ended), and once they end
each page redraws itself with what needs whole runs (the summary table), with no click. This module has
its own server: its run cache starts empty, so the moment really is computed here."""
import time

import pytest
from browser_support import ARTIFACTS, assert_no_errors, counter, open_page, press_play, serve

pytestmark = pytest.mark.browser

LAB, MOMENT = "static-vs-continuous", "🎓 Holes in a fixed batch"
STILL_RUNNING = "The engine is still running"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server of this module's own, with no run store: its run cache starts empty."""
    yield from serve(tmp_path_factory.mktemp("cache-cold"), "cold", {"SERVING_LAB_RUN_STORE": ""})


@pytest.fixture(scope="module")
def students(browser, server):
    pages = [open_page(browser, f"{server}/{LAB}", "en") for _ in range(2)]
    yield pages
    for page in pages:
        page.close()


def press(page) -> float:
    """Press the moment and skip its prediction; seconds until the page shows the run's first frame."""
    page.get_by_role("button", name=MOMENT, exact=True).click()
    page.get_by_role("button", name="Skip, just run", exact=True).click()
    pressed = time.monotonic()
    page.wait_for_selector(f".st-key-{LAB}-frame-counter .lab-frame-value", timeout=120_000)
    return time.monotonic() - pressed


def test_a_moment_plays_for_two_students_before_its_runs_have_ended(students):
    first, second = students
    waited = press(first)
    first.get_by_text(STILL_RUNNING).first.wait_for(timeout=30_000)  # the runs have not ended yet
    assert "…" in first.locator(".lab-frame-value").first.inner_text()
    # the first student plays at once, as a lecturer does: the steps taken so far play in the browser (a chunk at
    # a time) while the rest is computed (▶ first: on a quick machine the runs end a few seconds after the press)
    press_play(first)
    first.wait_for_function("() => document.querySelector('[data-anim]') && [...document.querySelectorAll("
                            f"'.st-key-{LAB}-frame-counter .lab-frame-value')].some(e => e.innerText.includes('…'))",
                            timeout=30_000)
    # the second student presses the same moment meanwhile, while the runs are still being computed
    waited_second = press(second)
    assert second.get_by_text(STILL_RUNNING).count() or "…" in second.locator(".lab-frame-value").first.inner_text(), \
        "the runs ended before the second student pressed: the test shows nothing about sharing"
    print(f"first frame after the press: {waited:.1f} s (first student), {waited_second:.1f} s (second)")
    assert waited < 60 and waited_second < 30
    # the play click's page has replaced the still one, and the timelines draw from the frames they fetched
    first.wait_for_function(f"() => document.querySelectorAll('.st-key-{LAB}-frame-counter').length === 1 "
                            "&& window.__labChartFrames > 2", timeout=60_000)
    first.screenshot(path=str(ARTIFACTS / "shared-run-playing-while-computed.png"))
    assert counter(first, LAB) > 0  # playing the steps already taken

    for page in (first, second):  # once the runs end, each page redraws itself: no click
        page.get_by_text(STILL_RUNNING).first.wait_for(state="detached", timeout=300_000)
        page.get_by_text("Whole-run results", exact=True).first.wait_for(timeout=60_000)
        page.wait_for_function(f"() => !document.querySelector('.st-key-{LAB}-frame-counter .lab-frame-value')"
                               ".innerText.includes('…')", timeout=60_000)
        assert_no_errors(page)
    first.screenshot(path=str(ARTIFACTS / "shared-run-ended-first-student.png"), full_page=True)
    second.screenshot(path=str(ARTIFACTS / "shared-run-ended-second-student.png"), full_page=True)
