"""The lab in a real browser: Debian's chromium driven by Playwright against `python -m ui.serve`.
Screenshots of every page go to tests/artifacts/ (ignored by git)."""
import re
import time

import pytest
from browser_support import (ARTIFACTS, assert_no_errors, counter, new_page, open_page, press_pause, press_play,
                             wait_idle)

pytestmark = pytest.mark.browser

PAGES = ["", "lesson-overview", "lesson-mechanisms-myths", "why-batch", "static-vs-continuous", "paged-kv", "policies",
         "tasks", "quiz", "challenge", "playground", "glossary"]  # "": home, the default page
COUNTERS = ".st-key-static-vs-continuous-frame-counter"
# the three lab pages play (and pause) in tests/test_browser_play_at_once.py, on their first lecture moment
PLAYERS = {"playground": "Run"}
# the static-vs-continuous moment the recorded-run test plays: the prediction test's, whose runs this module's
# server has then computed already (the run cache), so it does not wait minutes for a second moment's runs
RECORDED = "🎓 Chats and long reports"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_page_renders_without_errors(browser, server, lang):
    for name in PAGES:
        page = open_page(browser, f"{server}/{name}", lang)
        time.sleep(1)
        assert_no_errors(page)
        if lang == "zh":
            assert re.search(r"[\u4e00-\u9fff]", page.inner_text("h1"))
        page.screenshot(path=str(ARTIFACTS / f"{name or 'home'}-{lang}.png"), full_page=True)
        page.close()


@pytest.mark.parametrize("name", list(PLAYERS))
def test_play_advances_the_frame_counter(browser, server, name):
    page = open_page(browser, f"{server}/{name}", "en")
    page.get_by_role("button", name=PLAYERS[name], exact=True).click()
    if PLAYERS[name].startswith("🎓"):  # a lecture moment asks for a prediction first
        page.get_by_role("button", name="Skip, just run", exact=True).click()
    # the moment's runs finish first: ~100 s each on 2 loaded cores for fixed-batch-holes
    page.wait_for_selector(f".st-key-{name}-frame-counter", timeout=360_000)
    time.sleep(1)
    before = counter(page, name)
    press_play(page)
    deadline = time.monotonic() + 30  # ~10 frames/s when playing; a slow machine gets time, a stall does not
    while counter(page, name) <= before + 5 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert counter(page, name) > before + 5, page.locator(f".st-key-{name}-frame-counter").all_inner_texts()
    press_pause(page)  # paused: the page has rerun
    time.sleep(1)
    paused = counter(page, name)
    time.sleep(1.5)
    assert counter(page, name) == paused
    assert_no_errors(page)
    assert page.locator("iframe").count() >= 1  # the live charts
    page.screenshot(path=str(ARTIFACTS / f"{name}-playing.png"), full_page=True)
    page.close()


def test_language_switch(browser, server):
    page = open_page(browser, f"{server}/static-vs-continuous", "zh")
    assert page.inner_text("h1") == "固定 batch vs continuous batching"
    page.get_by_text("English", exact=True).click()
    page.wait_for_function("() => document.querySelector('h1').innerText === 'Static vs continuous batching'")
    page.get_by_text("中文", exact=True).click()
    page.wait_for_function("() => document.querySelector('h1').innerText === '固定 batch vs continuous batching'")
    page.close()


def test_why_batch_measures_once_and_every_session_sees_that_curve(browser, server):
    page = new_page(browser, "en", 1280, 720)
    page.goto(f"{server}/why-batch?lang=en")
    page.get_by_role("button", name="Measure now", exact=True).click()
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    assert "that of one sequence" in page.inner_text("body")  # the takeaway, from the measured rows
    assert "Measured on this server" in page.inner_text("body")  # where and when
    assert_no_errors(page)
    page.screenshot(path=str(ARTIFACTS / "why-batch-measured-en-1280.png"), full_page=True)
    page.close()
    other = new_page(browser, "zh", 1280, 720)  # another student, later: the same curve, not a new measurement
    other.goto(f"{server}/why-batch?lang=zh")
    other.wait_for_selector(".js-plotly-plot", timeout=60_000)
    body = other.inner_text("body")
    assert "在这台服务器上测得" in body and "现在测量" not in body
    assert_no_errors(other)
    other.screenshot(path=str(ARTIFACTS / "why-batch-kept-zh-1280.png"), full_page=True)
    other.close()


def test_malformed_trace_is_explained(browser, server, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "header", "version": 1}\n{"kind": "request", "request_id": "a"}\n')
    page = open_page(browser, f"{server}/playground", "en")
    page.get_by_role("radio", name="Upload a trace").click()
    page.locator("input[type=file]").set_input_files(str(bad))
    page.get_by_text("This trace cannot be used: line 2").wait_for(timeout=30_000)
    assert_no_errors(page)
    page.close()


def test_a_wrong_answer_gets_a_hint_and_a_second_try_then_the_explanation(browser, server):
    from lessons import load_quiz, quiz_order

    order = quiz_order(load_quiz("en"), 0)  # the quiz's default seed
    i, q = next((i, q) for i, q in enumerate(order) if q.type == "single")
    page = open_page(browser, f"{server}/quiz", "en")
    for _ in range(i):
        page.get_by_role("button", name="Next", exact=True).click()
        wait_idle(page)
    wrong = (q.answer + 1) % len(q.options)
    page.get_by_text(q.options[wrong], exact=True).click()
    page.get_by_role("button", name="Submit", exact=True).click()
    page.get_by_text("Not yet. Read the hint: you have one more try.").wait_for(timeout=30_000)
    body = page.inner_text("body")
    assert "💡" in body and q.explanation not in body  # the hint, not yet the answer
    page.screenshot(path=str(ARTIFACTS / "quiz-hint-retry-en.png"), full_page=True)
    page.get_by_text(q.options[q.answer], exact=True).click()
    page.get_by_role("button", name="Try again", exact=True).click()
    page.get_by_text("Correct at the second try.").wait_for(timeout=30_000)
    assert q.explanation in page.inner_text("body")
    assert "at the second 1" in page.inner_text("body")
    assert_no_errors(page)
    page.screenshot(path=str(ARTIFACTS / "quiz-second-try-explanation-en.png"), full_page=True)
    page.close()


def test_a_prediction_is_revealed_next_to_the_measured_figure(browser, server):
    page = open_page(browser, f"{server}/static-vs-continuous", "en")
    page.locator(".st-key-static-vs-continuous-moment-btn-chat-and-reports button").first.click()
    page.get_by_text("How many times higher will the chat TTFT p50 be under the fixed batch?").wait_for(timeout=30_000)
    page.get_by_label("Your prediction (a number)").fill("5")
    page.get_by_role("button", name="Save the prediction and run", exact=True).click()
    page.get_by_text(re.compile(r"Your prediction: 5× · measured: [0-9.]+×")).wait_for(timeout=240_000)
    assert_no_errors(page)
    page.screenshot(path=str(ARTIFACTS / "prediction-reveal-en.png"), full_page=True)
    page.close()


def test_a_recorded_run_plays_in_the_browser_with_no_server_reruns(browser, server):
    """Once the runs have ended, ▶ sends the frames once: the counter advances with no message between
    browser and server, and ⏸ stills the frame the browser had reached."""
    page = open_page(browser, f"{server}/static-vs-continuous", "en")
    traffic = []  # every websocket message after the page loaded, either way
    page.on("websocket", lambda ws: (ws.on("framesent", lambda _: traffic.append("sent")),
                                     ws.on("framereceived", lambda _: traffic.append("received"))))
    page.reload()
    wait_idle(page)
    page.get_by_role("button", name=RECORDED, exact=True).click()
    page.get_by_role("button", name="Skip, just run", exact=True).click()
    page.wait_for_selector(".st-key-static-vs-continuous-frame-counter", timeout=360_000)
    # the runs end in the background (the first frames play while they are computed, drawn by the server);
    # once they have, the page redraws itself without the counter's "…" and ▶ plays in the browser
    page.wait_for_function(f"() => [...document.querySelectorAll('{COUNTERS} .lab-frame-value')].every("
                           "e => !e.innerText.includes('…'))", timeout=360_000)
    wait_idle(page)
    speed = page.locator("[class*='player-controls'] [data-testid='stSelectbox']").first
    speed.click()
    page.get_by_role("option", name="2 steps/s", exact=True).click()  # slow: a click's round trip is < 1 frame
    page.wait_for_function("() => [...document.querySelectorAll(\"[class*='player-controls'] input\")].some("
                           "i => i.value === '2 steps/s')", timeout=30_000)
    wait_idle(page)
    pressed = time.monotonic()
    press_play(page)
    wait_idle(page)
    drawn_in = time.monotonic() - pressed  # the play click's page: drawn, sent and shown
    # one copy of the views: the still frame drawn before ▶ goes once the play click's rerun ends
    page.wait_for_function(f"() => document.querySelectorAll('{COUNTERS}').length === 1", timeout=60_000)
    before, messages = counter(page, "static-vs-continuous"), len(traffic)
    copies = []
    for _ in range(8):
        time.sleep(0.5)
        copies.append(page.locator(COUNTERS).count())
    assert copies == [1] * 8, copies
    assert counter(page, "static-vs-continuous") >= before + 5  # 2 steps/s, drawn by the browser
    # no fragment reruns: a fragment's timer asks the server over the websocket, and the browser asked
    # nothing (what it received meanwhile is the play click's own rerun, slow on a loaded machine)
    assert traffic[messages:].count("sent") == 0, traffic[messages:]
    # the timelines animate too (they get their frames last: on a loaded machine after the counter has moved)
    page.wait_for_function("() => (window.__labChartFrames || 0) >= 2", timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "static-vs-continuous-playing-in-browser.png"))
    press_pause(page)
    wait_idle(page)
    reached = page.evaluate("() => window.__labAnim.shown['static-vs-continuous.counter']")
    paused = counter(page, "static-vs-continuous")
    # the server's clock starts when the play click's run starts, the browser's when its frames arrive:
    # they differ by at most the time that page took (2 steps/s), seconds on a loaded machine
    assert abs(paused - reached) <= 1 + 2 * drawn_in, (paused, reached, drawn_in)
    assert page.locator("[data-anim]").count() == 0  # a still frame, drawn by the server
    time.sleep(1.5)
    assert counter(page, "static-vs-continuous") == paused
    assert page.locator(COUNTERS).count() == 1 and page.locator("[data-anim]").count() == 0
    assert_no_errors(page)
    page.screenshot(path=str(ARTIFACTS / "static-vs-continuous-paused-after-browser-play.png"))
    page.close()
