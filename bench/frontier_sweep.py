"""How long the trade-off frontier takes to appear: the six runs of one knob's sweep on the Scheduling policies
page's default workload and seed, made as the page makes them (one recorded run per setting, every step's
snapshot kept), one after another.

    python bench/frontier_sweep.py [--model tiny] [--knob max_num_seqs] [--workload support-bot-vs-batch]

Prints each point (its setting, steps, throughput in tokens per step, TTFT and TPOT p95 in steps, on the TTFT
frontier or not), each run's wall time, and the sweep's total."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.config import EngineConfig
from engine.lab.experiment import run_requests, workload_requests
from engine.lab.frontier import KNOBS, point, with_frontier
from engine.lab.workload import engine_config_for, preset
from engine.models.loader import load_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--knob", default="max_num_seqs", choices=list(KNOBS))
    parser.add_argument("--workload", default="support-bot-vs-batch")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    loaded, workload = load_model(args.model), preset(args.workload)
    base = {"policy": "fcfs", "priority_aging_steps": EngineConfig.default("priority_aging_steps")}
    start, points, walls = time.perf_counter(), [], []
    for value in KNOBS[args.knob]:
        began = time.perf_counter()
        result = run_requests(loaded, workload_requests(loaded, workload, args.seed),
                              engine_config_for(workload, **{**base, args.knob: value}))
        walls.append(time.perf_counter() - began)
        points.append((result.summary["steps"], point(value, result.summary)))
    total = time.perf_counter() - start
    marked = with_frontier([q for _, q in points])
    print(f"{args.knob} on {args.workload}, seed {args.seed}, model {args.model}")
    for (steps, _), q, wall in zip(points, marked, walls):
        print(f"  {str(q.value):>6}: {steps:5d} steps, {q.throughput:6.2f} tok/step, TTFT p95 "
              f"{q.latency['ttft_p95']:7.1f} steps, TPOT p95 {q.latency['tpot_p95']:5.2f}"
              f"{'  frontier' if q.on_frontier else ''}   ({wall:.1f} s)")
    print(f"sweep: {total:.1f} s for {len(points)} runs")


if __name__ == "__main__":
    main()
