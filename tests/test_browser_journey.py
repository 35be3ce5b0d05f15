"""Following one request on a projector (1280×720), in Chinese with instructor mode on and in English with it off:
on the paged KV page's pre-emption moment, "Follow a request" starts on a request that was preempted and shows its
journey in the page's language: it waited, ran its prefill, decoded, was preempted (its blocks freed), came back
and finished; the strip and the table follow the player's step. Reached from the keyboard alone: Tab to the switch,
Space to turn it on. Paused at step 0, the journey shows step 0 alone (nothing of what comes next), the student
predicts what the engine does to a request at the next step, and the engine's recorded step grades it, wrong and
then right.

Screenshots: tests/artifacts/journey-<lang>[-instructor]-1280x720.png."""
import re

import pytest
from browser_support import ARTIFACTS, assert_no_errors, new_page, PLAYER_NAMES, player_button, wait_idle
from test_browser_layout import enter_passcode

from ui.shell.i18n import strings

pytestmark = pytest.mark.browser

LAB = "paged-kv"


def say(key: str, lang: str) -> str:
    return strings()[key][lang]


@pytest.mark.parametrize("lang, instructor", [("zh", True), ("en", False)])
def test_a_request_is_followed_through_a_preemption_to_its_finish(browser, server, lang, instructor):
    page = new_page(browser, lang, 1280, 720, reduced_motion="reduce")
    page.goto(f"{server}/{LAB}?lang={lang}" + ("&instructor=1" if instructor else ""))
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    if instructor:
        enter_passcode(page)
    moment = say("moment.name.long-context-preemption", lang)
    page.get_by_role("button", name=re.compile(re.escape(moment))).first.click()
    page.get_by_role("button", name=say("pred.skip", lang), exact=True).click()
    page.wait_for_selector(".lab-frame-value", timeout=120_000)
    page.wait_for_function("() => !document.querySelector('.lab-frame-computing')", timeout=300_000)
    wait_idle(page)
    at_end = """() => [...document.querySelectorAll('.lab-frame-value')].some(e => {
        const [a, b] = e.innerText.split('/').map(x => parseInt(x)); return a > 0 && a === b; })"""
    if not page.evaluate(at_end):  # reduced motion: ▶ goes to the last step at once, nothing moves
        page.get_by_role("button", name=re.compile("^(%s)" % "|".join(PLAYER_NAMES["play"]))).first.click()
    page.wait_for_function(at_end, timeout=60_000)
    wait_idle(page)

    switch = page.get_by_label(say("journey.title", lang), exact=True)
    switch.focus()  # the keyboard: the switch takes focus, and Space turns it on
    page.keyboard.press("Space")
    wait_idle(page)
    table = page.locator('[data-testid="stMain"] table:has(th:text-is("%s"))' % say("journey.what", lang)).first
    table.wait_for(timeout=60_000)
    states = [cells[1] for cells in (row.split("\t") for row in table.inner_text().splitlines()[1:])]
    state = {s: say(f"journey.state.{s}", lang) for s in ("waiting", "prefill", "decode", "preempted", "finished")}
    assert state["preempted"] in states and states[-1] == state["finished"], states
    back = states[states.index(state["preempted"]) + 1]
    assert back in (state["waiting"], state["prefill"]), states  # back to the queue, or straight into a prefill
    assert state["prefill"] in states[states.index(state["preempted"]):], states  # its prompt computed again
    text = table.inner_text()
    assert bool(re.search(r"[\u4e00-\u9fff]", text)) == (lang == "zh"), text
    if say("wait.memory", lang).split("{")[0] in text:  # tried and refused for blocks: what alone would have let it
        assert say("lets_in.said", lang).split("{options}")[0].lstrip("。. ") in text, text  # in is said there
    assert page.locator('[data-testid="stMain"] [role="img"][aria-label*="%s"]'
                        % say("journey.strip", lang).split("{rid}")[1][:6]).count() >= 1
    table.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"journey-{lang}{'-instructor' if instructor else ''}-1280x720.png"))

    # predict the next step: long-0 (it arrived at step 0) read whole at the last step, then the player back at step
    # 0, where its journey shows step 0 alone; a guess wrong, then right, and the engine's recorded step 1 the judge
    for _ in range(3):  # a pick that lands while a rerun replaces the box is made again
        try:
            page.get_by_label(say("journey.pick", lang), exact=True).click(timeout=20_000)
            page.get_by_role("option", name="long-0", exact=True).click(timeout=20_000)
            wait_idle(page)
            page.locator('[data-testid="stMain"] [role="img"][aria-label^="long-0"]').wait_for(timeout=20_000)
            break
        except Exception:
            continue
    rows = [r.split("\t") for r in table.inner_text().splitlines()[1:]]
    at_one = next(state for steps, state, _ in rows if _covers(steps.rstrip(" ◀"), 1))
    right = next(s for s in ("waiting", "prefill", "decode", "preempted", "finished")
                 if say(f"journey.state.{s}", lang) == at_one)
    player_button(page, "first").first.click()
    page.wait_for_function("""() => [...document.querySelectorAll('.lab-frame-value')].every(
        e => parseInt(e.innerText) === 0)""", timeout=60_000)
    wait_idle(page)
    shown = [r.split("\t")[0].rstrip(" ◀") for r in table.inner_text().splitlines()[1:]]
    assert shown and not any(_covers(steps, 1) for steps in shown), shown  # step 1 is not on the page to be read
    assert say("journey.so_far", lang) in page.locator('[data-testid="stMain"]').inner_text()
    wrong = "finished" if right != "finished" else "decode"
    for guess, verdict in ((wrong, "journey.wrong"), (right, "journey.right")):
        said = page.get_by_text(re.compile("^" + re.escape(say(verdict, lang).split("{")[0])))
        for _ in range(3):  # a click that lands while a rerun replaces the form is made again
            page.locator('[data-testid="stRadio"]').last.get_by_text(say(f"journey.next.{guess}", lang),
                                                                      exact=True).click()
            page.get_by_role("button", name=say("journey.check", lang), exact=True).click()
            wait_idle(page)
            try:
                said.wait_for(timeout=15_000)
                break
            except Exception:
                continue
        assert said.count() == 1, (guess, verdict)
    # the player had been to the last step: these were practice, and nothing is counted as predicted before seeing
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert say("journey.seen_already", lang).split("{")[0] in main, main[-600:]
    assert say("journey.tally", lang).split("{")[0] not in main
    page.screenshot(path=str(ARTIFACTS / f"journey-predicted-{lang}{'-instructor' if instructor else ''}-1280x720.png"))
    assert_no_errors(page)
    page.close()


def _covers(steps: str, step: int) -> bool:
    first, _, last = steps.partition("–")
    return int(first) <= step <= int(last or first)
