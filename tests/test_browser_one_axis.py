"""What a projector shows while a lecture moment plays, at 1280×720 in both languages: side-by-side timelines keep
one step axis to the last frame (the run that ended first says where, in its lane), and while the runs are still
computed the player's counter is the one progress read-out, its total and the engine's steps agreeing."""
import re
import time

import pytest
from browser_support import ARTIFACTS, STEPS_SO_FAR, assert_no_errors, new_page, serve, wait_idle

from ui.shell.i18n import strings

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
LAB = "static-vs-continuous"


def say(key: str, lang: str) -> str:
    return strings()[key][lang]


def open_lab(browser, url: str, lang: str, **context):
    page = new_page(browser, lang, WIDTH, HEIGHT, **context)
    page.goto(f"{url}?lang={lang}")
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    return page


def press_moment(page, moment: str, lang: str) -> None:
    page.get_by_role("button", name=re.compile(re.escape(say(f"moment.name.{moment}", lang)))).first.click()
    page.get_by_role("button", name=say("pred.skip", lang), exact=True).click()
    # the first frame comes once the first run is computed: under a whole suite on two cores, with a neighbour's
    # cold server computing the same runs, fresh33 saw it take over 120 s
    page.wait_for_selector(".lab-frame-value", timeout=240_000)


def x_ranges(page) -> list[list[float]]:
    """The step range each timeline shows (the live charts are iframes holding one plotly chart each)."""
    ranges = []
    for frame in page.frames:
        got = frame.evaluate("""() => { const p = document.querySelector('.js-plotly-plot');
            return p && p._fullLayout && p._fullLayout.yaxis.title.text ? p._fullLayout.xaxis.range : null; }""") \
            if frame != page.main_frame else None
        if got:
            ranges.append([round(v, 1) for v in got])
    return ranges


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_last_frame_shows_both_runs_on_one_step_axis(browser, server, lang):
    # reduced motion: ▶ goes straight to the last step (what a lecturer sees after the run has played)
    page = open_lab(browser, f"{server}/{LAB}", lang, reduced_motion="reduce")
    press_moment(page, "fixed-batch-holes", lang)
    page.wait_for_function("() => !document.querySelector('.lab-frame-computing')", timeout=300_000)
    wait_idle(page)
    page.get_by_role("button", name=re.compile(r"^(播放|Play)")).first.click()  # "Play (reduced motion: …)"
    page.wait_for_function(f"""() => [...document.querySelectorAll('.st-key-{LAB}-frame-counter .lab-frame-value')]
        .some(e => /^(\\d+) \\/ \\1$/.test(e.innerText.trim()))""", timeout=60_000)
    wait_idle(page)
    value = page.locator(f".st-key-{LAB}-frame-counter .lab-frame-value").first.inner_text()
    frame, last = map(int, re.match(r"(\d+) / (\d+)", value).groups())
    assert frame == last > 0
    page.wait_for_function("() => [...document.querySelectorAll('iframe')].length >= 2", timeout=30_000)
    for _ in range(60):  # the charts draw in their frames after the page settles: a busy machine takes longer
        ranges = x_ranges(page)
        if len(ranges) == 2 and min(r[1] for r in ranges) >= last:  # both drawn, at the last frame
            break
        time.sleep(0.5)
    assert len(ranges) == 2 and ranges[0] == ranges[1], ranges  # one step axis, at the last step
    assert ranges[0][1] >= last  # the window ends at the last step, for both
    done = [f.evaluate("() => document.body.innerText") for f in page.frames if f != page.main_frame]
    note = re.escape(say("tl.done_note", lang)).replace(re.escape(" · "), r"\s*")  # two lines in the chart
    note = note.replace(re.escape("{step}"), r"(\d+)")
    ended_at = [re.search(note, text) for text in done]
    ended_at = [int(m.group(1)) for m in ended_at if m]
    assert len(ended_at) == 1 and ended_at[0] < last  # continuous batching's lane: where it ended
    assert_no_errors(page)
    page.screenshot(path=str(ARTIFACTS / f"one-axis-last-frame-{lang}.png"))
    page.close()


@pytest.fixture(scope="module")
def cold_server(tmp_path_factory):
    """A server of this module's own with no run store: its runs are computed while the test watches."""
    yield from serve(tmp_path_factory.mktemp("cache-one-axis"), "one-axis", {"SERVING_LAB_RUN_STORE": ""})


# a moment per language, so that each is computed afresh on the cold server
COMPUTED = {"en": (LAB, "fixed-batch-holes"), "zh": ("policies", "support-bot-sla")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_while_runs_are_computed_the_counter_is_the_one_progress_read_out(browser, cold_server, lang):
    lab, moment = COMPUTED[lang]
    page = open_lab(browser, f"{cold_server}/{lab}", lang)
    press_moment(page, moment, lang)
    samples = []
    while len(samples) < 5:
        line = page.locator(f".st-key-{lab}-frame-counter").first.inner_text()
        if "…" not in line:
            break  # the runs ended before five samples: the test shows too little
        frame, last = map(int, re.search(r"(\d+) / (\d+)", line).groups())
        steps = int(re.search(STEPS_SO_FAR[lang], line).group(1))
        samples.append((frame, last, steps))
        assert steps == last, line  # the counter's total is the step the engine is at: one number, said once
        body = page.inner_text("body")
        assert len(re.findall(STEPS_SO_FAR[lang], body)) == 1, "one read-out of the engine's progress on the page"
        if len(samples) == 2:
            page.screenshot(path=str(ARTIFACTS / f"one-read-out-while-computing-{lang}.png"))
        time.sleep(1)  # the counter redraws itself every 2 s while the runs are computed
    assert len(samples) == 5, f"the runs ended after {len(samples)} samples"
    assert samples[-1][2] > samples[0][2], samples  # it moves while the engine runs
    assert_no_errors(page)
    page.close()
