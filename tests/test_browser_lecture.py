"""The lab as a lecturer and a student meet it in a real browser: the language and instructor mode
survive every click and reload. (While a run plays, the picture on the first screen of a laptop and a projector,
nothing cut or overlapping: tests/test_browser_layout.py.)"""
import re
import time

import pytest
from browser_support import assert_no_errors, new_page, wait_idle
from ui.shell.i18n import strings

pytestmark = pytest.mark.browser

STRINGS = strings()

CJK = re.compile(r"[\u4e00-\u9fff]")


def language_of(page) -> str:
    """The language the page is drawn in, read off the sidebar's page list (always in sight; the title
    is hidden while a run plays)."""
    return "zh" if CJK.search(page.inner_text('[data-testid="stSidebarNav"]')) else "en"


def instructor_on(page) -> bool:
    """Instructor mode as the person sees it: the sidebar lists the lecture moments and the type is larger."""
    listed = page.locator('[data-testid="stSidebar"] [data-testid="stExpander"]').count() > 0
    root = page.evaluate("() => parseFloat(getComputedStyle(document.documentElement).fontSize)")
    return listed and root > 17


def assert_state(page, lang: str, where: str) -> None:
    wait_idle(page)
    assert language_of(page) == lang, f"{where}: the page is in {language_of(page)}, not {lang}"
    assert instructor_on(page), f"{where}: instructor mode is off"
    assert f"lang={lang}" in page.url and "instructor=1" in page.url, f"{where}: {page.url}"
    assert_no_errors(page)


def run_moment(page, lab: str) -> None:
    """After a lecture moment's button: skip its prediction question (if it asks one), wait for the run."""
    skip = page.locator('[data-testid="stMain"] button').filter(
        has_text=re.compile("^(" + "|".join(STRINGS["pred.skip"].values()) + ")$"))
    counter = page.locator(f".st-key-{lab}-frame-counter")
    deadline, clicked = time.monotonic() + 300, 0.0
    while not counter.count() and time.monotonic() < deadline:
        # once: a second click while the first one's rerun starts the runs would interrupt that rerun
        if skip.count() and time.monotonic() - clicked > 30:
            skip.first.click()
            clicked = time.monotonic()
        time.sleep(1)
    counter.first.wait_for(timeout=10_000)
    wait_idle(page)


def click_and_wait(page, locator) -> None:
    locator.first.click()
    time.sleep(0.5)
    wait_idle(page)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_language_and_instructor_mode_survive_every_click_and_reload(browser, server, lang):
    page = new_page(browser, lang, 1440, 900)  # the browser's Accept-Language picks the first visit's language
    page.goto(server)
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    assert language_of(page) == lang
    for _ in range(3):  # instructor mode (a click that lands while a fresh server's first run ends can be lost)
        page.locator(".st-key-instructor-widget label").first.click()
        time.sleep(0.5)
        wait_idle(page)
        if instructor_on(page):
            break
    assert_state(page, lang, "home")
    click_and_wait(page, page.locator(".st-key-home-start button"))
    assert_state(page, lang, "the first lesson")
    for n in range(3):
        click_and_wait(page, page.locator("[class*='st-key-lesson-'][class*='-next'] button"))
        assert_state(page, lang, f"lesson after Next x{n + 1}")
    lesson_url = page.url
    click_and_wait(page, page.locator('[data-testid="stMain"] button:has-text("🎓")'))
    lab = page.url.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    assert page.url.split("?")[0] != lesson_url.split("?")[0], "the lecture moment did not open its lab page"
    run_moment(page, lab)
    assert_state(page, lang, "a lecture moment's lab page")
    page.locator('[data-testid="stSidebarNav"] a[href*="quiz"]').click()
    page.wait_for_selector(".st-key-quiz-restart", timeout=60_000)
    assert_state(page, lang, "the quiz")
    open_see_it_happen(page)
    assert_state(page, lang, "the quiz's 'see it happen' page")
    page.reload()
    page.wait_for_selector("h1", timeout=60_000)
    assert_state(page, lang, "after a reload")
    page.close()


def open_see_it_happen(page) -> None:
    """Answer choice questions (a two-tier one: both tiers) until one shows its 'see it happen' link, then follow
    it."""
    for _ in range(12):
        see = page.locator("[class*='st-key-quiz-q-'][class*='-link'] button")
        if see.count():
            click_and_wait(page, see)
            return
        groups = page.locator('[data-testid="stMain"] [data-testid="stRadio"]')
        submit = page.locator("[class*='st-key-quiz-q-'][class*='-submit'] button")
        if groups.count() and submit.count() and submit.first.is_enabled():
            options = [groups.nth(g).locator('[data-testid="stRadioOption"]:not([data-disabled="true"])')
                       for g in range(groups.count())]
            if all(o.count() for o in options):  # an option of each (an empty answer is refused, uses no try)
                for o in options:
                    click_and_wait(page, o)
                if submit.first.is_enabled():  # else the page was the rerun before an answer's: look again
                    click_and_wait(page, submit)
            else:  # the question has just been answered: its link comes with the rerun under way
                time.sleep(1)
                wait_idle(page)
            continue
        click_and_wait(page, page.locator(".st-key-quiz-next button"))
    pytest.fail("no quiz question offered its 'see it happen' link")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_deep_link_opens_in_the_language_it_names(browser, server, lang):
    other = "en" if lang == "zh" else "zh"
    page = new_page(browser, other)  # a browser that prefers the other language
    page.goto(f"{server}/policies?lang={lang}")
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    assert language_of(page) == lang
    page.close()
