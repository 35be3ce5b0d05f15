"""What stop strings cost the API server's event loop, per token: engine/server/generation.py searches only the
window where the text grew, and SamplingParams bounds them (32 strings of 256 characters).

    python bench/stop_strings.py [--tokens 2000]

Prints microseconds per token for no stop strings, OpenAI's 4, the most the server takes (32 x 256 characters),
and, for comparison, the check before issue 25 (every stop searched on every token, no bound) with the 40,000
stop strings that once stalled /health for 5 s.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import load_model
from engine.sampling_params import MAX_STOP_LEN, MAX_STOP_STRINGS
from engine.server.generation import Generation


def unbounded_check(gen, tokenizer, stop, token_ids):
    """The check as it was: decode, then every stop string searched from the last sent text, each token."""
    gen.token_ids += token_ids
    full = tokenizer.decode(gen.token_ids)
    for s in stop:
        at = full.find(s, max(0, len(gen.text) - len(s)))
        if at >= 0:
            full = full[:at]
    gen.text = full


def per_token_us(tokenizer, ids, stop, old=False) -> float:
    gen = Generation(tokenizer, [] if old else stop)
    start = time.perf_counter()
    for t in ids:
        if old:
            unbounded_check(gen, tokenizer, stop, [t])
        else:
            gen.add([t], False)
    return (time.perf_counter() - start) / len(ids) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=2000)
    args = ap.parse_args()
    tokenizer = load_model("tiny", device="cpu").tokenizer
    rng = random.Random(0)
    ids = tokenizer.encode("".join(rng.choice("abcdefgh ") for _ in range(args.tokens)))[:args.tokens]
    # stop strings that never match (the worst case: every one is searched on every token to the end)
    widest = ["Z" + "".join(rng.choice("abcdefgh") for _ in range(MAX_STOP_LEN - 1)) for _ in range(MAX_STOP_STRINGS)]
    cases = [("no stop strings", [], False), ("4 stop strings of 8 characters", ["Z" * 8] * 4, False),
             (f"{MAX_STOP_STRINGS} of {MAX_STOP_LEN} characters (the bound)", widest, False),
             ("before: 40,000 of 2 characters, unbounded", ["Zq"] * 40_000, True)]
    print(f"{len(ids)} tokens of text, tiny model's tokenizer; microseconds per token on the event loop:")
    for label, stop, old in cases:
        tokens = ids if not old else ids[:200]  # the old check is too slow to run for long
        print(f"  {label:<48}{per_token_us(tokenizer, tokens, stop, old):>10.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
