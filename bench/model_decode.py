"""Decode speed of the shipped models at batch 1, 8 and 32, through the real engine.

    python bench/model_decode.py [--models tiny smollm2] [--threads 2]

Each run: B requests with short prompts, greedy, EOS ignored; tokens/s counts decode steps only
(steps that ran no prefill), so the figure is the steady-state decode rate of that batch.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from engine import load_model
from engine.lab.batch_curve import measure_decode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["tiny", "smollm2"])
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 8, 32])
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"threads={args.threads}  new tokens per request={args.new_tokens}")
    print(f"{'model':<10}{'batch':>6}{'decode tok/s':>14}{'ms/step':>10}")
    for name in args.models:
        loaded = load_model(name)
        measure_decode(loaded, 1, 4)  # warm-up
        for b in args.batches:
            row = measure_decode(loaded, b, args.new_tokens)
            print(f"{name:<10}{b:>6}{row['tok_per_s']:>14.0f}{row['ms_per_step']:>10.1f}")


if __name__ == "__main__":
    main()
