"""WCAG 2.2 AA in a real browser: axe-core (axe-playwright-python's bundled axe.min.js, offline) over every page in
zh and en, paused and playing, instructor mode on and off, the chart frames included; the player driven by the
keyboard alone; and under prefers-reduced-motion nothing moves on its own. Streamlit's own accessible names ("Help
for …", "Open", "Skip to main content") are checked beside axe: each must be in the page's language.

A violation that comes from Streamlit's own markup and cannot be fixed from the app is listed in STREAMLIT_OWN
with the reason, and only there is it let through."""
import json
import re
import time

import pytest
from axe_playwright_python.sync_playwright import Axe
from browser_support import (ARTIFACTS, PLAYER_NAMES, assert_no_errors, choose_speed, counter, new_page,
                             player_button)

from ui.shell.a11y import STREAMLIT_NAMED, streamlit_words
from ui.shell.i18n import strings

pytestmark = pytest.mark.browser

PAGES = ["", "lesson-overview", "lesson-paged-attention", "why-batch", "static-vs-continuous", "paged-kv", "policies",
         "real-server", "tasks", "quiz", "playground", "glossary"]  # "": home
SERIOUS = ("critical", "serious")
# (rule id, a fragment of the node's HTML) -> why it is Streamlit's and out of the app's reach. Empty: the one such
# violation found (list/listitem: st.navigation puts each section's div straight in its ul) is fixed from the app
# (ui/shell/a11y.py gives the sections role=list), so nothing is let through.
STREAMLIT_OWN: dict[tuple[str, str], str] = {}
AXE = Axe()


def settle(page) -> None:
    """Until the script has stopped and no element of an earlier run is left (a stale one is drawn faded)."""
    page.wait_for_function("""() => {
        const app = document.querySelector('[data-testid="stApp"]');
        const state = app ? app.getAttribute('data-test-script-state') : 'initial';
        const busy = document.querySelector('[data-testid="stStatusWidget"], [data-stale="true"]')
            || ['initial', 'running', 'rerunRequested'].includes(state);
        window.__settled = busy ? 0 : (window.__settled || 0) + 1;
        return window.__settled >= 4;
    }""", polling=250, timeout=120_000)


def axe_violations(page) -> list[dict]:
    """axe-core in the page and in every same-origin frame (the live charts are iframes): critical and serious
    violations, each with the frame it was found in."""
    found = []
    for frame in page.frames:
        try:
            frame.evaluate(AXE.axe_script)
            result = frame.evaluate("axe.run(document, {resultTypes: ['violations']})")
        except Exception:  # a frame gone while a rerun replaced it
            if frame == page.main_frame:
                raise
            continue
        for v in result["violations"]:
            if v["impact"] not in SERIOUS:
                continue
            for node in v["nodes"]:
                target = " ".join(map(str, node["target"]))
                if any(rule == v["id"] and part in node["html"] for (rule, part) in STREAMLIT_OWN):
                    continue
                found.append({"rule": v["id"], "impact": v["impact"], "frame": frame.url[-60:] + (
                              "" if frame == page.main_frame else f" (frame {frame.name})"), "target": target,
                              "html": node["html"][:200], "why": node.get("failureSummary", "")[:300]})
    return found


def open_at(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("h1", timeout=60_000)
    settle(page)


def check_page(page, url: str, lang: str, where: str) -> list[dict]:
    open_at(page, url)
    try:  # set by the app's script from its first run on (ui/shell/a11y.py); a loaded browser applies it late
        page.wait_for_function("(want) => document.documentElement.lang === want", arg=lang, timeout=30_000)
    except Exception:
        pass
    assert page.evaluate("() => document.documentElement.lang") == lang, where
    assert_no_errors(page)
    return [{"page": where, **v} for v in axe_violations(page) + names_in_another_language(page, lang)]


def names_in_another_language(page, lang: str) -> list[dict]:
    """Streamlit's own accessible names (its help buttons, steppers, the sidebar, the skip link...), each in the
    page's language (ui/shell/a11y.py): one that reads in the other language is reported as a violation."""
    words = streamlit_words()
    other = {pair[1 if lang == "en" else 0] for pair in words["plain"]}
    before, after = words["help_for"][1 if lang == "en" else 0].split("{label}")
    pattern = re.compile(f"^{re.escape(before)}.+{re.escape(after)}$")
    waited = "the names were renamed"
    try:  # the script renames them as Streamlit draws them: wait for it, then read what is left
        page.wait_for_function("""([selector, other, pattern]) => ![...document.querySelectorAll(selector)].some(
            e => other.includes(e.getAttribute('aria-label')) || new RegExp(pattern).test(e.getAttribute('aria-label')
            || '')) && ![...document.querySelectorAll('a[data-testid="stSkipToContent"]')].some(
            a => other.includes(a.textContent))""", arg=[STREAMLIT_NAMED, sorted(other), pattern.pattern],
                               timeout=10_000)
    except Exception:
        waited = "still there after 10 s"
    # read after two frames: a button Streamlit drew since the wait is renamed in the frame after it (the script's
    # observer), and only a name still in the other language then is one a screen reader would read
    named = page.evaluate("""async (selector) => {
        await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
        return [...document.querySelectorAll(selector)].map(e => e.getAttribute('aria-label')).concat(
            [...document.querySelectorAll('a[data-testid="stSkipToContent"]')].map(a => a.textContent));
    }""", STREAMLIT_NAMED)
    return [{"rule": "lab-name-language", "impact": "serious", "frame": "main", "target": name, "html": name,
             "why": f"Streamlit's name {name!r} is not in the page's language ({lang}; {waited})"}
            for name in named if name and (name in other or pattern.match(name))]


def report(found: list[dict], name: str) -> str:
    (ARTIFACTS / f"axe-{name}.json").write_text(json.dumps(found, indent=1, ensure_ascii=False))
    return "\n".join(f"{v['page']}: {v['impact']} {v['rule']} in {v['frame']} at {v['target']}: {v['why']}"
                     for v in found[:20])


def test_streamlits_names_follow_the_language_switched_to_and_back(browser, server):
    """The sidebar's language switch, clicked as a person does (no new page): Streamlit's names are renamed into
    English, then back into Chinese, on the page as it stays."""
    page = new_page(browser, "zh", 1440, 900)
    open_at(page, f"{server}/static-vs-continuous?lang=zh")
    found = names_in_another_language(page, "zh")
    for lang in ("en", "zh"):
        page.locator('[data-testid="stSidebar"]').get_by_text({"zh": "中文", "en": "English"}[lang], exact=True).click()
        page.wait_for_function("(lang) => document.documentElement.lang === lang", arg=lang, timeout=30_000)
        settle(page)
        found += [{**v, "after": f"switched to {lang}"} for v in names_in_another_language(page, lang)]
    assert_no_errors(page)
    page.close()
    assert not found, found


def test_a_name_streamlit_writes_again_on_a_button_it_keeps_is_renamed_again(browser, server):
    """React may write its English name again on a stepper it keeps (no element added): the page renames it."""
    page = new_page(browser, "zh", 1440, 900)
    open_at(page, f"{server}/tasks?lang=zh")
    step_up = page.locator('[data-testid="stNumberInputStepUp"]').first
    step_up.wait_for(timeout=60_000)
    zh = dict(streamlit_words()["plain"])["Increment"]
    page.wait_for_function("(want) => document.querySelector('[data-testid=\"stNumberInputStepUp\"]')"
                           ".getAttribute('aria-label') === want", arg=zh, timeout=30_000)
    step_up.evaluate("(button) => button.setAttribute('aria-label', 'Increment')")  # as React's own write would
    page.wait_for_function("(want) => document.querySelector('[data-testid=\"stNumberInputStepUp\"]')"
                           ".getAttribute('aria-label') === want", arg=zh, timeout=10_000)
    assert_no_errors(page)
    page.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_axe_finds_nothing_serious_on_any_page(browser, server, lang):
    """Every page, paused (nothing run yet), instructor mode off; the lab pages and Home again with it on."""
    page = new_page(browser, lang, 1440, 900)
    found = []
    for name in PAGES:
        found += check_page(page, f"{server}/{name}?lang={lang}", lang, f"/{name} {lang}")
    for name in ("", "paged-kv"):
        found += check_page(page, f"{server}/{name}?lang={lang}&instructor=1", lang, f"/{name} {lang} instructor")
    page.close()
    assert not found, report(found, f"pages-{lang}")


def run_paged_kv(page, lang: str) -> tuple[int, int]:
    """Run's button pressed by the keyboard (focus, Enter) and the runs awaited to their end: (frame, last)."""
    run = page.locator('[data-testid="stMain"]').get_by_role("button", name={"zh": "运行", "en": "Run"}[lang],
                                                                  exact=True)
    run.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("""() => { const c = document.querySelector('.st-key-paged-kv-frame-counter');
                                      return c && !document.querySelector('.lab-frame-computing'); }""",
                           timeout=300_000)
    settle(page)
    text = page.locator(".st-key-paged-kv-frame-counter .lab-frame-value").first.inner_text()
    frame, last = map(int, re.match(r"(\d+) / (\d+)", text).groups())
    return frame, last


def at_frame(page, frame: int) -> None:
    """Until the player's counter shows `frame` (a scrub is sent when the key is let go, then the page reruns)."""
    page.wait_for_function("""(frame) => [...document.querySelectorAll(
        '.st-key-paged-kv-frame-counter .lab-frame-value')].some(el => parseInt(el.innerText) === frame)""",
                           arg=frame, timeout=30_000)
    settle(page)


def focused_name(page) -> str:
    return page.evaluate("() => { const el = document.activeElement; return el.getAttribute('aria-label') || "
                         "el.innerText || el.tagName; }")


def tab_to(page, names: tuple[str, ...], most: int = 12) -> int:
    """Tab until the focused element has one of `names`: how many presses it took."""
    for n in range(1, most + 1):
        page.keyboard.press("Tab")
        if focused_name(page) in names:
            return n
    raise AssertionError(f"{names} not reached in {most} Tabs; the focus is on {focused_name(page)!r}")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_player_is_operated_by_keyboard_alone(browser, server, lang):
    """From the top of the page, the skip link to Run in under 5 key presses and Run (Enter); Tab to ▶ (named Play
    in the student's language), Enter plays and Space pauses, → and ← step while a player button has focus, Tab on
    to the scrubber, End goes to the last step and arrows step; one axe look while it plays (en)."""
    page = new_page(browser, lang, 1440, 900)
    open_at(page, f"{server}/paged-kv?lang={lang}")
    skip = strings()["a11y.skip_run"][lang]
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # the top of the page
    presses = tab_to(page, (skip,), most=4) + 1
    page.keyboard.press("Enter")
    run_name = {"zh": "运行", "en": "Run"}[lang]
    page.wait_for_function("(name) => document.activeElement.innerText.trim() === name", arg=run_name, timeout=10_000)
    assert presses < 5, presses
    frame, last = run_paged_kv(page, lang)
    assert frame == 0 and last > 0
    zh = lang == "zh"
    names = {k: v[0 if zh else 1] for k, v in PLAYER_NAMES.items()}
    for key in ("first", "back", "step"):  # every glyph button has its name
        assert player_button(page, key).count() >= 1, key
    choose_speed(page, 2, lang)  # slow: it still plays after the axe look below
    settle(page)
    player_button(page, "first").first.focus()  # the player's first control (the set-up above has folded away)
    assert tab_to(page, (names["play"],)) == 2  # ⏮, ◀, ▶
    assert focused_name(page) == names["play"]
    page.keyboard.press("Enter")
    player_button(page, "pause").first.wait_for(timeout=20_000)
    settle(page)  # the page drawn (while it reruns, Streamlit fades the elements of the run before)
    if not zh:  # axe while playing: the charts animate in their frames
        found = [{"page": "paged-kv playing", **v} for v in axe_violations(page)]
        assert not found, report(found, "playing")
    player_button(page, "pause").first.focus()
    page.keyboard.press("Space")
    player_button(page, "play").first.wait_for(timeout=20_000)
    settle(page)
    paused_at = counter(page, "paged-kv")
    assert 0 < paused_at < last
    for key, to in (("ArrowRight", paused_at + 1), ("ArrowLeft", paused_at)):  # a player button has focus
        player_button(page, "play").first.focus()
        page.keyboard.press(key)
        at_frame(page, to)
    player_button(page, "play").first.focus()
    slider = '[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]'
    for _ in range(6):  # on to the scrubber: past ▶| and the speed box
        page.keyboard.press("Tab")
        if page.evaluate(f"() => document.activeElement.matches('{slider}')"):
            break
    assert page.evaluate(f"() => document.activeElement.matches('{slider}')"), focused_name(page)
    label = page.locator(slider).first.get_attribute("aria-label")
    assert ("前进一步" if zh else "Step forward") in label  # the scrubber names its non-drag alternative
    page.keyboard.press("End")
    at_frame(page, last)
    page.locator(slider).first.focus()
    page.keyboard.press("ArrowLeft")
    at_frame(page, last - 1)
    assert_no_errors(page)
    page.screenshot(path=str(ARTIFACTS / f"a11y-keyboard-{lang}.png"))
    page.close()


def test_under_reduced_motion_play_does_not_animate_and_nothing_moves(browser, server):
    page = new_page(browser, "en", 1440, 900, reduced_motion="reduce")
    open_at(page, f"{server}/paged-kv?lang=en")
    page.wait_for_url(re.compile("motion=reduce"), timeout=30_000)  # the browser's preference, in the address
    settle(page)
    frame, last = run_paged_kv(page, "en")
    assert "motion=reduce" in page.url
    assert page.locator(".st-key-reduce_motion-widget input").first.is_checked()  # the sidebar says so
    drawn = page.evaluate("() => window.__labChartFrames || 0")
    play = page.get_by_role("button", name=re.compile(r"^Play \(reduced motion"))
    for _ in range(3):  # a click landing while the page reruns can be lost: a person clicks again
        play.first.click()
        try:
            at_frame(page, last)  # straight to the last step
            break
        except Exception:
            settle(page)
    assert counter(page, "paged-kv") == last
    assert player_button(page, "pause").count() == 0  # not playing
    time.sleep(2)
    assert counter(page, "paged-kv") == last
    assert page.evaluate("() => window.__labChartFrames || 0") == drawn  # no chart animated a frame
    assert_no_errors(page)
    page.screenshot(path=str(ARTIFACTS / "a11y-reduced-motion-en.png"))
    page.close()
