"""What a student's priority key costs: its evaluation for every request of a step, against the whole
continuous-batching step, on the tiny model with 16 running requests.

    python bench/policy_key_cost.py [--model tiny] [--num-requests 16] [--steps 40] [--key "..."]

Prints the mean step time (snapshots off, as in a benchmark), the mean time of the key's evaluation within
those steps (KeyPolicy.begin_step, timed where the scheduler calls it) and their ratio (goal: under 20 %).
torch on one thread, as the test suite runs it.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["OMP_NUM_THREADS"] = "1"

import torch  # noqa: E402

from engine import EngineConfig, LLMEngine, SamplingParams  # noqa: E402
from engine.core.policy import KeyPolicy  # noqa: E402
from engine.models.loader import load_model  # noqa: E402

DEFAULT_KEY = ("max(0, priority - waited // 20) + (0 if request_class == 'support' else 1) "
               "+ 0.01 * clip(tokens_left, 0, 100) - 0.5 * (ttft_slo < 10) + num_preemptions")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="tiny")
    p.add_argument("--num-requests", type=int, default=16)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--key", default=DEFAULT_KEY)
    args = p.parse_args()
    torch.set_num_threads(1)
    loaded = load_model(args.model, device="cpu")
    engine = LLMEngine(loaded, EngineConfig(max_num_seqs=args.num_requests, policy_key=args.key,
                                            policy_victim_key="tokens_left"), snapshots=False)
    for i in range(args.num_requests):
        engine.add_request([65 + i % 20] * 24, SamplingParams(temperature=0.0, max_tokens=args.steps + 20,
                                                              ignore_eos=True))
    policy = engine.scheduler.policy
    assert isinstance(policy, KeyPolicy)
    key_times = []
    original = policy.begin_step

    def timed(requests, step):
        start = time.perf_counter()
        original(requests, step)
        key_times.append((time.perf_counter() - start, len(requests)))
    policy.begin_step = timed

    for _ in range(3):  # prefill and warm-up, not counted
        engine.step()
    key_times.clear()
    start = time.perf_counter()
    for _ in range(args.steps):
        engine.step()
    step_s = (time.perf_counter() - start) / args.steps
    key_s = sum(t for t, _ in key_times) / len(key_times)
    running = sum(n for _, n in key_times) / len(key_times)
    print(f"model {args.model}, {running:.0f} requests a step, key of {len(args.key)} characters")
    print(f"continuous-batching step: {step_s * 1000:.2f} ms; the key for every request: {key_s * 1000:.3f} ms "
          f"({key_s / running * 1e6:.1f} us a request)")
    print(f"key / step: {key_s / step_s:.1%} (goal: under 20 %)")


if __name__ == "__main__":
    main()
