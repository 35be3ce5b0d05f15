"""The lab in a real browser: Debian's chromium driven by Playwright against `python -m ui.serve`.

Installs nothing: `make test` makes sure /usr/bin/chromium is there. Screenshots of every page go
to tests/artifacts/ (ignored by git).
"""
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
PAGES = ["", "lesson-overview", "lesson-mechanisms-myths", "why-batch", "static-vs-continuous", "paged-kv", "policies",
         "tasks", "quiz", "playground"]  # "": home, the default page
PLAYERS = {"static-vs-continuous": "🎓 Holes in a fixed batch", "paged-kv": "🎓 Contiguous vs paged",
           "policies": "🎓 The support bot's SLA", "playground": "Run"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium (apt-get install -y chromium)")
    port = free_port()
    env = {**os.environ, "SERVING_LAB_CACHE": str(tmp_path_factory.mktemp("cache"))}
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "server.log", "w")  # the server's own output, for when a test fails
    proc = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port), "--server.address",
                             "127.0.0.1", "--server.headless", "true"], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("streamlit did not come up")
    yield url
    proc.terminate()
    proc.wait(timeout=20)
    log.close()


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def wait_idle(page) -> None:
    """Until the script has stopped running (Streamlit shows its status widget while it runs)."""
    page.wait_for_function("""() => {
        const busy = !!document.querySelector('[data-testid="stStatusWidget"]');
        window.__idle = busy ? 0 : (window.__idle || 0) + 1;
        return window.__idle >= 3;
    }""", polling=200, timeout=120_000)


def open_page(browser, url: str, lang: str = "zh"):
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.goto(url)
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    if lang == "en":
        page.get_by_text("English", exact=True).click()
        page.wait_for_function("() => !/[\\u4e00-\\u9fff]/.test(document.querySelector('h1').innerText)",
                               timeout=30_000)
        wait_idle(page)
    return page


def assert_no_errors(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in page.inner_text("body")


def counter(page, name: str) -> int:
    """The frame shown (during a rerun the old counter can briefly sit beside the new one)."""
    shown = page.locator(f".st-key-{name}-frame-counter [data-testid=stMetricValue]")
    shown.first.wait_for(timeout=30_000)
    return max(int(re.match(r"\d+", text).group()) for text in shown.all_inner_texts())


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_page_renders_without_errors(browser, server, lang):
    for name in PAGES:
        page = open_page(browser, f"{server}/{name}", lang)
        time.sleep(1)
        assert_no_errors(page)
        if lang == "zh":
            assert re.search(r"[\u4e00-\u9fff]", page.inner_text("h1"))
        page.screenshot(path=str(ARTIFACTS / f"{name or 'home'}-{lang}.png"), full_page=True)
        page.close()


@pytest.mark.parametrize("name", list(PLAYERS))
def test_play_advances_the_frame_counter(browser, server, name):
    page = open_page(browser, f"{server}/{name}", "en")
    page.get_by_role("button", name=PLAYERS[name], exact=True).click()
    page.wait_for_selector(f".st-key-{name}-frame-counter", timeout=120_000)
    time.sleep(1)
    before = counter(page, name)
    page.get_by_role("button", name="▶", exact=True).click(force=True)
    deadline = time.monotonic() + 30  # ~10 frames/s when playing; a slow machine gets time, a stall does not
    while counter(page, name) <= before + 5 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert counter(page, name) > before + 5
    page.get_by_role("button", name="⏸", exact=True).click()
    page.get_by_role("button", name="▶", exact=True).wait_for(timeout=30_000)  # paused: the page has rerun
    time.sleep(1)
    paused = counter(page, name)
    time.sleep(1.5)
    assert counter(page, name) == paused
    assert_no_errors(page)
    assert page.locator("iframe").count() >= 1  # the live charts
    page.screenshot(path=str(ARTIFACTS / f"{name}-playing.png"), full_page=True)
    page.close()


def test_language_switch(browser, server):
    page = open_page(browser, f"{server}/static-vs-continuous", "zh")
    assert page.inner_text("h1") == "静态批处理 vs 连续批处理"
    page.get_by_text("English", exact=True).click()
    page.wait_for_function("() => document.querySelector('h1').innerText === 'Static vs continuous batching'")
    page.get_by_text("中文", exact=True).click()
    page.wait_for_function("() => document.querySelector('h1').innerText === '静态批处理 vs 连续批处理'")
    page.close()


def test_why_batch_measures_now(browser, server):
    page = open_page(browser, f"{server}/why-batch", "en")
    page.get_by_role("button", name="Measure now", exact=True).click()
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    assert "that of one sequence" in page.inner_text("body")  # the takeaway, from the measured rows
    assert_no_errors(page)
    page.close()


def test_malformed_trace_is_explained(browser, server, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "header", "version": 1}\n{"kind": "request", "request_id": "a"}\n')
    page = open_page(browser, f"{server}/playground", "en")
    page.get_by_role("radio", name="Upload a trace").click()
    page.locator("input[type=file]").set_input_files(str(bad))
    page.get_by_text("This trace cannot be used: line 2").wait_for(timeout=30_000)
    assert_no_errors(page)
    page.close()
