"""The policy challenge's Run and Submit, as the page makes them, on this machine and the tiny model: what the engine
computes for each click, page drawing not included.

    python bench/challenge_clicks.py [--key "-waited"]

Run: the key on the public seed, beside FCFS and a built-in (those two computed once per server: the first Run after
a start pays for them). Submit: the key on a class's two hidden seeds, beside their FCFS runs (once per class)."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from engine import load_model
from engine.lab.challenge import (PUBLIC_SEED, builtin_run, fcfs_run, grade_key, grade_runs, hidden_seeds,
                                  run_key)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--key", default="-waited")
    args = p.parse_args()
    torch.set_num_threads(1)
    loaded = load_model("tiny")

    def run_click() -> float:
        start = time.perf_counter()
        grade_runs([(run_key(loaded, PUBLIC_SEED, args.key), fcfs_run(loaded, PUBLIC_SEED))])
        builtin_run(loaded, PUBLIC_SEED, "sjf")
        return time.perf_counter() - start

    def submit_click() -> float:
        start = time.perf_counter()
        grade_key(loaded, args.key, hidden_seeds("a server secret", "class-a"))
        return time.perf_counter() - start

    print(f"Run, the first after a start (FCFS and SJF computed too): {run_click():.1f} s")
    print(f"Run again: {run_click():.1f} s")
    print(f"Submit, the first of a class (its FCFS runs computed too): {submit_click():.1f} s")
    print(f"Submit again: {submit_click():.1f} s")


if __name__ == "__main__":
    main()
