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
Targets (issue 13): <= 60 MB per additional session; all 40 see the moment play within 10 s.
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import random
import statistics
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


def time_to_first_frame(n: int, moment_id: str, timeout: float, spread: float = 5.0) -> dict:
    sessions = [new_session() for _ in range(n)]  # the students have the lab open before the press
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=3, help="sessions for the memory measurement")
    ap.add_argument("--concurrent", type=int, nargs="*", default=[10, 40])
    ap.add_argument("--moment", default="fixed-batch-holes", choices=MOMENTS)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a pressing student waits at most")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")

    print(f"memory: {args.sessions} sessions x {len(MOMENTS)} moments", flush=True)
    report = {"memory": memory_per_session(args.sessions), "first_frame": []}
    m = report["memory"]
    print(f"memory: first session {m['rss_mb'][0]:.0f} MB, {m['mb_per_additional_session']:.1f} MB per additional "
          f"session, CPU per session {', '.join(f'{c:.1f}' for c in m['cpu_s'])} s", flush=True)
    for n in args.concurrent:
        r = time_to_first_frame(n, args.moment, args.timeout)
        report["first_frame"].append(r)
        fmt = lambda v: "-" if v is None else f"{v:.2f} s"  # noqa: E731
        print(f"first frame, {n} sessions pressing {args.moment} within 5 s: p50 {fmt(r['p50_s'])}, "
              f"p95 {fmt(r['p95_s'])}, max {fmt(r['max_s'])}, {r['within_10s']}/{n} within 10 s "
              f"({n - r['seen']} still waiting after {args.timeout:.0f} s)", flush=True)
    if args.json:
        print(json.dumps(report))
    sys.stdout.flush()
    os._exit(0)  # sessions still waiting past the timeout would keep their script threads running


if __name__ == "__main__":
    main()
