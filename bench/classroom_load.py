"""A room of students on one server process: memory per session, and time to first frame.

    python bench/classroom_load.py [--sessions 3] [--concurrent 10 40] [--timeout 120] [--moment fixed-batch-holes]

Streamlit's AppTest, in this one process (as one `streamlit run` server holds every browser session):
1. Memory: `--sessions` students, one after the other, each open the four lecture moments
   (fixed-batch-holes, chat-and-reports, contiguous-vs-paged, support-bot-sla) and stay open. The
   process's resident memory after the first and after the last gives the memory per additional
   session; the CPU seconds each session cost are printed too.
2. Time to first frame: for each N in `--concurrent`, N fresh sessions press the same moment at random
   moments within 5 s (threads, as a server's sessions are); each session's time from its press until
   its script run has drawn the player's first frame. p50/p95 and how many saw it within 10 s; a
   session still waiting after `--timeout` seconds counts as not seen (the run is bounded).
3. Playing (`--play N`, 0 skips it): `python -m ui.serve` on a free loopback port and N real sessions
   in Debian's chromium (Playwright), each opening the moment and pressing play; for `--seconds` the
   server's CPU (from /proc) and, in `--sample` of the pages, the frames/s the page's counter shows.
   `--freeze-others` freezes the pages not sampled once they play, as if each ran on its own laptop.
Targets (issue 13): <= 60 MB per additional session; all 40 see the moment play within 10 s; >= 20
frames/s in the browser with the server under one core.
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import random
import re
import socket
import statistics
import subprocess
import urllib.request
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from lessons import load_moments  # noqa: E402
from ui.nav import SECTIONS  # noqa: E402

MOMENTS = ("fixed-batch-holes", "chat-and-reports", "contiguous-vs-paged", "support-bot-sla")
PAGE_FILES = {url: path for entries in SECTIONS.values() for url, path, _, _ in entries}
SKIP = "Skip, just run"  # the prediction form's skip button (English)


def rss_mb() -> float:
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # hand freed heap back, so RSS tracks what is held
    except OSError:
        pass
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def new_session() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.session_state["lang"] = "en"
    at.run()
    return at


def press(at: AppTest, moment_id: str) -> bool:
    """Open a lecture moment as a student does (skipping its prediction); True once a frame is drawn."""
    at.session_state["pending_moment"] = moment_id
    at.switch_page(PAGE_FILES[load_moments()[moment_id].page]).run()
    skip = next((b for b in at.button if b.label == SKIP), None)
    if skip is not None:
        skip.click().run()
    if at.exception:
        raise RuntimeError([e.value for e in at.exception])
    return any("lab-frame-value" in h.proto.body for h in at.get("html"))


def memory_per_session(n: int) -> dict:
    sessions, rss, cpu, wall = [], [], [], []
    for _ in range(n):
        started, clock = time.process_time(), time.perf_counter()
        at = new_session()
        for moment_id in MOMENTS:
            assert press(at, moment_id), f"{moment_id}: no frame drawn"
        sessions.append(at)  # kept open, as a student's tab is
        cpu.append(time.process_time() - started)
        wall.append(time.perf_counter() - clock)
        rss.append(rss_mb())
        print(f"  session {len(sessions)}: RSS {rss[-1]:.0f} MB, {cpu[-1]:.1f} s CPU, {wall[-1]:.1f} s", flush=True)
    per = (rss[-1] - rss[0]) / (n - 1) if n > 1 else float("nan")
    return {"sessions": n, "rss_mb": rss, "cpu_s": cpu, "wall_s": wall, "mb_per_additional_session": per}


def forget_shared_runs() -> None:
    """A moment nobody has run yet: the first press must compute it (a lab without the shared run
    cache computes every press anyway)."""
    try:
        from ui.run_cache import RUNS
    except ImportError:
        return
    RUNS.clear()


def time_to_first_frame(n: int, moment_id: str, timeout: float, spread: float = 5.0) -> dict:
    sessions = [new_session() for _ in range(n)]  # the students have the lab open before the press
    forget_shared_runs()
    rng = random.Random(0)
    offsets = sorted(rng.uniform(0, spread) for _ in range(n))
    seen: list[float | None] = [None] * n
    start = time.perf_counter() + 0.2

    def student(i: int) -> None:
        time.sleep(max(0.0, start + offsets[i] - time.perf_counter()))
        pressed = time.perf_counter()
        if press(sessions[i], moment_id):
            seen[i] = time.perf_counter() - pressed

    threads = [threading.Thread(target=student, args=(i,), daemon=True) for i in range(n)]
    for th in threads:
        th.start()
    deadline = start + spread + timeout
    for th in threads:
        th.join(max(0.0, deadline - time.perf_counter()))
    times = sorted(s for s in seen if s is not None)
    q = statistics.quantiles(times, n=20, method="inclusive") if len(times) > 1 else times * 19
    return {"sessions": n, "seen": len(times), "within_10s": sum(1 for s in times if s <= 10),
            "p50_s": statistics.median(times) if times else None, "p95_s": q[18] if times else None,
            "max_s": times[-1] if times else None, "timeout_s": timeout}


CHROMIUM = "/usr/bin/chromium"
# Frames shown: the counter's text changes (it changes with the views, server- or browser-drawn), polled
# every 10 ms; and the frames the live charts themselves drew (ui/live_chart.html counts them when it
# animates in the browser; server-side playback redraws them with the counter).
COUNT_FRAMES = """() => { window.__frames = 0; window.__shown = null; window.__charts0 = window.__labChartFrames || 0;
    window.__counting = setInterval(() => {
        const el = document.querySelector('.lab-frame-value');
        const now = el ? el.textContent : null;
        if (now !== null && now !== window.__shown) {
            window.__frames += window.__shown === null ? 0 : 1; window.__shown = now; }
    }, 10); }"""
CHART_FRAMES = "() => window.__labChartFrames === undefined ? null : window.__labChartFrames - window.__charts0"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def counter_text(page) -> str:
    """The frame a page shows ("?" when it shows none: mid-rerun, or too busy to answer)."""
    try:
        return re.match(r"\d+", page.locator(".lab-frame-value").first.inner_text(timeout=5_000)).group()
    except Exception:
        return "?"


def set_speed(page, speed: int) -> None:
    """Pick the player's speed (steps/s) in the controls' select box, as a student would."""
    box = page.locator("[class*='player-controls'] [data-testid='stSelectbox']").first
    box.click()
    page.get_by_role("option", name=f"{speed} steps/s", exact=True).click()
    for _ in range(60):
        if box.locator("input").first.input_value() == f"{speed} steps/s":
            return
        time.sleep(0.5)
    raise RuntimeError(f"the speed did not change to {speed} steps/s")


def playing(n: int, sample: int, seconds: float, moment_id: str, speed: int = 10, freeze_others: bool = False,
            in_browser: bool = False) -> dict:
    """N real sessions playing the same moment: the server's CPU, and frames/s seen in `sample` pages.
    `freeze_others`: once every page plays, all but the sampled ones are frozen (CDP
    Page.setWebLifecycleState): in a room each student's browser animates on the student's own laptop,
    while here 40 chromium pages would share this machine's two cores with the server. A frozen page
    stays connected and its session stays in play on the server. `in_browser`: the server plays recorded
    runs in the browser (SERVING_LAB_BROWSER_PLAYBACK=1, see ui/player.py)."""
    from playwright.sync_api import sync_playwright

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port), "--server.address",
                               "127.0.0.1", "--server.headless", "true"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL,
                              env={**os.environ, "SERVING_LAB_BROWSER_PLAYBACK": "1" if in_browser else "0"})
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        lab = load_moments()[moment_id].page
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            pages = []
            for _ in range(n):
                page = browser.new_context(viewport={"width": 1440, "height": 900}, locale="en-US").new_page()
                page.goto(f"{url}/{lab}?lang=en")
                page.locator(f"[class*='moment-btn-{moment_id}'] button").first.click(timeout=120_000)
                counter = page.locator(f".st-key-{lab}-frame-counter")
                deadline = time.monotonic() + 300
                while not counter.count() and time.monotonic() < deadline:
                    skip = page.get_by_role("button", name=SKIP, exact=True)
                    if skip.count():
                        skip.first.click()
                    time.sleep(1)
                counter.first.wait_for(timeout=120_000)  # a loaded machine draws the first page slowly
                if speed != 10:
                    set_speed(page, speed)
                pages.append(page)
            for page in pages:
                page.set_default_timeout(60_000)
                page.get_by_role("button", name="▶", exact=True).click(force=True)
                page.get_by_role("button", name="⏸", exact=True).wait_for()
            watched = pages[-sample:]  # the last to press play: the first may have reached the end already
            if freeze_others:
                for page in pages[:-sample]:
                    page.context.new_cdp_session(page).send("Page.setWebLifecycleState", {"state": "frozen"})
            for page in watched:
                page.evaluate(COUNT_FRAMES)
            cpu, clock = cpu_seconds(server.pid), time.perf_counter()
            time.sleep(seconds)
            used, elapsed = cpu_seconds(server.pid) - cpu, time.perf_counter() - clock
            fps = [page.evaluate("() => window.__frames") / elapsed for page in watched]
            charts = [page.evaluate(CHART_FRAMES) for page in watched]
            shown = [counter_text(page) for page in (watched if freeze_others else pages)]
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {"sessions": n, "sampled": len(fps), "frames_per_s": fps, "server_cores": used / elapsed,
            "seconds": elapsed, "frames_shown_at_end": shown, "speed": speed, "others_frozen": freeze_others,
            "chart_frames_per_s": [None if c is None else c / elapsed for c in charts]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=3, help="sessions for the memory measurement (0: skip)")
    ap.add_argument("--concurrent", type=int, nargs="*", default=[10, 40])
    ap.add_argument("--moment", default="fixed-batch-holes", choices=MOMENTS)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a pressing student waits at most")
    ap.add_argument("--play", type=int, default=4, help="real browser sessions playing at once (0: skip)")
    ap.add_argument("--sample", type=int, default=2, help="of which the frames/s is measured in")
    ap.add_argument("--seconds", type=float, default=10.0, help="how long they play while measured")
    ap.add_argument("--speed", type=int, default=10, help="the player's speed, steps/s (the frames/s it can show)")
    ap.add_argument("--freeze-others", action="store_true",
                    help="freeze all but the sampled pages once they play (each student's own laptop animates)")
    ap.add_argument("--browser-playback", action="store_true", help="recorded runs play in the browser")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")

    report = {"first_frame": []}
    if args.sessions:
        print(f"memory: {args.sessions} sessions x {len(MOMENTS)} moments", flush=True)
        m = report["memory"] = memory_per_session(args.sessions)
        print(f"memory: first session {m['rss_mb'][0]:.0f} MB, {m['mb_per_additional_session']:.1f} MB per "
              f"additional session, CPU per session {', '.join(f'{c:.1f}' for c in m['cpu_s'])} s", flush=True)
    for n in args.concurrent:
        r = time_to_first_frame(n, args.moment, args.timeout)
        report["first_frame"].append(r)
        fmt = lambda v: "-" if v is None else f"{v:.2f} s"  # noqa: E731
        print(f"first frame, {n} sessions pressing {args.moment} within 5 s: p50 {fmt(r['p50_s'])}, "
              f"p95 {fmt(r['p95_s'])}, max {fmt(r['max_s'])}, {r['within_10s']}/{n} within 10 s "
              f"({n - r['seen']} still waiting after {args.timeout:.0f} s)", flush=True)
    if args.play:
        r = report["playing"] = playing(args.play, args.sample, args.seconds, args.moment, args.speed,
                                             args.freeze_others, args.browser_playback)
        charts = ", ".join("-" if c is None else f"{c:.1f}" for c in r["chart_frames_per_s"])
        print(f"playing: {r['sessions']} browser sessions play {args.moment} at {r['speed']} steps/s; the server "
              f"used {r['server_cores']:.2f} cores; frames/s in {r['sampled']} sampled pages: "
              f"{', '.join(f'{f:.1f}' for f in r['frames_per_s'])} (chart frames drawn per s, all charts: "
              f"{charts}); counters at the end: {' '.join(r['frames_shown_at_end'])}"
              + (f" (the other {r['sessions'] - r['sampled']} pages frozen once playing)" if r["others_frozen"]
                 else ""),
              flush=True)
    if args.json:
        print(json.dumps(report))
    sys.stdout.flush()
    os._exit(0)  # sessions still waiting past the timeout would keep their script threads running


if __name__ == "__main__":
    main()
