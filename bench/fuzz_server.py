"""A longer fuzz run of `python -m engine serve` than `make test` does: schemathesis generates valid and invalid
bodies for every operation from the server's own OpenAPI schema (tests/fuzz_support.py) against a real server
started here, and checks every answer (no 5xx, no hang, statuses, content types and bodies as the schema says).

    python bench/fuzz_server.py [--examples 300] [--seed N | --random]

Prints how many requests were fuzzed, by status, and the time taken; exits non-zero on the first failure
(hypothesis prints the smallest example it found and a blob to reproduce it).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
from fuzz_support import fuzz  # noqa: E402
from test_server_fuzz import fuzz_app  # noqa: E402

from engine import load_model  # noqa: E402
from engine.server.thread import ServerThread  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=int, default=300, help="per operation and mode (valid, invalid)")
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--random", action="store_true", help="a fresh random seed (not reproducible)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    app = fuzz_app(load_model("tiny", device="cpu"))
    start = time.perf_counter()
    with ServerThread(app) as url:
        statuses = fuzz(url, args.examples, seed=None if args.random else args.seed)
    took = time.perf_counter() - start
    print(f"fuzzed {sum(statuses.values())} requests in {took:.0f} s, no failure; by status: "
          f"{dict(sorted(statuses.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
