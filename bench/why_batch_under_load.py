"""Why batch?'s curve, measured as the page measures it, on a quiet machine and then in a busy room, in one run.

    python bench/why_batch_under_load.py [--model tiny] [--sizes 1 2 4 8 16] [--hogs 6] [--new-tokens 16]

The room: `--hogs` processes that each switch between spinning on a core and sleeping at random intervals of
0.2–3 s (steady hogs are too gentle a test), while two sessions ask for the same curve at the same moment, as
two students opening the page would. Both go through one `OneAtATime`, as the page's do.

Prints both curves (speed-up against batch 1, median and min–max over the rounds) and two checks: under load
the speed-up is non-decreasing within its spread (each median at least the previous size's lowest round),
and at the largest size it is within 25 % of the quiet one.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.lab.batch_curve import Curve, OneAtATime, measure_batch_curve
from engine.models.loader import load_model


def hog(seed: int, stop) -> None:
    """Busy, then idle, each for 0.2–3 s at random, until `stop` is set."""
    rng = random.Random(seed)
    while not stop.is_set():
        until = time.perf_counter() + rng.uniform(0.2, 3.0)
        while time.perf_counter() < until:
            pass
        stop.wait(rng.uniform(0.2, 3.0))


def two_sessions(loaded, sizes, new_tokens) -> tuple[Curve, int]:
    """Two sessions asking for one curve at the same moment; the curve and how many measurements ran."""
    curves, start, got = OneAtATime(), threading.Barrier(2), []
    key = ("bench", tuple(sizes), new_tokens)

    def session():
        start.wait()
        job = curves.request(key, lambda job: measure_batch_curve(loaded, sizes, new_tokens))
        got.append(job.wait())

    threads = [threading.Thread(target=session) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got[0] is got[1], "the two sessions were shown different measurements"
    return got[0], curves.computed


def show(title: str, curve: Curve) -> None:
    print(f"\n{title}: {curve.rounds} rounds in {curve.wall_s:.1f} s wall, {curve.cpu_s:.1f} s CPU "
          f"(measuring thread), {curve.cores} cores")
    print(f"{'batch':>6}{'tok/s':>9}{'ms/step':>9}{'cpu ms':>8}{'speed-up (min-max)':>24}")
    for r in curve.rows:
        spread = f"{r['speedup']:.2f}x ({r['speedup_min']:.2f}-{r['speedup_max']:.2f})"
        print(f"{r['batch']:>6}{r['tok_per_s']:>9.0f}{r['ms_per_step']:>9.2f}{r['cpu_ms_per_step']:>8.2f}{spread:>24}")


def checks(quiet: Curve, busy: Curve) -> bool:
    ok = True
    for a, b in zip(busy.rows, busy.rows[1:]):
        holds = b["speedup"] >= a["speedup_min"]
        ok &= holds
        print(f"under load, batch {b['batch']} ({b['speedup']:.2f}x) >= batch {a['batch']}'s lowest round "
              f"({a['speedup_min']:.2f}x): {'yes' if holds else 'NO'}")
    q, s = quiet.rows[-1], busy.rows[-1]
    off = abs(s["speedup"] - q["speedup"]) / q["speedup"]
    ok &= off <= 0.25
    print(f"at batch {q['batch']}: quiet {q['speedup']:.2f}x, under load {s['speedup']:.2f}x, {off:.0%} apart "
          f"(limit 25 %): {'yes' if off <= 0.25 else 'NO'}")
    return ok


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="tiny")
    p.add_argument("--sizes", nargs="+", type=int, default=[1, 2, 4, 8, 16])
    p.add_argument("--new-tokens", type=int, default=16)
    p.add_argument("--hogs", type=int, default=6)
    args = p.parse_args()
    loaded = load_model(args.model)
    quiet, _ = two_sessions(loaded, args.sizes, args.new_tokens)
    show("quiet", quiet)

    stop = mp.Event()
    hogs = [mp.Process(target=hog, args=(i, stop), daemon=True) for i in range(args.hogs)]
    for h in hogs:
        h.start()
    try:
        busy, computed = two_sessions(loaded, args.sizes, args.new_tokens)
    finally:
        stop.set()
        for h in hogs:
            h.join(5)
    show(f"under load ({args.hogs} processes busy and idle by turns, two sessions asking at once: "
         f"{computed} measurement)", busy)
    print()
    sys.exit(0 if checks(quiet, busy) else 1)


if __name__ == "__main__":
    main()
