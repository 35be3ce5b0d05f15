"""Input never vanishes: text that is not a number, typed or pasted into a number box (「十二」 by an input method,
"abc" by keys), is refused where it is typed with a message in the page's language naming what was typed, and the box
keeps the number it had; a digit typed after it clears the message (ui/shell/a11y.py)."""
import pytest
from browser_support import ARTIFACTS, assert_no_errors, new_page, wait_idle

from ui.shell.i18n import strings

pytestmark = pytest.mark.browser
BOX = '[data-testid="stNumberInput"]'


@pytest.mark.parametrize("lang, typed, by_keys", [("zh", "十二", False), ("en", "abc", True)])
def test_a_non_number_is_refused_with_a_message_and_the_number_stays(browser, server, lang, typed, by_keys):
    page = new_page(browser, lang, 1280, 720)
    page.goto(f"{server}/quiz?lang={lang}")
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    box = page.locator(f"{BOX} input").first
    box.click()
    box.press("Control+a")
    page.keyboard.type("7")
    page.keyboard.press("Enter")
    wait_idle(page)
    page.wait_for_function(f"() => document.querySelector('{BOX} input').value === '7'", timeout=30_000)
    box.click()
    box.press("Control+a")
    if by_keys:
        page.keyboard.type(typed)
    else:  # an input method hands the page its text at once
        page.keyboard.insert_text(typed)
    said = strings()["a11y.not_a_number"][lang].replace("{typed}", typed)  # key by key, said whole
    note = page.locator(f"{BOX} .lab-not-a-number[role='alert']").first
    note.wait_for(timeout=10_000)
    assert note.inner_text() == said
    page.keyboard.press("Tab")  # leaving the box sends it: the number it had, not 0
    wait_idle(page)
    assert box.input_value() == "7" and note.inner_text() == said
    page.screenshot(path=str(ARTIFACTS / f"number-box-refused-{lang}-1280x720.png"))
    box.click()
    box.press("End")
    page.keyboard.type("3")
    page.locator(f"{BOX} .lab-not-a-number").wait_for(state="detached", timeout=10_000)
    assert box.input_value() == "73"
    assert_no_errors(page)
    page.close()
