"""The figures evidence names: where each sits in summarize()'s dict, which way is worse, how it is shown, and
what change counts as clear."""
from __future__ import annotations

from dataclasses import dataclass

from lessons.grading import metric_value

CLEAR_SHARE = 0.15  # a clear effect moves a figure by at least this share of its baseline value ...


@dataclass(frozen=True)
class Metric:
    id: str
    path: str  # dotted path into summarize(); "{scope}" is "latency" (every request) or "by_class.<name>"
    worse: int  # +1: higher is worse; -1: lower is worse
    floor: float  # ... and by at least this much (in shown units)
    per_class: bool = True
    scale: float = 1.0  # shown = value * scale (a 0-1 share shown in percent)
    digits: int = 1  # decimals the lab shows (and a figure typed from the page carries)

    def value(self, summary: dict, who: str = "all") -> float | None:
        scope = "latency" if who == "all" else f"by_class.{who}"
        raw = metric_value(summary, self.path.format(scope=scope))
        return None if raw is None else raw * self.scale

    def tolerance(self, measured: float) -> float:
        """How far a typed figure may sit from the measured one: the page's rounding, or 1 %."""
        return max(0.5 * 10 ** -self.digits, 0.01 * abs(measured))

    def clearly_worse(self, before: float, after: float) -> bool:
        moved = (after - before) * self.worse
        return moved >= self.floor and moved >= CLEAR_SHARE * abs(before)


METRICS = {m.id: m for m in (
    Metric("ttft_p95", "{scope}.ttft_steps.p95", +1, 2),
    Metric("wait_mean", "{scope}.queue_steps.mean", +1, 2),
    Metric("e2e_p95", "{scope}.e2e_steps.p95", +1, 5),
    Metric("slowdown_max", "{scope}.slowdown.max", +1, 0.2, digits=2),
    Metric("slo", "{scope}.slo_attainment", -1, 5, scale=100, digits=0),
    Metric("throughput", "throughput_tok_per_step", -1, 0.1, per_class=False, digits=2),
    Metric("preemptions", "preemptions", +1, 2, per_class=False, digits=0),
    Metric("kv_peak", "kv_peak_used_share", +1, 5, per_class=False, scale=100, digits=0),
    Metric("fairness", "fairness_jain", -1, 0.03, per_class=False, digits=2),
    # the figures of the two comparison worksheets
    Metric("running", "max_concurrent", +1, 1, per_class=False, digits=0),
    Metric("kv_waste", "kv_waste_share", +1, 2, per_class=False, scale=100),
    Metric("refusals", "admissions_refused_by_fragmentation", +1, 1, per_class=False, digits=0),
)}
EFFECT_METRICS = ("ttft_p95", "wait_mean", "e2e_p95", "slowdown_max", "slo", "throughput", "preemptions", "kv_peak",
                  "fairness")  # what a student may say a harder request hurts
