"""Every page as a lecturer and a student see it: on a projector (1280x720) and a laptop (1440x900), instructor
mode on and off, in Chinese and English, no two pieces of text overlap, none is cut (an ellipsis, a clipped
box) or spills out of its button or column; and while a run plays on the three lab pages, every view of the
playing picture (each run's charts, not only the first) lies inside the window, the runs' columns side by
side with their views on one line.

Each page load is checked in several looks (the window resized; language and instructor mode switched in
the sidebar, as a person would), since a page load costs far more than a look.

Screenshots: tests/artifacts/layout-<page>-<lang>[-instructor]-<width>x<height>.png."""
import re
import time

import pytest
from browser_support import PASSCODE, assert_no_errors, choose_speed, new_page, player_button, press_pause, press_play
from layout_support import (LABS, LAPTOP, PROJECTOR, at_size, check_playing_picture, check_text, look_name, open_at,
                            settle, to_top)

pytestmark = pytest.mark.browser

LESSONS = ("overview", "why-batching", "fixed-batch", "continuous-batching", "paged-attention", "four-axes",
           "priorities-sla", "decisions", "scenarios", "mechanisms-myths")
PAGES = ("home", "why-batch", "static-vs-continuous", "paged-kv", "policies", "real-server", "tasks", "quiz",
         "challenge", "glossary", "playground", "class")
CJK = re.compile(r"[\u4e00-\u9fff]")


def language_of(page) -> str:
    return "zh" if CJK.search(page.inner_text('[data-testid="stSidebarNav"]')) else "en"


def instructor_on(page) -> bool:
    return "instructor=1" in page.url


def switch(page, lang: str, instructor: bool) -> None:
    """The sidebar's language and instructor switches, clicked until the page shows them (a click landing
    while the page reruns can be lost; a person clicks again)."""
    for _ in range(3):
        if language_of(page) != lang:
            page.locator('[data-testid="stSidebar"]').get_by_text({"zh": "中文", "en": "English"}[lang],
                                                                  exact=True).click()
            settle(page)
        if instructor_on(page) != instructor:
            page.locator(".st-key-instructor-widget label").first.click()
            settle(page)
        time.sleep(0.5)
        if language_of(page) == lang and instructor_on(page) == instructor:
            return
    raise AssertionError(f"the sidebar did not switch to {lang}, instructor={instructor}")


def measure(page) -> None:
    """Why batch's Measure, clicked until its chart is drawn (a click landing while the page reruns can be lost)."""
    chart = page.locator('[data-testid="stMain"] [data-testid="stPlotlyChart"]').first
    for _ in range(3):
        button = page.locator(".st-key-why-batch-measure button")
        if button.count():  # else a curve is kept from an earlier page (one per server), drawn already
            button.click()
        try:
            chart.wait_for(timeout=90_000)
            break
        except Exception:
            settle(page)
    settle(page)


def enter_passcode(page) -> None:
    field = page.locator('input[type="password"]')
    if field.count():
        field.fill(PASSCODE)
        field.press("Enter")
        settle(page)


@pytest.mark.parametrize("page_id", PAGES)
def test_no_text_overlaps_or_is_cut_on_any_page(browser, server, page_id):
    """Chinese in instructor mode on a projector, English without it on a laptop: the two ends of what a page
    meets (the larger type in the smaller window, the longer words in the wider one), each at both sizes."""
    found = []
    # the class view is the instructor's alone (behind the passcode): there it is checked in both languages
    for lang, instructor in (("zh", True), ("en", page_id == "class")):
        page = new_page(browser, lang, *PROJECTOR)
        query = f"?lang={lang}" + ("&instructor=1" if instructor else "")
        open_at(page, f"{server}/{'' if page_id == 'home' else page_id}{query}")
        if page_id == "class":
            enter_passcode(page)
        if page_id == "why-batch":  # its chart (the y axis titles beside their tick labels) once measured
            measure(page)
        for size in (PROJECTOR, LAPTOP):
            at_size(page, size)
            assert language_of(page) == lang and instructor_on(page) == instructor
            found += check_text(page, look_name(page_id, lang, instructor, size))
        assert_no_errors(page)
        page.close()
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("lang, instructor, size", [("zh", True, PROJECTOR), ("en", False, LAPTOP)])
def test_no_text_overlaps_or_is_cut_in_any_lesson(browser, server, lang, instructor, size):
    """Every lesson, walked with its Next button (its Previous and Next buttons carry the neighbours' titles)."""
    page = new_page(browser, lang, *size)
    open_at(page, f"{server}/lesson-{LESSONS[0]}?lang={lang}" + ("&instructor=1" if instructor else ""))
    found = []
    for n, lesson in enumerate(LESSONS):
        assert f"lesson-{lesson}" in page.url, page.url
        page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTop = 0")
        found += check_text(page, look_name(f"lesson-{lesson}", lang, instructor, size))
        if n + 1 < len(LESSONS):
            page.locator(f".st-key-lesson-{lesson}-next button").click()
            page.wait_for_url(re.compile(f"lesson-{LESSONS[n + 1]}"), timeout=60_000)
            settle(page)
    assert_no_errors(page)
    page.close()
    assert found == [], "\n".join(found)


def run_moment(page, lab: str, moment: str) -> None:
    """A lecture moment's run to its end (its prediction skipped, if it asks one)."""
    page.locator(f"[class*='moment-btn-{moment}'] button").first.click()
    skip = page.locator('[data-testid="stMain"] button').filter(has_text=re.compile(r"^(跳过|Skip)"))
    deadline, clicked = time.monotonic() + 300, 0.0
    while not page.locator(f".st-key-{lab}-frame-counter").count() and time.monotonic() < deadline:
        # once: a second click while the first one's rerun starts the runs would interrupt that rerun
        if skip.count() and time.monotonic() - clicked > 30:
            skip.first.click()
            clicked = time.monotonic()
        time.sleep(1)
    page.wait_for_function("""(lab) => { const c = document.querySelector('.st-key-' + lab + '-frame-counter');
                                        return c && /\\d+ \\/ \\d+$/.test(c.innerText.trim()); }""",
                           arg=lab, timeout=300_000)
    settle(page)


@pytest.mark.parametrize("lab", LABS)
def test_while_playing_every_view_is_on_the_first_screen_and_no_text_collides(browser, server, lab):
    """One run per lab (a lecture moment), then played and checked in every look a lecturer uses: zh and en,
    instructor mode off and on, at 1280x720 and 1440x900."""
    moment, views = LABS[lab]
    page = new_page(browser, "zh", *LAPTOP)
    open_at(page, f"{server}/{lab}?lang=zh")
    run_moment(page, lab, moment)
    choose_speed(page, 10, "zh")  # the page keeps it in both languages: eight looks, each from the first step
    found = []
    for lang in ("zh", "en"):
        for instructor in (True, False):
            switch(page, lang, instructor)
            # from the first step: four looks played on would reach the run's end (it then pauses itself)
            page.locator(f".st-key-{lab}-first button").first.click()
            settle(page)
            press_play(page)
            for size in (PROJECTOR, LAPTOP):
                at_size(page, size)
                to_top(page)
                where = look_name(f"playing-{lab}", lang, instructor, size)
                assert player_button(page, "pause").count(), f"{where}: the run stopped playing"
                found += check_playing_picture(page, lab, views, size, where)
                found += check_text(page, where)
            press_pause(page)
            settle(page)
    assert_no_errors(page)
    page.close()
    assert found == [], "\n".join(found)


def test_a_chart_still_loading_keeps_the_views_below_it_on_the_first_screen(browser, server):
    """On a busy server a new chart takes seconds to load, and Streamlit holds its place with a box meanwhile: with
    one run's chart held back (its page never answered here), a projector still shows every run's queue, and the
    runs' views still line up, while the others play."""
    lab, charts = "policies", []

    def hold_the_third(route):
        if route.request.resource_type == "document":
            charts.append(route.request.url)
            if len(charts) == 3:
                return  # this chart's request stays pending
        route.continue_()
    url = f"{server}/{lab}?lang=zh&instructor=1"
    # Streamlit shows the box for 60 s at most (then a warning): the runs are made first, in another session (the
    # server computes them once for all), so the page below reaches its player in seconds even on a busy machine
    warm = new_page(browser, "zh", *PROJECTOR)
    open_at(warm, url)
    run_moment(warm, lab, LABS[lab][0])
    warm.close()
    page = new_page(browser, "zh", *PROJECTOR)
    page.route(re.compile(r"serving_lab_live_chart"), hold_the_third)
    open_at(page, url)
    run_moment(page, lab, LABS[lab][0])
    choose_speed(page, 10, "zh")  # still playing when it is looked at
    press_play(page)
    settle(page)
    to_top(page)
    where = look_name(f"loading-{lab}", "zh", True, PROJECTOR)
    assert page.locator('[data-testid="stMain"] [data-testid="stSkeleton"]').count() == 1, "not one chart loading"
    found = check_playing_picture(page, lab, LABS[lab][1], PROJECTOR, where) + check_text(page, where)
    assert player_button(page, "pause").count(), f"{where}: the run stopped playing"
    page.close()
    assert found == [], "\n".join(found)
