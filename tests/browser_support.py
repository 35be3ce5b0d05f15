"""Shared pieces of the browser tests: the lab served by `python -m ui.serve` on a free port, Debian's
chromium driven by Playwright, and helpers that wait as a person would (for the script to go idle).

Installs nothing: `make test` makes sure /usr/bin/chromium and a CJK font are there. Screenshots go
to tests/artifacts/ (ignored by git)."""
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from engine.server.thread import free_port

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


# One passcode for every lab server the tests start: set before the server starts, so the server and the tests
# agree on it.
PASSCODE = "room 101 passcode"


def worker() -> str:
    """This pytest-xdist worker's name ("gw0", ...), or "main" without xdist: per-worker file names."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def serve(cache_dir: Path, name: str = "lab", env: dict[str, str] | None = None):
    """The lab served by `python -m ui.serve` on a free port, with its own cache folder: yields its URL, and
    stops it after. `env`: more of the server's environment."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium (apt-get install -y chromium)")
    port = free_port()
    # SERVING_LAB_DB (a temporary file, set by conftest.py) goes with the environment: the server stores there.
    # One torch thread, as in the tests' own process: two cores shared by the server, chromium and pytest.
    env = {**os.environ, "SERVING_LAB_CACHE": str(cache_dir), "SERVING_LAB_PASSCODE": PASSCODE,
           "OMP_NUM_THREADS": "1", **(env or {})}
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / f"server-{worker()}-{name}.log", "w")  # the server's own output, for when a test fails
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


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The lab server the browser tests of this test process share (students are isolated by browser contexts;
    under pytest-xdist, one per worker that runs browser modules). Its recorded runs are read through the test
    session's run store (conftest.py), so a moment computed once is not computed again. A module that needs a cold
    server (an empty run cache) overrides this fixture with `serve` of its own."""
    yield from serve(tmp_path_factory.mktemp("cache"), "shared")


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def wait_idle(page) -> None:
    """Until the script has stopped running: Streamlit shows its status widget while it runs, and its app element's
    script state is "rerunRequested" from the click on (before a loaded server has started the rerun) to "running"
    and on to "notRunning"."""
    page.wait_for_function("""() => {
        const app = document.querySelector('[data-testid="stApp"]');
        const state = app ? app.getAttribute('data-test-script-state') : 'initial';
        const busy = !!document.querySelector('[data-testid="stStatusWidget"]')
            || ['initial', 'running', 'rerunRequested'].includes(state);
        window.__idle = busy ? 0 : (window.__idle || 0) + 1;
        return window.__idle >= 3;
    }""", polling=200, timeout=120_000)


# the counter's note on runs still computed (player.computing): the step the engine is at
STEPS_SO_FAR = {"en": r"\(now at step (\d+)\)", "zh": r"现到第 (\d+) 步"}
LOCALES = {"zh": "zh-CN", "en": "en-US"}  # the browser's Accept-Language picks the first visit's language


def new_page(browser, lang: str = "zh", width: int = 1500, height: int = 1100, **context):
    """A page in a browser context of its own: contexts share no cookies or storage, so each is a new
    student (a new Streamlit session). `context`: more of the context's options (reduced_motion=...)."""
    context = browser.new_context(viewport={"width": width, "height": height}, locale=LOCALES[lang], **context)
    page = context.new_page()
    page.on("close", lambda _: context.close())
    return page


def open_page(browser, url: str, lang: str = "zh"):
    """Open `url` in a zh browser; for "en", switch with the sidebar's language control, as a person would."""
    page = new_page(browser, "zh")
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
    shown = page.locator(f".st-key-{name}-frame-counter .lab-frame-value")
    shown.first.wait_for(timeout=30_000)
    return max(int(re.match(r"\d+", text).group()) for text in shown.all_inner_texts())


# the player's buttons by the names assistive technology reads (ui/playback/player.py), in either language: their
# visible labels are glyphs (⏮ ◀ ▶ ⏸ ▶|)
PLAYER_NAMES = {"first": ("回到开头", "Back to the start"), "back": ("后退一步", "Step back"), "play": ("播放", "Play"),
                "pause": ("暂停", "Pause"), "step": ("前进一步", "Step forward")}


def player_button(page, name: str):
    """The player's button `name` (a key of PLAYER_NAMES), found by its accessible name, the first of its copies."""
    return page.get_by_role("button", name=re.compile("^(" + "|".join(map(re.escape, PLAYER_NAMES[name])) + ")$"))


def press(page, label: str, becomes: str) -> None:
    """Click the player's button `label` (a PLAYER_NAMES key) until the page shows `becomes` (play → pause,
    pause → play). A click that lands while the
    page reruns can be lost, and meanwhile the rerun's stale copy of the controls can stand beside the new
    one: the first copy is clicked and the first awaited. The retry stays because the loss is Streamlit's,
    not the lab's: its frontend drops an event from an element that a rerun in flight is replacing, and a
    playing page reruns on its own clock, so no click can be timed to miss every rerun (a person clicks again)."""
    after = player_button(page, becomes).first
    for _ in range(3):
        try:
            player_button(page, label).first.click(force=True, timeout=20_000)
            after.wait_for(timeout=20_000)
            return
        except Exception:
            wait_idle(page)
            if after.is_visible():
                return
    raise AssertionError(f"{label} was pressed three times and the page never showed {becomes}")


def press_play(page) -> None:
    press(page, "play", "pause")


def press_pause(page) -> None:
    press(page, "pause", "play")


def choose_speed(page, steps_per_s: int, lang: str) -> None:
    """The player's speed box set to `steps_per_s` (by mouse), for a test that must still find it playing after a
    while: Auto plays any ended run in about 25 s."""
    from ui.shell.i18n import strings

    name = strings()["player.speed_value"][lang].format(n=steps_per_s)
    page.locator("[class*='player-controls'] [data-testid='stSelectbox']").first.click()
    page.get_by_role("option", name=name, exact=True).click()
    page.wait_for_function("(want) => [...document.querySelectorAll(\"[class*='player-controls'] input\")].some("
                           "i => i.value === want)", arg=name, timeout=30_000)
    wait_idle(page)
