"""One lecture moment per lab page, walked as the room meets it: the question, the run, ▶, the reveal.

Instructor mode on, in Chinese, as a lecturer on a projector: the moment's poll is opened, two students answer,
the histogram fills in, "close and run", ▶, and the class's answers against the measured value. Instructor mode
off, in English, as a student on a laptop: the prediction typed, "save and run", ▶, and the student's own
prediction against the measured value.

Five sampled moments of each walk (the question; three while the run plays; the reveal), each looked at in both
window sizes: no two labels overlap, none is cut or wraps mid-word; while playing, every view of the picture lies
inside the window; the reveal lies below the picture or beside it, never above it (where it would push the
picture down).

Screenshots: tests/artifacts/layout-walk-<n>-<sample>-<lab>-<lang>[-instructor]-<width>x<height>.png."""
import re
import time
import uuid

import pytest
from browser_support import ARTIFACTS, assert_no_errors, new_page, player_button, press_play
from layout_support import (BOXES, LABS, LAPTOP, PROJECTOR, at_size, check_playing_picture, check_text, look_name,
                            settle, to_top)
from test_browser_poll import unlock, wait_for_text

from classroom import get_store
from ui.shell.i18n import strings

pytestmark = pytest.mark.browser

STRINGS = strings()
SIZES = {True: (PROJECTOR, LAPTOP), False: (LAPTOP, PROJECTOR)}  # the walk's own size first
LOOKS = [("zh", True), ("en", False)]
# seconds after ▶: a look (two sizes) takes some seconds, so the three follow each other; Auto plays a whole moment
# in about 25 s, and they fit in it
PLAYING_LOOKS = (0.5, 1.0, 1.5)


def both_sizes(page, lab: str, n: int, sample: str, where: tuple, playing: bool) -> list[str]:
    """Sampled moment n in both window sizes (the walk's own size first, and back to it): its text, and while
    playing, its picture inside the window (scrolled to the top, as a page is when ▶ is pressed)."""
    lang, instructor = where
    found = []
    for size in SIZES[instructor]:
        at_size(page, size)
        name = look_name(f"walk-{n}-{sample}-{lab}", lang, instructor, size)
        off, was_playing = [], playing and player_button(page, "pause").count()
        if was_playing:  # (the run may have ended during the looks)
            to_top(page)
            off = check_playing_picture(page, lab, LABS[lab][1], size, name)
            if off:  # the moment it was seen (the look's own screenshot comes a moment later)
                page.screenshot(path=str(ARTIFACTS / f"layout-{name}-off.png"))
        seen = off + check_text(page, name)
        if was_playing and not player_button(page, "pause").count():
            continue  # the run ended during this look: the page was redrawing its end, which the reveal's look checks
        found += seen
    at_size(page, SIZES[instructor][0])
    return found


def asked_by_poll(page, server: str, moment: str) -> None:
    """The instructor's question: the poll opened for a class of two, both answers in and drawn."""
    code, db = f"walk-{uuid.uuid4().hex[:6]}", get_store()
    tokens = [db.new_student(name, code) for name in ("Ada Student", "Lin Student")]
    unlock(page, server, "zh", code)
    page.locator(f".st-key-side-moment-{moment} button").first.click()
    opener = page.locator(f".st-key-poll-{moment}-open button").first
    opener.wait_for(timeout=60_000)
    opener.click()
    page.locator(".st-key-poll-live").first.wait_for(timeout=30_000)
    poll = db.current_poll(code)
    for token, value in zip(tokens, (2.0, 5.0)):
        db.answer_poll(poll.id, token, value)
    wait_for_text(page, ".st-key-poll-live", re.escape(STRINGS["poll.live"]["zh"].format(code=code, n=2)))
    page.locator(".st-key-poll-live .js-plotly-plot .bars path").first.wait_for(timeout=30_000)
    settle(page)


def asked_of_a_student(page, server: str, lab: str, moment: str) -> None:
    """The student's question: the moment's prediction box, a number typed."""
    token = get_store().new_student("Ana", f"walk-{uuid.uuid4().hex[:6]}")
    page.goto(f"{server}/{lab}?s={token}&lang=en")
    page.wait_for_selector("h1", timeout=60_000)
    settle(page)
    page.locator(f"[class*='moment-btn-{moment}'] button").first.click()
    box = page.get_by_label(STRINGS["pred.number"]["en"], exact=True)
    box.wait_for(timeout=60_000)
    box.fill("3")
    settle(page)


def run_it(page, lab: str, instructor: bool, moment: str) -> None:
    """Close the poll and run, or save the prediction and run; until the first frame is drawn."""
    if instructor:
        page.locator(f".st-key-poll-{moment}-close button").first.click()
    else:
        page.get_by_role("button", name=STRINGS["pred.run"]["en"], exact=True).click()
    page.wait_for_selector(f".st-key-{lab}-frame-counter .lab-frame-value", timeout=300_000)
    settle(page)


@pytest.mark.parametrize("lang, instructor", LOOKS)
@pytest.mark.parametrize("lab", LABS)
def test_a_lecture_moment_keeps_its_picture_on_the_first_screen_from_question_to_reveal(browser, server, lab, lang,
                                                                                        instructor):
    moment = LABS[lab][0]
    where = (lang, instructor)
    page = new_page(browser, lang, *SIZES[instructor][0])
    if instructor:
        asked_by_poll(page, server, moment)
    else:
        asked_of_a_student(page, server, lab, moment)
    found = both_sizes(page, lab, 1, "question", where, playing=False)

    run_it(page, lab, instructor, moment)
    press_play(page)
    pressed = time.monotonic()
    for n, at in enumerate(PLAYING_LOOKS, start=2):
        time.sleep(max(0.0, at - (time.monotonic() - pressed)))
        if not player_button(page, "pause").count():
            break  # the run ended before this look (a fast machine): the reveal below looks at the end
        found += both_sizes(page, lab, n, "playing", where, playing=True)

    reveal = page.locator(".st-key-poll-reveal").first if instructor else page.locator(
        '[data-testid="stMain"] [data-testid="stAlert"]', has_text=STRINGS["pred.you_said"][lang]).first
    reveal.wait_for(timeout=300_000)
    settle(page)
    found += both_sizes(page, lab, 5, "reveal", where, playing=False)
    found += reveal_below_picture(page, lab, reveal, look_name(f"walk-5-reveal-{lab}", lang, instructor,
                                                               SIZES[instructor][0]))
    assert_no_errors(page)
    page.close()
    assert found == [], "\n".join(found)


def reveal_below_picture(page, lab: str, reveal, where: str) -> list[str]:
    """The reveal (a locator) comes after the picture: below its last view, or beside it."""
    picture = page.evaluate(BOXES, f'[data-testid="stMain"] [class*="st-key-{lab}-tl-"]')
    shown = reveal.bounding_box()
    if not picture or not shown:
        return [f"{where}: no {'picture' if not picture else 'reveal'} on the page"]
    bottom = max(box["bottom"] for box in picture)
    beside = shown["x"] >= max(box["right"] for box in picture) - 1
    return [] if shown["y"] >= bottom - 1 or beside else [
        f"{where}: the reveal (top {shown['y']:.0f}) is above the picture's end ({bottom:.0f})"]
