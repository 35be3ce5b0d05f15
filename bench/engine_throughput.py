"""Static vs continuous batching on one mixed-length workload, side by side in one run.

    python bench/engine_throughput.py [--model tiny] [--requests 64] [--max-num-seqs 16]

Prints output tokens/s of each batcher, their ratio, and the share of step time spent outside
the model's forward pass (the engine's own overhead: scheduling, block bookkeeping, snapshots),
each batcher twice in one run: with a full StepSnapshot per step (what the lab's views need) and
with StepStats only (`LLMEngine(..., snapshots=False)`, what a benchmark or a server needs).
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from engine import EngineConfig, LLMEngine, SamplingParams, load_model


def mixed_workload(n: int, seed: int) -> list[tuple[list[int], int]]:
    """Prompts of 8..128 bytes, output lengths exponential (mean 64, capped at 256): high variance."""
    rng = random.Random(seed)
    return [([rng.randrange(32, 127) for _ in range(rng.randint(8, 128))],
             min(256, max(1, int(rng.expovariate(1 / 64))))) for _ in range(n)]


def run(loaded, batcher: str, workload, max_num_seqs: int, snapshots: bool = True) -> dict:
    engine = LLMEngine(loaded, EngineConfig(batcher=batcher, max_num_seqs=max_num_seqs, max_model_len=512),
                       snapshots=snapshots)
    for prompt, out_len in workload:
        engine.add_request(prompt, SamplingParams(temperature=0.0, max_tokens=out_len, ignore_eos=True))
    t0 = time.perf_counter()
    snaps = engine.run_until_done()
    wall = time.perf_counter() - t0
    tokens = sum(len(s.emitted) for s in snaps)
    model_time = sum(s.model_time_s for s in snaps)
    busy = sum(s.num_running if not snapshots else sum(1 for x in s.slots if x) for s in snaps)
    return dict(batcher=batcher, snapshots="full" if snapshots else "stats only", steps=len(snaps), tokens=tokens,
                wall_s=wall, tok_per_s=tokens / wall, overhead=1 - model_time / wall,
                overhead_ms=1000 * (wall - model_time) / len(snaps), slot_util=busy / (len(snaps) * max_num_seqs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--max-num-seqs", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    loaded = load_model(args.model)
    workload = mixed_workload(args.requests, args.seed)
    run(loaded, "continuous", workload[:4], args.max_num_seqs)  # warm-up
    rows = [run(loaded, b, workload, args.max_num_seqs, snapshots) for b in ("static", "continuous")
            for snapshots in (True, False)]
    print(f"model={args.model} requests={args.requests} max_num_seqs={args.max_num_seqs} threads={args.threads}")
    print(f"{'batcher':<11}{'snapshots':<12}{'steps':>7}{'tokens':>8}{'wall s':>9}{'tok/s':>9}{'slot use':>10}"
          f"{'overhead':>10}{'ms/step':>9}")
    for r in rows:
        print(f"{r['batcher']:<11}{r['snapshots']:<12}{r['steps']:>7}{r['tokens']:>8}{r['wall_s']:>9.2f}"
              f"{r['tok_per_s']:>9.0f}{r['slot_util']:>10.0%}{r['overhead']:>10.0%}{r['overhead_ms']:>9.2f}")
    static, continuous = rows[0], rows[2]
    print(f"continuous / static throughput: {continuous['tok_per_s'] / static['tok_per_s']:.2f}x "
          "(overhead: share of wall time outside the forward pass; ms/step: that time per step)")


if __name__ == "__main__":
    main()
