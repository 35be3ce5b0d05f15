"""A room of students on one server process: memory per session, and time to first frame.

    python bench/classroom_load.py [--sessions 3] [--concurrent 10 40] [--timeout 120] [--moment fixed-batch-holes]
                                   [--play 40 --sample 1 --speed 20 --seconds 20 [--while-computing]]

1. Memory, with Streamlit's AppTest in this one process (as one `streamlit run` server holds every
   browser session): `--sessions` students, one after the other, each open the four lecture moments
   (fixed-batch-holes, chat-and-reports, contiguous-vs-paged, support-bot-sla) and stay open. The
   process's resident memory after the first and after the last gives the memory per additional
   session; the CPU seconds each session cost are printed too.
2. Time to first frame: for each N in `--concurrent`, a fresh `python -m ui.serve` (its run cache empty)
   and N real sessions on its websocket (bench/ws_student.py: what a browser sends, nothing drawn) that
   press the same moment at random moments within 5 s; each session's time from its press until the
   first frame is drawn, and until it plays (▶ pressed at once). p50/p95, how many within 10 s, and the
   server's CPU meanwhile; a session still waiting after `--timeout` seconds counts as not seen.
3. Playing (`--play N`, 0 skips it): a fresh server and N sessions playing the moment at once, of which
   `--sample` are real pages in Debian's chromium (Playwright) and the rest websocket students (what a
   browser asks of the server; each student's own laptop would animate its page). All press the moment,
   then (once its runs have ended, or with `--while-computing` at once) pick `--speed` and press play; for
   `--seconds` the server's CPU (from /proc) and the frames/s each chromium page's counter shows.
   Recorded runs play in the browser; `--server-playback` has the server draw every frame instead.
   (bench/classroom_playing.py)
Targets (issue 13): <= 60 MB per additional session; all 40 see the moment play within 10 s; >= 20
frames/s in the browser with the server under one core.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import os
import random
import statistics
import subprocess
import tempfile
import urllib.request
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from streamlit.testing.v1 import AppTest  # noqa: E402

import yaml  # noqa: E402

from engine.server.thread import free_port  # noqa: E402
from lessons import load_moments  # noqa: E402
from ui.shell.nav import SECTIONS  # noqa: E402
from ui.shell.i18n import STRINGS_FILE  # noqa: E402

MOMENTS = ("fixed-batch-holes", "chat-and-reports", "contiguous-vs-paged", "support-bot-sla")
PAGE_FILES = {url: path for entries in SECTIONS.values() for url, path, _, _ in entries}
SKIP = "Skip, just run"  # the prediction form's skip button (English)
STRINGS = yaml.load(STRINGS_FILE.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


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
        finish_shared_runs()  # the runs end in the background: count what they hold once they have ended
        sessions.append(at)  # kept open, as a student's tab is
        cpu.append(time.process_time() - started)
        wall.append(time.perf_counter() - clock)
        rss.append(rss_mb())
        print(f"  session {len(sessions)}: RSS {rss[-1]:.0f} MB, {cpu[-1]:.1f} s CPU, {wall[-1]:.1f} s", flush=True)
    per = (rss[-1] - rss[0]) / (n - 1) if n > 1 else float("nan")
    return {"sessions": n, "rss_mb": rss, "cpu_s": cpu, "wall_s": wall, "mb_per_additional_session": per}


def finish_shared_runs() -> None:
    """Until the shared runs computed in the background have ended (a lab without them has nothing to wait for)."""
    try:
        from ui.playback.run_cache import RUNS
    except ImportError:
        return
    if hasattr(RUNS, "join"):  # older labs computed a run inside the press
        RUNS.join()


COLD = {"SERVING_LAB_RUN_STORE": ""}  # no run store, even under the tests: every run is computed here


@contextlib.contextmanager
def lab_server(env: dict | None = None):
    """`python -m ui.serve` on a free loopback port, as `make run` starts it (its run cache starts empty);
    its output goes to a temporary file, named when the measurement fails."""
    port = free_port()
    log = tempfile.NamedTemporaryFile("w+", prefix="classroom-server-", suffix=".log", delete=False)
    server = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port), "--server.address",
                               "127.0.0.1", "--server.headless", "true"], cwd=ROOT, stdout=log,
                              stderr=subprocess.STDOUT, env={**os.environ, **COLD, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        yield url, server.pid
    except Exception:
        print(f"the server's log: {log.name}", file=sys.stderr)
        raise
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def time_to_first_frame(n: int, moment_id: str, timeout: float, spread: float = 5.0) -> dict:
    """N real sessions (bench/ws_student.py) on a fresh server press the same moment within `spread` s.
    From each student's press of the moment's button (then "Skip, just run" on its prediction form)
    until the first frame is drawn, and until it plays (▶ pressed at the first frame: the views that
    animate in the browser sent, or the server drawing a frame two steps on)."""
    from ws_student import Student

    moment = load_moments()[moment_id]
    label = "🎓 " + STRINGS[f"moment.name.{moment_id}"]["en"]
    rng = random.Random(0)
    offsets = sorted(rng.uniform(0, spread) for _ in range(n))
    first: list[float | None] = [None] * n
    played: list[float | None] = [None] * n

    async def student(s: Student, i: int, start: float) -> None:
        await asyncio.sleep(max(0.0, start + offsets[i] - time.monotonic()))
        pressed = time.monotonic()
        await s.click(label)
        await s.click(SKIP)
        while not s.frames:
            await asyncio.sleep(0.01)
        first[i] = s.frames[0][0] - pressed
        await s.idle()
        await s.click("▶")
        moving = lambda: [t for t, f in s.frames if f >= s.frames[0][1] + 2]  # noqa: E731 (two steps on: not one step)
        while not (s.animated_at or moving()):
            await asyncio.sleep(0.01)
        played[i] = min(t for t in [s.animated_at, *moving()] if t) - pressed

    async def room(url: str, pid: int) -> float:
        students = [Student(url, moment.page) for _ in range(n)]
        for s in students:  # the students have the lab open before anyone presses
            await s.open()
        cpu = cpu_seconds(pid)
        start = time.monotonic() + 0.2
        tasks = [asyncio.create_task(student(s, i, start)) for i, s in enumerate(students)]
        await asyncio.wait(tasks, timeout=spread + timeout)
        used = (cpu_seconds(pid) - cpu) / (time.monotonic() - start)
        for task in tasks:
            task.cancel()
        for s in students:
            await s.close()
        errors = [e for s in students for e in s.errors]
        if errors:
            raise RuntimeError(errors[:3])
        return used

    with lab_server() as (url, pid):
        cores = asyncio.run(room(url, pid))
    return {"sessions": n, "first_frame": _spread(first, 10), "playing": _spread(played, 10), "timeout_s": timeout,
            "server_cores": cores}


def _spread(seen: list[float | None], within: float) -> dict:
    times = sorted(s for s in seen if s is not None)
    q = statistics.quantiles(times, n=20, method="inclusive") if len(times) > 1 else times * 19
    return {"seen": len(times), f"within_{within:.0f}s": sum(1 for s in times if s <= within),
            "p50_s": statistics.median(times) if times else None, "p95_s": q[18] if times else None,
            "max_s": times[-1] if times else None}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=3, help="sessions for the memory measurement (0: skip)")
    ap.add_argument("--concurrent", type=int, nargs="*", default=[10, 40])
    ap.add_argument("--moment", default="fixed-batch-holes", choices=MOMENTS)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a pressing student waits at most")
    ap.add_argument("--play", type=int, default=40, help="sessions playing at once (0: skip)")
    ap.add_argument("--sample", type=int, default=1, help="of which real chromium pages, the frames/s measured in")
    ap.add_argument("--seconds", type=float, default=10.0, help="how long they play while measured")
    ap.add_argument("--speed", type=int, default=10, help="the player's speed, steps/s (the frames/s it can show)")
    ap.add_argument("--while-computing", action="store_true",
                    help="press ▶ at once, while the moment's runs are computed (else once they have ended)")
    ap.add_argument("--server-playback", action="store_true",
                    help="the server draws every frame (SERVING_LAB_BROWSER_PLAYBACK=0) instead of the browser")
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
        for what in ("first_frame", "playing"):
            d = r[what]
            fmt = lambda v: "-" if v is None else f"{v:.2f} s"  # noqa: E731
            print(f"{what.replace('_', ' ')}, {n} sessions pressing {args.moment} within 5 s: p50 {fmt(d['p50_s'])}, "
                  f"p95 {fmt(d['p95_s'])}, max {fmt(d['max_s'])}, {d['within_10s']}/{n} within 10 s "
                  f"({n - d['seen']} still waiting after {args.timeout:.0f} s)", flush=True)
        print(f"  the server used {r['server_cores']:.2f} cores meanwhile", flush=True)
    if args.play:
        from classroom_playing import playing

        r = report["playing"] = playing(args)
        charts = ", ".join("-" if c is None else f"{c:.1f}" for c in r["chart_frames_per_s"])
        when = "its runs ended" if r["ended_first"] else "its runs still being computed"
        stalls = "; ".join(", ".join(f"{ms / 1000:.1f} s at {at}" for ms, at in p) or "never" for p in r["stalls"])
        print(f"playing: {r['sessions']} sessions play {args.moment} at {r['speed']} steps/s ({when}; ▶ "
              f"{r['pressed_to_play_s']:.1f} s after the press); over {r['seconds']:.0f} s the server used "
              f"{r['server_cores']:.2f} cores ({r['page_runs_per_student']:.1f} page runs and "
              f"{r['fragment_runs_per_student']:.1f} fragment runs per websocket student, which fetched "
              f"{r['frame_file_kb_per_student']:.0f} KB of frame files each); frames/s in "
              f"{r['sampled']} sampled chromium pages: {', '.join(f'{f:.1f}' for f in r['frames_per_s'])} (chart "
              f"frames drawn per s, all charts: {charts}; steps the counter went through per s: "
              f"{', '.join('?' if v is None else f'{v:.1f}' for v in r['steps_per_s'])}); counters at the end: "
              f"{' '.join(r['frames_shown_at_end'])}; "
              f"the counter stood still > 0.5 s: {stalls}", flush=True)
    if args.json:
        print(json.dumps(report))
    sys.stdout.flush()
    os._exit(0)  # sessions still waiting past the timeout would keep their script threads running


if __name__ == "__main__":
    main()
