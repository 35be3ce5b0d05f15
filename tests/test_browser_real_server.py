"""The Real server page in Debian's chromium, opened by the instructor (the lab server has a passcode): a small load
against a `python -m engine serve` that the test starts, the live gauges drawn, both runs' results shown, in English
and Chinese."""
import pytest

from browser_support import ARTIFACTS, assert_no_errors, new_page, wait_idle
from test_browser_poll import unlock
from test_real_server_page import start_server

pytestmark = [pytest.mark.browser, pytest.mark.server]


@pytest.fixture(scope="module")
def engine_server():
    proc, url = start_server()
    yield url
    proc.terminate()
    proc.wait(timeout=20)


@pytest.mark.parametrize("lang,labels", [("en", ("Server base URL", "Requests", "Run", "Completed")),
                                         ("zh", ("服务器地址（base URL）", "请求数", "运行", "完成"))])
def test_the_real_server_page_runs_a_small_load_against_a_live_server(browser, server, engine_server, lang,
                                                                       labels):
    url_label, prompts_label, run_label, completed_label = labels
    page = new_page(browser, lang)
    unlock(page, server, lang, f"real-server-{lang}")  # the lab server has a passcode: the page is the instructor's
    page.goto(f"{server}/real-server?lang={lang}&instructor=1")
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    url_box = page.get_by_label(url_label)
    url_box.fill(engine_server)
    url_box.press("Enter")
    page.get_by_text("tiny", exact=False).first.wait_for(timeout=60_000)  # "talking to model tiny"
    prompts = page.get_by_label(prompts_label, exact=True)
    prompts.fill("4")
    prompts.press("Enter")
    page.wait_for_timeout(1000)
    page.get_by_role("button", name=run_label, exact=True).click()
    page.get_by_text("4 / 4").first.wait_for(timeout=180_000)
    completed = page.locator('[data-testid="stMetricLabel"]', has_text=completed_label)
    for _ in range(60):  # the figures are drawn after the counter: on a loaded machine, seconds after
        if completed.count() == 2:
            break
        page.wait_for_timeout(1000)
    assert completed.count() == 2  # server and lab
    assert page.locator(".js-plotly-plot").count() >= 4
    assert_no_errors(page)
    page.screenshot(path=str(ARTIFACTS / f"real-server-{lang}.png"), full_page=True)
    page.close()
