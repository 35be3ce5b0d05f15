"""The quiz's tries and the class view's answers in a real browser, zh and en: an empty Submit, twice,
leaves the try count where it was and reveals nothing; a wrong answer then uses one try. The class view draws a
numeric answer as its number, green when right, and a student's `<b>x</b>` as those characters, not bold.

A numeric question, on its real runs: too high, and where to look, without the figure; the figure once it is done.

Screenshots: tests/artifacts/quiz-empty-submit-{lang}-{size}.png, quiz-wrong-try-*, quiz-numeric-too-high-*,
quiz-numeric-done-* and class-view-numeric-{lang}-{size}.png, at 1440x900 and 1280x720."""
import re
import time
import uuid

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from browser_support import ARTIFACTS, assert_no_errors, new_page, open_page, wait_idle

from classroom import get_store
from lessons import load_quiz, quiz_order
from tests.test_browser_poll import SIZES, switch_language, unlock, wait_for_text
from tests.test_browser_quiz import move
from ui.shell.i18n import strings
from viz.classroom import RIGHT

pytestmark = pytest.mark.browser
STRINGS = strings()
NEED_OPTION = {"zh": "先选一个选项再提交", "en": "Pick an option before you submit"}
BOLD = "<b>x</b>"
RATIO = [0.874 / 0.379, 0.874, 0.379]  # fixed-slot-ratio's two runs: 2.31×


def shoot(page, name: str, selector: str | None = None) -> None:
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        time.sleep(1.0)
        if selector:
            page.locator(selector).first.evaluate("el => el.scrollIntoView({block: 'center'})")
            time.sleep(0.3)
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}x{height}.png"))
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})


def tries_left(page, lang: str, left: int) -> str:
    return STRINGS["quiz.tries_left"][lang].format(left=left, n=2)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_empty_submit_leaves_the_try_count_and_a_wrong_answer_uses_one(browser, server, lang):
    order = quiz_order(load_quiz(lang), 0)
    i, q = next((i, q) for i, q in enumerate(order) if q.type == "single")
    page = open_page(browser, f"{server}/quiz", lang)
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    move(page, lang, 0, i, len(order))
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text(tries_left(page, lang, 2), exact=True).wait_for(timeout=30_000)
    submit = page.get_by_role("button", name=STRINGS["quiz.submit"][lang], exact=True)
    for _ in range(2):  # a second empty Submit too reveals nothing and leaves the question open
        submit.click()
        page.get_by_text(NEED_OPTION[lang]).wait_for(timeout=30_000)
        wait_idle(page)
        shown = main.inner_text()
        assert tries_left(page, lang, 2) in shown and STRINGS["quiz.retry"][lang] not in shown
        assert STRINGS["quiz.expected"][lang] not in shown and q.explanation not in shown
    assert_no_errors(page)
    shoot(page, f"quiz-empty-submit-{lang}")
    wrong = next(k for k in range(len(q.options)) if k != q.answer)
    page.get_by_text(q.options[wrong], exact=True).click()
    wait_idle(page)
    submit.click()
    page.get_by_text(STRINGS["quiz.retry"][lang]).wait_for(timeout=30_000)
    wait_idle(page)
    shown = main.inner_text()
    assert tries_left(page, lang, 1) in shown and q.hint in shown and q.explanation not in shown
    assert_no_errors(page)
    shoot(page, f"quiz-wrong-try-{lang}")
    page.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_wrong_numeric_try_says_which_way_and_where_to_look_and_the_figure_comes_at_the_end(browser, server, lang):
    """fixed-slot-ratio on its real runs (the tiny model): 50 is far too high, 0.01 far too low."""
    order = quiz_order(load_quiz(lang), 0)
    i, q = next((i, q) for i, q in enumerate(order) if q.id == "fixed-slot-ratio")
    page = open_page(browser, f"{server}/quiz", lang)
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    move(page, lang, 0, i, len(order))
    main = page.locator('[data-testid="stMain"]')
    page.locator(f".st-key-quiz-q-{q.id}-run button").click()
    main.get_by_text(STRINGS["quiz.ran_versus"][lang]).wait_for(timeout=300_000)
    wait_idle(page)
    box = page.get_by_label(STRINGS["quiz.number"][lang].format(unit=q.unit), exact=True)
    box.fill("50")
    box.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name=STRINGS["quiz.submit"][lang], exact=True).click()
    # 120 s: one grading rerun, but beside another worker's browser test on two cores (CI missed 30 s once); if
    # it never comes, the page's text says what came instead
    try:
        main.get_by_text({"en": "Too high", "zh": "偏高了"}[lang]).wait_for(timeout=120_000)
    except PlaywrightTimeout:
        raise AssertionError(main.inner_text()[-2000:]) from None
    wait_idle(page)
    shown = main.inner_text()
    assert tries_left(page, lang, 1) in shown and q.hint in shown
    assert not re.search(r"(?<![\w.])\d+\.\d", shown), shown  # no measured figure anywhere on the page
    assert_no_errors(page)
    shoot(page, f"quiz-numeric-too-high-{lang}")
    box = page.get_by_label(STRINGS["quiz.number"][lang].format(unit=q.unit), exact=True)
    box.fill("0.01")
    box.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name=STRINGS["quiz.submit_again"][lang], exact=True).click()
    main.get_by_text(STRINGS["quiz.expected"][lang]).wait_for(timeout=120_000)
    wait_idle(page)
    shown = main.inner_text()
    figure = re.search(r"(\d+\.\d\d)( 倍|×)", shown)
    assert figure and STRINGS["quiz.expected"][lang] in shown, shown  # the figure, as people write it
    assert not re.search(r"\d\.\d{3,}", shown), shown
    assert_no_errors(page)
    shoot(page, f"quiz-numeric-done-{lang}", f"text={STRINGS['quiz.expected'][lang]}")
    page.close()


def test_the_class_view_draws_a_numeric_answer_as_a_number_and_student_text_as_text(browser, server):
    code, db = f"num-{uuid.uuid4().hex[:6]}", get_store()
    q = next(q for q in load_quiz("en") if q.id == "fixed-slot-ratio")
    for name, given, right in (("Ann", "2.3", True), ("Ben", "5", False), (BOLD, BOLD, False)):
        db.record_answer(db.new_student(name, code), q.id, {"answer": given, "measured": RATIO}, 1, right)
    page = new_page(browser, "en", *SIZES[0])
    unlock(page, server, "en", code)
    box = f".st-key-class-view-q-{q.id}"
    for lang in ("en", "zh"):
        if lang == "zh":
            switch_language(page, "zh")
        unit = "×" if lang == "en" else " 倍"
        said = {"en": "Their runs measured 2.31×", "zh": "学生的运行测得：2.31 倍"}[lang]
        wait_for_text(page, box, re.escape(said))
        page.locator(f"{box} .js-plotly-plot .ytick text").first.wait_for(timeout=30_000)
        wait_idle(page)
        expected = sorted([f"2.3{unit}", f"5{unit}", BOLD])
        try:  # the last language's chart may still be on screen for a moment after the switch
            page.wait_for_function("([box, want]) => JSON.stringify([...document.querySelectorAll("
                                   "box + ' .ytick text')].map(e => e.textContent).sort()) === JSON.stringify(want)",
                                   arg=[box, expected], polling=200, timeout=30_000)
        except PlaywrightTimeout:
            pass  # the assertion below says what is shown instead
        labels = page.locator(f"{box} .ytick text").all_text_contents()
        assert sorted(labels) == sorted([f"2.3{unit}", f"5{unit}", BOLD]), labels  # numbers; the text as typed
        assert page.locator(f"{box} .ytick tspan[style*='bold']").count() == 0  # nothing drawn bold
        fills = page.locator(f"{box} .bars path").evaluate_all("els => els.map(e => e.style.fill)")
        green = "rgb({}, {}, {})".format(*(int(RIGHT[k:k + 2], 16) for k in (1, 3, 5)))
        assert sorted(fills).count(green) == 1 and len(set(fills)) == 2, fills  # 2.3 right, the other two not
        text = page.locator('[data-testid="stMain"]').inner_text()
        assert "{'answer'" not in text and '{"answer"' not in text
        assert_no_errors(page)
        shoot(page, f"class-view-numeric-{lang}", box)
    page.close()
