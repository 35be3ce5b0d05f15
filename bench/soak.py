"""Soak the engine: many random workloads on random knobs, every accounting invariant checked every step.

    python bench/soak.py [--workloads 1000] [--seed 0] [--model random-small] [--oracle-every 10]

Both batchers, every policy, both KV layouts, swap and recompute, prefix caching on and off,
chunked prefill, caches small enough to force preemption, aborts at random steps (see
engine/soak.py for the invariants). Every `--oracle-every`-th workload also compares each
request's greedy tokens with a no-cache recompute. Prints the counts; exits 1 on any violation.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from engine import load_model
from engine.lab.soak import random_case, run_case


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="random-small")
    ap.add_argument("--oracle-every", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    loaded = load_model(args.model)
    rng = random.Random(args.seed)
    totals: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    failures = []
    t0 = time.perf_counter()
    for i in range(args.workloads):
        oracle = args.oracle_every > 0 and i % args.oracle_every == 0
        case = random_case(rng, loaded.model.config.vocab_size, oracle=oracle)
        c = case.config
        kinds.update([c.batcher, c.policy, c.kv_layout, c.preemption_mode,
                      "prefix caching" if c.enable_prefix_caching else "no prefix caching",
                      "chunked prefill" if c.enable_chunked_prefill else "whole prefill"])
        r = run_case(loaded, case)
        totals.update(workloads=1, steps=r.steps, requests=len(case.requests), aborts=r.aborts,
                      preemptions=r.preemptions, rejected=r.rejected, swapped_blocks=r.swapped_blocks,
                      prefix_cached_tokens=r.cached_tokens, oracle_requests=r.oracle_checked,
                      violations=len(r.violations))
        if r.violations:
            failures.append((i, case, r.violations))
    print(f"model={args.model} seed={args.seed} in {time.perf_counter() - t0:.0f} s")
    print("  ".join(f"{k}={v}" for k, v in totals.items()))
    print("covered: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    for i, case, violations in failures[:5]:
        print(f"workload {i}: {case.config}\n  " + "\n  ".join(violations[:5]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
