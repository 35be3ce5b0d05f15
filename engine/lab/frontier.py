"""The trade-off frontier: one knob swept over a workload, each setting one real run, read as a point of throughput
(output tokens per step) against tail latency (TTFT p95 or TPOT p95, in steps). A point is on the Pareto frontier
when no other point has at least its throughput and at most its latency, and one of the two strictly better.
Steps, not seconds: the same sweep gives the same points on a busy server. Counted in steps a bigger batch costs
no time, so latency rises with throughput only where something binds: KV memory (pre-emptions stall tokens: TPOT)
or the policy's order."""
from __future__ import annotations

from dataclasses import dataclass

from engine.config import POLICIES

# the values a sweep takes, per knob: six settings each where the knob is a number
KNOBS = {"max_num_seqs": (2, 4, 8, 12, 16, 32), "max_num_batched_tokens": (64, 128, 256, 512, 1024, 2048),
         "policy": POLICIES}


LATENCIES = ("ttft_p95", "tpot_p95")  # the latency axis: time to first token, or time per output token (p95, steps)


@dataclass(frozen=True)
class Point:
    value: int | str  # the knob's setting
    throughput: float  # output tokens per step
    latency: dict  # LATENCIES -> the run's figure (steps; TPOT in steps per token)
    by_class: dict  # class -> {LATENCIES -> its figure}
    on_frontier: bool = False


def point(value, summary: dict) -> Point:
    """A run's point, from its summarize() dict."""
    def figures(d: dict) -> dict:
        return {f"{name}_p95": (d.get(f"{name}_steps") or {}).get("p95") for name in ("ttft", "tpot")}
    by_class = {c: figures(d) for c, d in (summary.get("by_class") or {}).items()}
    return Point(value, summary["throughput_tok_per_step"], figures(summary["latency"]), by_class)


def with_frontier(points: list[Point], latency: str = "ttft_p95") -> list[Point]:
    """The points, each marked on the frontier (of throughput against `latency`) or not."""
    def beats(q: Point, p: Point) -> bool:
        a, b = q.latency[latency], p.latency[latency]
        return a is not None and b is not None and q.throughput >= p.throughput and a <= b \
            and (q.throughput > p.throughput or a < b)
    return [Point(p.value, p.throughput, p.latency, p.by_class,
                  p.latency[latency] is not None and not any(beats(q, p) for q in points)) for p in points]


def best_within(points: list[Point], slo: float, latency: str = "ttft_p95") -> Point | None:
    """The point of most throughput whose `latency` meets the SLO (at most `slo`); None if none does."""
    meeting = [p for p in points if p.latency[latency] is not None and p.latency[latency] <= slo]
    return max(meeting, key=lambda p: (p.throughput, -p.latency[latency])) if meeting else None
