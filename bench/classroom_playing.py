"""Forty students playing one moment at once: the server's CPU, and the frames/s real browser pages show.

Part 3 of bench/classroom_load.py (run it from there: `--play N --sample K --speed S --seconds T`). Of the N
sessions, K are pages in Debian's chromium driven by Playwright and the rest websocket students
(bench/ws_student.py), which ask of the server what a browser asks and draw nothing, as in a room each
student's laptop would animate its own page while this machine has two cores.
"""
from __future__ import annotations

import asyncio
import re
import time

from classroom_load import SKIP, STRINGS, cpu_seconds, lab_server
from lessons import load_moments

CHROMIUM = "/usr/bin/chromium"
# Frames shown: in-browser playback counts the animation frames that drew a new step
# (ui/playback/client_player.js, window.__labAnim.drawn, counted in requestAnimationFrame); server-side playback,
# the counter's text changes, polled every 10 ms (a poll can miss a change on a busy page: it undercounts).
# And the frames the live charts themselves drew (ui/playback/live_chart.html counts them when it animates in the
# browser; server-side playback redraws them with the counter).
COUNT_FRAMES = """() => { window.__frames = 0; window.__shown = null; window.__charts0 = window.__labChartFrames || 0;
    window.__drawn0 = window.__labAnim ? window.__labAnim.drawn : null;
    window.__stalls = []; window.__changed = performance.now();
    window.__counting = setInterval(() => {
        const el = document.querySelector('.lab-frame-value');
        const now = el ? el.textContent : null, t = performance.now();
        if (now !== null && now !== window.__shown) {
            if (t - window.__changed > 500) window.__stalls.push([Math.round(t - window.__changed), window.__shown]);
            window.__frames += window.__shown === null ? 0 : 1; window.__shown = now; window.__changed = t; }
    }, 10); }"""
# the counter standing still for more than half a second: [ms, the frame it stood on]
STALLS = "() => window.__stalls.concat(performance.now() - window.__changed > 500 ? " \
         "[[Math.round(performance.now() - window.__changed), window.__shown]] : [])"
FRAMES = "() => window.__drawn0 === null ? window.__frames : window.__labAnim.drawn - window.__drawn0"
CHART_FRAMES = "() => window.__labChartFrames === undefined ? null : window.__labChartFrames - window.__charts0"


def counter_text(page) -> str:
    """The frame a page shows ("?" when it shows none: mid-rerun, or too busy to answer)."""
    try:
        return re.match(r"\d+", page.locator(".lab-frame-value").first.inner_text(timeout=5_000)).group()
    except Exception:
        return "?"


def set_speed(page, speed: int) -> None:
    """Pick the player's speed (steps/s) in the controls' select box, as a student would."""
    box = page.locator("[class*='player-controls'] [data-testid='stSelectbox']").first
    for attempt in range(3):  # a click that lands while the page reruns can be lost
        try:
            box.click()
            page.get_by_role("option", name=f"{speed} steps/s", exact=True).click(timeout=10_000)
            break
        except Exception:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
            time.sleep(1)
    for _ in range(60):
        if box.locator("input").first.input_value() == f"{speed} steps/s":
            return
        time.sleep(0.5)
    raise RuntimeError(f"the speed did not change to {speed} steps/s")


def playing(args) -> dict:
    """N sessions playing the same moment at once: the server's CPU meanwhile, and the frames/s seen in
    `sample` of them, real pages in Debian's chromium (Playwright). The other N - sample are websocket
    students (bench/ws_student.py): the server does for them what it does for a browser (their page,
    the frames sent at ▶, the reruns their fragment timers ask for), but nothing draws them here, as
    in a room each student's laptop animates its own page while this machine has two cores.
    Everyone presses the moment within a few seconds and then, with `ended` once its runs have ended
    (recorded runs, the room replaying the moment) or else at once (still being computed), picks
    `speed` and presses ▶; the measurement starts when all play. `in_browser`: the server plays
    recorded runs in the browser (the default; else SERVING_LAB_BROWSER_PLAYBACK=0, see ui/playback/player.py).
    `args`: bench/classroom_load.py's (--play N, --sample, --seconds, --moment, --speed, --while-computing,
    --server-playback)."""
    n, sample, seconds, moment_id, speed = args.play, args.sample, args.seconds, args.moment, args.speed
    ended, in_browser = not args.while_computing, not args.server_playback
    import threading

    from playwright.sync_api import sync_playwright
    from ws_student import Student

    lab = load_moments()[moment_id].page
    label = "🎓 " + STRINGS[f"moment.name.{moment_id}"]["en"]
    speed_label, speed_option = STRINGS["player.speed"]["en"], STRINGS["player.speed_value"]["en"].format(n=speed)
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    on_loop = lambda coroutine: asyncio.run_coroutine_threadsafe(coroutine, loop)  # noqa: E731

    async def open_students(url: str) -> list[Student]:
        students = [Student(url, lab) for _ in range(n - sample)]
        await asyncio.gather(*(s.open() for s in students))
        return students

    async def close_students(students: list[Student]) -> None:
        await asyncio.gather(*(s.close() for s in students))

    async def press_moment(s: Student) -> None:
        await s.click(label)
        await s.click(SKIP)
        while not s.frames:
            await asyncio.sleep(0.05)
        await s.idle()

    async def press_play(s: Student) -> None:
        if speed != 10:
            await s.choose(speed_label, speed_option)
            await s.idle()
        s.animated_at, s.frames = None, []
        await s.click("▶")
        while not (s.animated_at or len({f for _, f in s.frames}) > 2):  # frames sent, or drawn by the server
            await asyncio.sleep(0.05)

    with lab_server({"SERVING_LAB_BROWSER_PLAYBACK": "1" if in_browser else "0"}) as (url, server_pid):
        students = on_loop(open_students(url)).result(timeout=300)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            pages = []
            for _ in range(sample):
                page = browser.new_context(viewport={"width": 1440, "height": 900}, locale="en-US").new_page()
                page.set_default_timeout(60_000)
                page.goto(f"{url}/{lab}?lang=en")
                page.locator(f"[class*='moment-btn-{moment_id}'] button").first.wait_for(timeout=120_000)
                pages.append(page)
            pressed = time.monotonic()
            presses = [on_loop(press_moment(s)) for s in students]
            for page in pages:
                page.locator(f"[class*='moment-btn-{moment_id}'] button").first.click(timeout=120_000)
            counters = [page.locator(f".st-key-{lab}-frame-counter") for page in pages]
            for page, counter in zip(pages, counters):
                deadline = time.monotonic() + 300
                while not counter.count() and time.monotonic() < deadline:
                    skip = page.get_by_role("button", name=SKIP, exact=True)
                    if skip.count():
                        try:  # a page rerun can replace the form under the click: look again
                            skip.first.click(timeout=5_000)
                        except Exception:
                            pass
                    time.sleep(0.5)
                counter.first.wait_for(timeout=120_000)  # a loaded machine draws the first page slowly
            for press in presses:
                press.result(timeout=300)
            if ended:  # every page redraws itself once the runs have ended
                for page in pages:
                    page.wait_for_function("() => [...document.querySelectorAll('.lab-frame-value')]"
                                           ".every(e => !e.innerText.includes('…'))", timeout=300_000)
                while any(s.computing for s in students):
                    time.sleep(0.2)
                time.sleep(1)
            computed_in = time.monotonic() - pressed
            plays = [on_loop(press_play(s)) for s in students]
            for page in pages:
                if speed != 10:
                    set_speed(page, speed)
                for attempt in range(3):  # a rerun can briefly show a stale copy of the controls, or lose a click
                    try:
                        page.get_by_role("button", name=re.compile("^(播放|Play)$")).first.click(force=True)  # ▶
                        page.get_by_role("button", name=re.compile("^(暂停|Pause)$")).first.wait_for(timeout=20_000)
                        break
                    except Exception:
                        if attempt == 2:
                            raise
                        time.sleep(1)
            for play in plays:
                play.result(timeout=300)
            for page in pages:
                page.evaluate(COUNT_FRAMES)
            shown_before = [counter_text(page) for page in pages]
            cpu, clock = cpu_seconds(server_pid), time.perf_counter()
            runs_before = [(s.page_runs, s.fragment_runs) for s in students]
            fetched_before = sum(sum(s.fetched.values()) for s in students)
            time.sleep(seconds)
            runs = [(s.page_runs - p, s.fragment_runs - f) for s, (p, f) in zip(students, runs_before)]
            fetched = sum(sum(s.fetched.values()) for s in students) - fetched_before
            used, elapsed = cpu_seconds(server_pid) - cpu, time.perf_counter() - clock
            fps = [page.evaluate(FRAMES) / elapsed for page in pages]
            charts = [page.evaluate(CHART_FRAMES) for page in pages]
            stalls = [page.evaluate(STALLS) for page in pages]
            shown = [counter_text(page) for page in pages]
            browser.close()
        errors = [e for s in students for e in s.errors]
        on_loop(close_students(students)).result(timeout=60)
        loop.call_soon_threadsafe(loop.stop)
    if errors:
        raise RuntimeError(errors[:3])
    return {"sessions": n, "sampled": len(fps), "frames_per_s": fps, "server_cores": used / elapsed,
            "seconds": elapsed, "frames_shown_at_end": shown, "speed": speed, "ended_first": ended,
            # steps the page's clock went through per second (what it should have drawn; a page short of
            # CPU draws fewer: it skips steps)
            "steps_per_s": [(int(b) - int(a)) / elapsed if a.isdigit() and b.isdigit() else None
                            for a, b in zip(shown_before, shown)],
            "pressed_to_play_s": computed_in, "stalls": stalls,
            "page_runs_per_student": sum(p for p, _ in runs) / max(1, len(runs)),
            "fragment_runs_per_student": sum(f for _, f in runs) / max(1, len(runs)),
            "frame_file_kb_per_student": fetched / 1000 / max(1, len(runs)),
            "chart_frames_per_s": [None if c is None else c / elapsed for c in charts]}
