"""What `vllm bench serve` reports, computed from per-request client measurements."""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from engine.lab.metrics import percentile

LATENCIES = ("ttft", "tpot", "itl", "e2el")


@dataclass
class RequestResult:
    request_class: str
    success: bool = False
    error: str = ""
    prompt_len: int = 0
    output_tokens: int = 0
    ttft: float = 0.0  # seconds from send to the first token
    itl: list[float] = field(default_factory=list)  # gaps between streamed tokens
    latency: float = 0.0  # send to last byte
    start: float = 0.0  # seconds since the benchmark began
    token_times: list[float] = field(default_factory=list)  # since the benchmark began

    @property
    def tpot(self) -> float | None:
        """Time per output token, the first excluded (vLLM's definition)."""
        return (self.latency - self.ttft) / (self.output_tokens - 1) if self.output_tokens > 1 else None

    def to_dict(self) -> dict:
        return {**asdict(self), "tpot": self.tpot}


def parse_goodput(items: list[str] | None) -> dict[str, float]:
    """`ttft:500 tpot:50 e2el:2000` (milliseconds) -> {"ttft": 500.0, ...}."""
    slos = {}
    for item in items or []:
        name, _, value = item.partition(":")
        if name not in ("ttft", "tpot", "e2el") or not value:
            raise ValueError(f"--goodput takes ttft:MS, tpot:MS or e2el:MS (got {item!r})")
        try:
            slos[name] = float(value)
        except ValueError:
            raise ValueError(f"--goodput {item!r}: {value!r} is not a number of milliseconds") from None
    return slos


def latency_stats(results: list[RequestResult], percentiles=(99,)) -> dict:
    """mean/median/pXX of each latency, in milliseconds."""
    ok = [r for r in results if r.success]
    series = {"ttft": [r.ttft for r in ok], "tpot": [r.tpot for r in ok if r.tpot is not None],
              "itl": [x for r in ok for x in r.itl], "e2el": [r.latency for r in ok]}
    out = {}
    for name, values in series.items():
        ms = [v * 1000 for v in values]
        out[f"mean_{name}_ms"] = statistics.fmean(ms) if ms else None
        out[f"median_{name}_ms"] = statistics.median(ms) if ms else None
        for p in percentiles:
            out[f"p{p:g}_{name}_ms"] = percentile(ms, p)
    return out


def is_good(r: RequestResult, slos: dict[str, float]) -> bool:
    values = {"ttft": r.ttft, "tpot": r.tpot or 0.0, "e2el": r.latency}
    return r.success and all(values[k] * 1000 <= v for k, v in slos.items())


def build_report(results: list[RequestResult], duration: float, slos: dict[str, float] | None = None,
              percentiles=(99,)) -> dict:
    """A load test's report in `vllm bench serve`'s field names, from what the client saw of each request
    (throughput, latency percentiles, goodput, per class); format_report prints it."""
    ok = [r for r in results if r.success]
    out_tokens = sum(r.output_tokens for r in ok)
    in_tokens = sum(r.prompt_len for r in ok)
    duration = max(duration, 1e-9)
    per_second: dict[int, int] = {}
    for r in ok:
        for t in r.token_times:
            per_second[int(t)] = per_second.get(int(t), 0) + 1
    events = sorted([(r.start, 1) for r in ok] + [(r.start + r.latency, -1) for r in ok])
    live = peak = 0
    for _, d in events:
        live += d
        peak = max(peak, live)
    report = {
        "completed": len(ok), "failed": len(results) - len(ok), "duration": duration,
        "total_input_tokens": in_tokens, "total_output_tokens": out_tokens,
        "request_throughput": len(ok) / duration, "output_throughput": out_tokens / duration,
        "total_token_throughput": (in_tokens + out_tokens) / duration,
        "max_output_tokens_per_s": max(per_second.values(), default=0), "max_concurrent_requests": peak,
        **latency_stats(results, percentiles),
    }
    if slos:
        report["request_goodput"] = sum(is_good(r, slos) for r in results) / duration
    classes = sorted({r.request_class for r in results})
    if len(classes) > 1:
        report["per_class"] = {c: {"completed": sum(r.success for r in results if r.request_class == c),
                                   **latency_stats([r for r in results if r.request_class == c], percentiles)}
                               for c in classes}
    errors = [r.error for r in results if not r.success]
    if errors:
        report["errors"] = sorted(set(errors))[:5]
    return report


def format_report(report: dict, percentiles=(99,)) -> str:
    lines = ["{s:{c}^60}".format(s=" Serving Benchmark Result ", c="=")]

    def row(label, value, fmt="{:<40} {:<10}"):
        lines.append(fmt.format(label, value if not isinstance(value, float) else f"{value:.2f}"))

    row("Successful requests:", report["completed"])
    row("Failed requests:", report["failed"])
    row("Benchmark duration (s):", report["duration"])
    row("Total input tokens:", report["total_input_tokens"])
    row("Total generated tokens:", report["total_output_tokens"])
    row("Request throughput (req/s):", report["request_throughput"])
    if "request_goodput" in report:
        row("Request goodput (req/s):", report["request_goodput"])
    row("Output token throughput (tok/s):", report["output_throughput"])
    row("Peak output token throughput (tok/s):", float(report["max_output_tokens_per_s"]))
    row("Peak concurrent requests:", report["max_concurrent_requests"])
    row("Total Token throughput (tok/s):", report["total_token_throughput"])
    titles = {"ttft": "Time to First Token", "tpot": "Time per Output Token (excl. 1st token)",
              "itl": "Inter-token Latency", "e2el": "End-to-end Latency"}

    def block(stats, title_suffix=""):
        for name in LATENCIES:
            lines.append("{s:{c}^60}".format(s=f" {titles[name]}{title_suffix} ", c="-"))
            for kind in ["mean", "median", *[f"p{p:g}" for p in percentiles]]:
                v = stats.get(f"{kind}_{name}_ms")
                row(f"{kind.capitalize() if kind[0] != 'p' else kind.upper()} {name.upper()} (ms):",
                    "-" if v is None else float(v))

    block(report)
    for cls, stats in report.get("per_class", {}).items():
        lines.append("{s:{c}^60}".format(s=f" class {cls}: {stats['completed']} requests ", c="="))
        block(stats, f" [{cls}]")
    for e in report.get("errors", []):
        lines.append(f"error: {e}")
    lines.append("=" * 60)
    return "\n".join(lines)
