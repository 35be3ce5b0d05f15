"""Read a server's Prometheus /metrics into one shape, whether vLLM or SGLang wrote it.

The page and the load client only need four series: running, waiting, KV usage (0-1) and
preemptions so far. Each engine names them differently; the prefix tells which engine it is.
"""
from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

# field -> sample names to try, first found wins (summed over label sets such as model_name)
NAMES = {
    "vllm": {"running": ["vllm:num_requests_running"], "waiting": ["vllm:num_requests_waiting"],
             "kv_usage": ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
             "preemptions": ["vllm:num_preemptions_total"],
             "prompt_tokens": ["vllm:prompt_tokens_total"], "generation_tokens": ["vllm:generation_tokens_total"]},
    "sglang": {"running": ["sglang:num_running_reqs"], "waiting": ["sglang:num_queue_reqs"],
               "kv_usage": ["sglang:token_usage"],
               "preemptions": ["sglang:num_retracted_requests_total", "sglang:num_retracted_reqs"],
               "prompt_tokens": ["sglang:prompt_tokens_total"],
               "generation_tokens": ["sglang:generation_tokens_total"]},
}
FIELDS = ("running", "waiting", "kv_usage", "preemptions", "prompt_tokens", "generation_tokens")


@dataclass
class ServerSample:
    kind: str  # vllm | sglang | unknown
    running: float | None = None
    waiting: float | None = None
    kv_usage: float | None = None
    preemptions: float | None = None
    prompt_tokens: float | None = None
    generation_tokens: float | None = None
    t: float = 0.0  # seconds since the load started, set by the caller

    def to_dict(self) -> dict:
        return {"t": self.t, "kind": self.kind, **{f: getattr(self, f) for f in FIELDS}}


def engine_kind(text: str) -> str:
    for kind in NAMES:
        if f"\n{kind}:" in "\n" + text or f"# TYPE {kind}:" in text:
            return kind
    return "unknown"


def read_metrics(text: str) -> ServerSample:
    """Parse Prometheus exposition text; a series the server does not expose stays None."""
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            totals[s.name] = totals.get(s.name, 0.0) + s.value
    kind = engine_kind(text)
    sample = ServerSample(kind)
    for field, candidates in NAMES.get(kind, {}).items():
        setattr(sample, field, next((totals[n] for n in candidates if n in totals), None))
    return sample
