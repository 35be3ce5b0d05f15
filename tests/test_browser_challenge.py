"""The policy challenge in a real browser, zh and en: a student writes a key with a typo and sees its message at its
line and column at a pause in typing (the caret still in the box, before Run), fixes it (the message goes as soon
as the typo does, before Run), runs it beside FCFS, submits it (a score alone, never the class's hidden seeds), and
appears with it on the instructor's leaderboard.
Screenshots at 1440x900 and 1280x720: tests/artifacts/challenge-*.png."""
import uuid

import pytest
from browser_support import ARTIFACTS, assert_no_errors, new_page, wait_idle, PASSCODE

from classroom import get_store
from engine.lab.challenge import hidden_seeds
from ui.practice.challenge import SECRET
from ui.shell.i18n import strings

pytestmark = pytest.mark.browser

STRINGS = strings()
# every live chart of the page (an iframe each) has a figure drawn, and there are at least the three timelines
DRAWN = """() => { const frames = [...document.querySelectorAll('[data-testid="stMain"] iframe[title*="live_chart"]')];
  return frames.length >= 3 && frames.every(f => { try {
    const chart = f.contentDocument && f.contentDocument.getElementById('chart');
    return !!(chart && chart.querySelector('.main-svg')); } catch (e) { return false; } }); }"""
TYPO, FIXED = "waited + max_tokns", "0 if request_class == 'support' else priority + 1"


def s(key: str, lang: str, **kw) -> str:
    return STRINGS[key][lang].format(**kw)


def shoot(page, name: str, target) -> None:
    """At both window sizes, with `target` scrolled into view after each resize."""
    for width, height in ((1440, 900), (1280, 720)):
        page.set_viewport_size({"width": width, "height": height})
        wait_idle(page)
        target.first.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(ARTIFACTS / f"challenge-{name}-{width}x{height}.png"))
    page.set_viewport_size({"width": 1440, "height": 900})


def write_key(page, lang: str, text: str) -> None:
    """The key typed, the caret left in the box (a pause in typing sends it; the page checks it then), Run not
    pressed."""
    area = page.get_by_label(s("ch.key", lang), exact=True)
    area.click()
    area.press("Control+a")
    area.press_sequentially(text, delay=15)


def still_typing_in_the_key(page, lang: str) -> bool:
    return page.get_by_label(s("ch.key", lang), exact=True).evaluate("el => document.activeElement === el")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_student_writes_runs_and_submits_a_key_and_the_instructor_sees_it(browser, server, lang):
    code = f"room-{uuid.uuid4().hex[:6]}"
    name = {"en": "Ana", "zh": "安娜"}[lang]
    token = get_store().new_student(name, code)
    student = new_page(browser, lang, 1440, 900)
    student.goto(f"{server}/challenge?s={token}&lang={lang}")
    student.wait_for_selector("h1", timeout=60_000)
    wait_idle(student)

    write_key(student, lang, TYPO)  # named at a pause in typing, the caret still in the box, before Run
    where = {"en": "line 1, column 10", "zh": "第 1 行第 10 列"}[lang]
    error = student.locator('[data-testid="stAlert"]').filter(has_text=where)
    error.wait_for(timeout=60_000)
    assert "max_tokns" in error.inner_text() and still_typing_in_the_key(student, lang)
    shoot(student, f"1-typo-{lang}", error)

    write_key(student, lang, FIXED)  # the typo's message goes with the typo, before Run
    error.wait_for(state="detached", timeout=30_000)
    assert still_typing_in_the_key(student, lang)
    assert student.get_by_label(s("ch.key", lang), exact=True).input_value() == FIXED  # nothing typed was lost
    student.get_by_role("button", name=s("ch.run", lang), exact=True).click()
    student.get_by_text(s("ch.who_paid", lang), exact=True).first.wait_for(timeout=180_000)
    wait_idle(student)
    student.wait_for_function(DRAWN, timeout=60_000)  # the three timelines drawn, at the recordings' last step
    shoot(student, f"2-beside-fcfs-{lang}", student.get_by_text(s("ch.beside", lang), exact=True))

    student.get_by_role("button", name=s("ch.submit", lang), exact=True).click()
    student.get_by_text(s("ch.hidden_grade", lang), exact=True).wait_for(timeout=180_000)
    wait_idle(student)
    board = student.get_by_text(s("ch.board.title", lang, code=code), exact=True)
    board.wait_for(timeout=30_000)
    shoot(student, f"3-submitted-{lang}", student.get_by_text(s("ch.hidden_grade", lang), exact=True))
    body, html = student.inner_text("body"), student.content()
    hidden = [str(seed) for seed in hidden_seeds(get_store().server_secret(SECRET), code)]
    assert all(seed not in body and seed not in html for seed in hidden)
    assert_no_errors(student)

    instructor = new_page(browser, lang, 1440, 900)
    instructor.goto(f"{server}/class?instructor=1&lang={lang}")
    instructor.wait_for_selector("h1", timeout=60_000)
    wait_idle(instructor)
    instructor.locator('input[type="password"]').fill(PASSCODE)
    instructor.locator('[data-testid="stMain"] button').filter(has_text=s("cv.unlock", lang)).click()
    field = instructor.locator(".st-key-class-view-class-widget input")
    field.wait_for(timeout=30_000)
    field.fill(code)
    field.press("Enter")
    heading = instructor.get_by_text(s("ch.board.instructor_title", lang), exact=True)
    heading.wait_for(timeout=60_000)
    wait_idle(instructor)
    table = instructor.locator(".st-key-class-challenge-board")
    table.get_by_text(FIXED).wait_for(timeout=30_000)
    assert name in table.inner_text()
    shoot(instructor, f"4-instructor-board-{lang}", table)
    assert_no_errors(instructor)
    student.close()
    instructor.close()
