"""The quiz's question types in a real browser, zh and en: a two-tier self-check refuses a missing
reason with a message, takes a right answer with a wrong reason as not yet right; a prediction keeps its Run button
disabled until a prediction is committed, and refuses one that is not a number. Screenshots of each step go to
tests/artifacts/quiz-*.png."""
import time

import pytest
from browser_support import ARTIFACTS, assert_no_errors, open_page, wait_idle

from lessons import load_quiz, quiz_order
from ui.shell.i18n import strings

pytestmark = pytest.mark.browser
STRINGS = strings()
MESSAGES = {"need_reason": {"zh": "你选了答案，但还没选理由", "en": "You picked an answer but no reason yet"},
            "not_number": {"zh": "请填写一个数字", "en": "Enter a number"}}


def move(page, lang: str, here: int, there: int, total: int) -> None:
    """From question `here` to question `there` with the Next or Previous button, as a student would (a click that
    lands while the page reruns can be lost: the heading says where we are)."""
    for _ in range(3 * abs(there - here) + 3):
        heading = page.locator("h3").filter(has_text=STRINGS["quiz.question"][lang].format(i=there + 1, n=total))
        if heading.count():
            return
        shown = next(i for i in range(total) if page.locator("h3").filter(
            has_text=STRINGS["quiz.question"][lang].format(i=i + 1, n=total)).count())
        button = STRINGS["quiz.next" if there > shown else "quiz.prev"][lang]
        page.get_by_role("button", name=button, exact=True).click()
        time.sleep(0.5)
        wait_idle(page)
    raise AssertionError(f"the quiz did not get to question {there + 1}")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_two_tier_question_and_a_prediction_in_the_browser(browser, server, lang):
    order = quiz_order(load_quiz(lang), 0)  # the quiz's default seed
    i, two = next((i, q) for i, q in enumerate(order) if q.type == "two_tier")
    page = open_page(browser, f"{server}/quiz", lang)
    move(page, lang, 0, i, len(order))
    page.get_by_text(two.options[two.answer], exact=True).click()
    wait_idle(page)
    page.get_by_role("button", name=STRINGS["quiz.submit"][lang], exact=True).click()
    page.get_by_text(MESSAGES["need_reason"][lang]).wait_for(timeout=30_000)  # no reason: refused, no try used
    assert STRINGS["quiz.retry"][lang] not in page.inner_text("body")
    page.screenshot(path=str(ARTIFACTS / f"quiz-two-tier-no-reason-{lang}.png"), full_page=True)
    wrong = (two.reason + 1) % len(two.reasons)
    page.get_by_text(two.reasons[wrong], exact=True).click()
    wait_idle(page)
    page.get_by_role("button", name=STRINGS["quiz.submit"][lang], exact=True).click()
    page.get_by_text(STRINGS["quiz.retry"][lang]).wait_for(timeout=30_000)  # the right answer, a wrong reason
    assert two.explanation not in page.inner_text("body")
    assert_no_errors(page)
    page.screenshot(path=str(ARTIFACTS / f"quiz-two-tier-wrong-reason-{lang}.png"), full_page=True)

    j, predict = next((j, q) for j, q in enumerate(order) if q.predict and q.compare != "max_class")
    move(page, lang, i, j, len(order))
    run = page.locator(f".st-key-quiz-q-{predict.id}-run button")
    run.wait_for(timeout=30_000)
    assert run.is_disabled()  # the Run button waits for a committed prediction
    box = page.get_by_label(STRINGS["quiz.predict_label"][lang].format(unit=predict.unit), exact=True)
    box.fill("about double")
    box.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name=STRINGS["quiz.commit"][lang], exact=True).click()
    page.get_by_text(MESSAGES["not_number"][lang]).wait_for(timeout=30_000)
    assert run.is_disabled()
    page.screenshot(path=str(ARTIFACTS / f"quiz-prediction-refused-{lang}.png"), full_page=True)
    box.fill("1")
    box.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name=STRINGS["quiz.commit"][lang], exact=True).click()
    wait_idle(page)
    page.locator(f".st-key-quiz-q-{predict.id}-run button:not([disabled])").wait_for(timeout=30_000)
    assert_no_errors(page)
    page.screenshot(path=str(ARTIFACTS / f"quiz-prediction-committed-{lang}.png"), full_page=True)
    page.close()

