"""Students come back, in a real browser: quiz answers and worksheet text survive a reload, the bookmarked link
brings them back in a fresh browser (another device, tomorrow), and a browser without the link sees none of it.

Screenshots: tests/artifacts/progress-*.png."""
import pytest
import re
import time

from browser_support import ARTIFACTS, assert_no_errors, new_page, wait_idle
from playwright.sync_api import expect

from classroom import get_store
from lessons import load_quiz, load_tasks, quiz_order
from ui.shell.i18n import strings

pytestmark = pytest.mark.browser

STRINGS = strings()
WRITTEN = "Paged blocks are handed out per token as sequences grow, so nobody waits for the longest request."


def goto(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)


def sidebar_page(page, title: str) -> None:
    """Switch pages as a person does: the sidebar's link (keeps the session)."""
    page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title).first.click()
    page.wait_for_function("t => document.querySelector('h1') && document.querySelector('h1').innerText.includes(t)",
                           arg=title, timeout=60_000)
    wait_idle(page)


def answer_on_screen(page, q, option: int, reason: int | None = None) -> None:
    page.get_by_text(q.options[option], exact=True).click()
    if reason is not None:  # a two-tier question: the reason as well
        wait_idle(page)
        page.get_by_text(q.reasons[reason], exact=True).click()
    page.get_by_role("button", name=re.compile("^(Submit|Try again)$")).click()
    wait_idle(page)


def why_online(page):
    label = next(f.label for f in load_tasks("en")[0].fields if f.id == "why_online")
    return page.get_by_label(label, exact=True)


def assert_progress(page, where: str, *, answered: int, retry: bool, text: str) -> None:
    sidebar_page(page, STRINGS["quiz.title"]["en"])
    shown = page.get_by_text(re.compile(rf"^Finished {answered} / \d+"))
    shown.first.wait_for(timeout=20_000)  # raises: the quiz score is not back
    # the score is drawn before the question: read the page once the question and the script's end are there
    page.get_by_text(re.compile(r"^Question \d+ of \d+")).first.wait_for(timeout=20_000)
    wait_idle(page)
    if retry:
        page.get_by_text(STRINGS["quiz.retry"]["en"]).first.wait_for(timeout=20_000)  # raises: not where it was left
    assert (STRINGS["quiz.retry"]["en"] in page.inner_text("body")) == retry, \
        f"{where}: the second try is not where it was left"
    sidebar_page(page, STRINGS["tasks.title"]["en"])
    expect(why_online(page)).to_have_value(text, timeout=20_000)  # the box can be drawn before its value
    assert_no_errors(page)


def test_quiz_and_worksheet_come_back_after_a_reload_and_from_the_bookmarked_link(browser, server):
    order = quiz_order(load_quiz("en"), 0)
    # the first two questions: after a reload the quiz opens at the first one not done, the one left at a retry
    (i1, right), (i2, wrong) = (0, order[0]), (1, order[1])
    assert {right.type, wrong.type} <= {"single", "two_tier"}
    page = new_page(browser, "en")
    goto(page, f"{server}/quiz?lang=en")
    answer_on_screen(page, right, right.answer, right.reason)
    page.get_by_text(STRINGS["quiz.right"]["en"], exact=True).wait_for(timeout=30_000)
    for _ in range(i2 - i1):
        page.get_by_role("button", name="Next", exact=True).click()
        wait_idle(page)
    answer_on_screen(page, wrong, (wrong.answer + 1) % len(wrong.options), wrong.reason)
    page.get_by_text(STRINGS["quiz.retry"]["en"]).wait_for(timeout=30_000)
    page.wait_for_function("() => new URLSearchParams(location.search).get('s')", timeout=30_000)

    sidebar_page(page, STRINGS["tasks.title"]["en"])
    why_online(page).fill(WRITTEN)
    page.locator("h1").first.click()  # leaving the box commits it
    wait_idle(page)
    token = re.search(r"[?&]s=([\w-]+)", page.url).group(1)
    deadline = time.monotonic() + 30
    while get_store().drafts(token).get("compare-batching", {}).get("why_online") != WRITTEN:  # written through
        assert time.monotonic() < deadline, "the worksheet text was not written through to the store"
        time.sleep(0.5)

    page.reload()
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    assert_progress(page, "after a reload", answered=1, retry=True, text=WRITTEN)
    link = page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').first.inner_text().strip()
    assert f"s={token}" in link, link
    page.screenshot(path=str(ARTIFACTS / "progress-restored-en.png"), full_page=True)
    page.close()

    elsewhere = new_page(browser, "en")  # another browser: no cookies, no session, only the link
    goto(elsewhere, link)
    assert "Your link" in elsewhere.inner_text("body")
    elsewhere.locator(".st-key-progress-panel").screenshot(path=str(ARTIFACTS / "progress-home-link-en.png"))
    assert_progress(elsewhere, "from the bookmarked link", answered=1, retry=True, text=WRITTEN)
    elsewhere.close()

    stranger = new_page(browser, "en")
    goto(stranger, f"{server}/quiz?lang=en")
    assert_progress(stranger, "a browser without the link", answered=0, retry=False, text="")
    assert token not in stranger.url and token not in stranger.inner_text("body")
    stranger.close()
