"""▶ pressed at once on a fresh lecture moment: how soon the player moves, and how long any chart is blank.

    python bench/play_at_once.py [--root DIR] [--lang en] [--repeat 1] [--size 1280x720]

For each lab page's first lecture moment, a fresh `python -m ui.serve` from `--root` (default: this checkout;
another checkout compares before and after), one page in Debian's chromium: press the moment, skip its
prediction, and as soon as the first frame is drawn, press ▶. For the next 5 s the page is sampled at 5 Hz:
- "moving": seconds from ▶ until the frame counter shows a frame after 0;
- "blank": seconds during which some chart of the picture was not drawn (an iframe the browser built anew,
  empty until plotly has loaded in it), and the number of samples that saw one.
A measurement, not a test: the figures depend on the machine and its load (print `nproc` and `uptime`
beside them). The test of the same thing is tests/test_browser_play_at_once.py.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from browser_support import CHROMIUM, CHROMIUM_ARGS, LOCALES, player_button  # noqa: E402
from engine.server.thread import free_port  # noqa: E402
from test_browser_play_at_once import CHARTS, LABS, first_moment  # noqa: E402

STRINGS = yaml.load((ROOT / "ui" / "shell" / "strings.yaml").read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def serve(root: Path, cache: str):
    port = free_port()
    env = {**os.environ, "SERVING_LAB_CACHE": cache, "SERVING_LAB_DB": os.path.join(cache, "lab.sqlite"),
           "SERVING_LAB_RUN_STORE": ""}  # no run store: every run is computed here
    proc = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port), "--server.address",
                             "127.0.0.1", "--server.headless", "true"], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the lab did not come up")


def measure(browser, url: str, lab: str, lang: str, size: tuple[int, int]) -> dict:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale=LOCALES[lang])
    page = context.new_page()
    page.goto(f"{url}/{lab}")
    page.wait_for_selector("h1", timeout=60_000)
    time.sleep(2)
    page.locator('[data-testid="stMain"] button').filter(has_text=STRINGS[f"moment.name.{first_moment(lab)}"][lang]) \
        .first.click()
    page.get_by_role("button", name=STRINGS["pred.skip"][lang], exact=True).click(timeout=30_000)
    page.wait_for_selector(f".st-key-{lab}-frame-counter .lab-frame-value", timeout=120_000)
    page.wait_for_function(f"() => {{ const c = ({CHARTS})(); return c.length && c.every(x => x.drawn); }}",
                           timeout=60_000)
    before = len(page.evaluate(CHARTS))
    player_button(page, "play").first.click()
    pressed, moving, blank_samples, blank_s, last = time.monotonic(), None, 0, 0.0, time.monotonic()
    while time.monotonic() - pressed < 5.0:
        charts, now = page.evaluate(CHARTS), time.monotonic()
        if sum(c["drawn"] for c in charts) < before or not all(c["drawn"] for c in charts):
            blank_samples += 1
            blank_s += now - last
        last = now
        values = page.locator(f".st-key-{lab}-frame-counter .lab-frame-value").all_inner_texts()
        if moving is None and any(int(v.split("/")[0]) > 0 for v in values):
            moving = now - pressed
        time.sleep(0.2)
    context.close()
    return {"moving": moving, "blank_s": blank_s, "blank_samples": blank_samples}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--lang", default="en", choices=["zh", "en"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--size", default="1280x720")
    args = ap.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    from playwright.sync_api import sync_playwright
    print(f"root {args.root}, {args.lang}, {args.size}; nproc {os.cpu_count()}, load {os.getloadavg()[0]:.1f}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for lab in LABS:
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory() as cache:  # a fresh server: the moment is computed fresh
                    proc, url = serve(args.root, cache)
                    try:
                        m = measure(browser, url, lab, args.lang, size)
                    finally:
                        proc.terminate()
                        proc.wait(timeout=20)
                moving = "never" if m["moving"] is None else f"{m['moving']:.1f} s"
                print(f"{lab:22s} ▶ → moving {moving:>6s}   blank {m['blank_s']:.1f} s "
                      f"({m['blank_samples']} samples)", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
