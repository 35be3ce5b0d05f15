"""A class on two replicas: how long the room waits for a poll's reveal, and what each student costs the replicas.

    python bench/classroom_replicas.py [--students 200] [--db postgresql+psycopg://...] [--moment online-uniform]

The set-up of tests/test_replicas.py (bench/replicas.py): PostgreSQL (a temporary cluster, or `--db`), two
`make class` replicas on it (their run caches empty), HAProxy in front with sticky sessions. The students are
websocket sessions (bench/ws_student.py: what a browser sends, nothing drawn), half pinned to each replica by
HAProxy's cookie, each on the class code with the Home page open (its poll banner checks every 2 s). The instructor
is a real page in Debian's chromium (Playwright) on replica A: unlocks the class view, opens the moment's poll;
every student answers (within `--spread` s); the instructor presses "close and run", replica A runs the moment and
publishes the measured value, and each student's banner shows it.

Prints the reveal latency (from the press to each student's banner showing the measured value: p50, p95, max, how
many saw it), split into the run (press to published) and the spread to the room (published to shown), and the
replicas' CPU seconds per student (utime + stime from /proc) in each phase: connecting, answering, the reveal."""
from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests")]

import replicas  # noqa: E402
from classroom_load import COLD, STRINGS, cpu_seconds  # noqa: E402
from ws_student import Student  # noqa: E402

from classroom import Store  # noqa: E402

MEASURED = re.compile(re.escape(STRINGS["poll.result"]["en"].split("{measured}")[0].split("}")[-1]))  # "Measured: **"
SENT = re.compile(re.escape(STRINGS["poll.sent"]["en"].split("{value}")[0]))  # "Sent: "


def instructor_opens(browser, url: str, code: str, moment_id: str):
    """The instructor's page, pinned to replica a, with the class's poll of `moment_id` open."""
    from browser_support import LOCALES
    from test_browser_poll import unlock

    context = browser.new_context(viewport={"width": 1440, "height": 900}, locale=LOCALES["en"])
    context.add_cookies([{"name": replicas.COOKIE, "value": "a", "url": url}])
    page = context.new_page()
    unlock(page, url, "en", code)
    page.locator(f".st-key-side-moment-{moment_id} button").first.click()
    page.locator(f".st-key-poll-{moment_id}-open button").first.click(timeout=120_000)
    page.locator(".st-key-poll-live").first.wait_for(timeout=60_000)
    return page


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    values = sorted(values)
    p95 = statistics.quantiles(values, n=20, method="inclusive")[18] if len(values) > 1 else values[0]
    return f"p50 {statistics.median(values):.2f} s, p95 {p95:.2f} s, max {values[-1]:.2f} s"


def measure(db_url: str, n: int, moment_id: str, answer_spread: float, timeout: float) -> dict:
    from browser_support import CHROMIUM, CHROMIUM_ARGS, PASSCODE
    from playwright.sync_api import sync_playwright

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    on_loop = lambda coroutine: asyncio.run_coroutine_threadsafe(coroutine, loop)  # noqa: E731
    rng = random.Random(0)
    code = f"bench-{uuid.uuid4().hex[:6]}"
    answer_label, send = STRINGS["poll.answer"]["en"], STRINGS["poll.send"]["en"]

    async def connect(url: str, tokens: list[str]) -> list[Student]:
        students = [Student(url, "", f"s={tok}&lang=en", {replicas.COOKIE: "ab"[i % 2]},
                            {"measured": MEASURED, "sent": SENT})
                    for i, tok in enumerate(tokens)]
        for i in range(0, n, 20):  # a room arriving over a minute or so, not in one instant
            await asyncio.gather(*(s.open() for s in students[i:i + 20]))
        return students

    async def answer_all(students: list[Student]) -> None:
        async def one(s: Student) -> None:
            await asyncio.sleep(rng.uniform(0, answer_spread))
            value = f"{rng.uniform(2, 30):.1f}"
            while "sent" not in s.seen:  # as a person does when "Sent" does not show: press again
                await s.submit(send, {answer_label: value}, timeout=timeout)
                for _ in range(300):
                    if "sent" in s.seen:
                        return
                    await asyncio.sleep(0.1)
        await asyncio.gather(*(one(s) for s in students))

    async def close(students: list[Student]) -> None:
        await asyncio.gather(*(s.close() for s in students), return_exceptions=True)

    folder = Path(tempfile.mkdtemp(prefix="classroom-replicas-"))
    with replicas.room(db_url, folder, passcode=PASSCODE, env=COLD) as lab:
        db = Store(db_url)
        tokens = [db.new_student(f"student {i}", code) for i in range(n)]
        cpu = lambda: {name: cpu_seconds(pid) for name, pid in lab.pids.items()}  # noqa: E731
        marks = {"start": cpu()}
        print(f"{n} students connecting through {lab.url} (replicas {lab.replicas}) ...", flush=True)
        students = on_loop(connect(lab.url, tokens)).result(timeout=timeout)
        marks["connected"] = cpu()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            teacher = instructor_opens(browser, lab.url, code, moment_id)
            poll = db.current_poll(code)
            print(f"poll {poll.id} open; {n} students answering within {answer_spread:.0f} s ...", flush=True)
            marks["opened"] = cpu()
            on_loop(answer_all(students)).result(timeout=timeout)
            deadline = time.monotonic() + timeout
            while len(db.poll_values(poll.id)) < n and time.monotonic() < deadline:
                time.sleep(0.2)
            answered = len(db.poll_values(poll.id))
            marks["answered"] = cpu()
            print(f"{answered} answers stored; close and run ...", flush=True)
            teacher.locator(f".st-key-poll-{moment_id}-close button").first.click()
            pressed = time.monotonic()
            while db.latest_poll(code).measured is None and db.latest_poll(code).state != "failed":
                if time.monotonic() > pressed + timeout:
                    raise TimeoutError("replica a published no measured value")
                time.sleep(0.05)
            published = time.monotonic()
            while sum("measured" in s.seen for s in students) < n and time.monotonic() < published + timeout:
                time.sleep(0.1)
            marks["revealed"] = cpu()
            teacher.close()
            browser.close()
        on_loop(close(students)).result(timeout=60)
        db.close()
        errors = [e for s in students for e in s.errors]
        seen = [s.seen["measured"] - pressed for s in students if "measured" in s.seen]
        on_replica = {name: sum(1 for i, s in enumerate(students) if "ab"[i % 2] == name and "measured" in s.seen)
                      for name in lab.pids}
    phases = list(marks)
    cpu_per_student = {f"{a}->{b}": sum(marks[b][r] - marks[a][r] for r in marks[a]) / n
                       for a, b in zip(phases, phases[1:])}
    per_replica = {r: marks["revealed"][r] - marks["start"][r] for r in marks["start"]}
    return {"students": n, "answered": answered, "saw_reveal": len(seen), "saw_reveal_per_replica": on_replica,
            "reveal_s": seen, "run_s": published - pressed,
            "spread_s": [s - (published - pressed) for s in seen], "cpu_per_student": cpu_per_student,
            "cpu_s_per_replica": per_replica, "errors": errors[:3]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=200)
    ap.add_argument("--db", help="a PostgreSQL URL to use (default: a temporary cluster, as the tests start)")
    ap.add_argument("--moment", default="online-uniform", help="a lecture moment with a numeric prediction")
    ap.add_argument("--spread", type=float, default=20.0, help="seconds over which the students answer")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds each phase waits at most")
    args = ap.parse_args()
    cluster = None
    if args.db is None:
        from pg_support import Cluster, _binaries, _owner, fresh_database

        cluster = Cluster(_binaries(), _owner())
        args.db = fresh_database(cluster.url)
    try:
        r = measure(args.db, args.students, args.moment, args.spread, args.timeout)
    finally:
        if cluster is not None:
            cluster.remove()
    total = sum(r["cpu_per_student"].values())
    print(f"reveal, {r['students']} students on 2 replicas ({r['answered']} answered): from the press "
          f"{spread(r['reveal_s'])}; {r['saw_reveal']}/{r['students']} saw it (per replica "
          f"{r['saw_reveal_per_replica']}); the run took {r['run_s']:.2f} s, then to the students "
          f"{spread(r['spread_s'])}", flush=True)
    print(f"replica CPU per student: {total:.3f} s in all ("
          + ", ".join(f"{k} {v:.3f} s" for k, v in r["cpu_per_student"].items()) + "); per replica "
          + ", ".join(f"{k} {v:.1f} s" for k, v in r["cpu_s_per_replica"].items()), flush=True)
    if r["errors"]:
        print(f"errors drawn on students' pages: {r['errors']}", flush=True)


if __name__ == "__main__":
    main()
