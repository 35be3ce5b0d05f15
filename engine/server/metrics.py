"""The server's /metrics under vLLM v1's names, so dashboards and tools made for vLLM read it unchanged.

Each server gets its own registry: several servers (tests) can live in one process.
"""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest

disable_created_metrics()  # as vLLM does: no *_created series beside each counter

LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
                   20.0, 40.0, 80.0)
ITERATION_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)


class ServerMetrics:
    def __init__(self, model_name: str):
        self.registry = r = CollectorRegistry()
        label = ["model_name"]

        def gauge(name, doc):
            return Gauge(name, doc, label, registry=r).labels(model_name)

        def counter(name, doc):  # declared without _total; prometheus_client exposes name_total
            return Counter(name, doc, label, registry=r).labels(model_name)

        def hist(name, doc, buckets=LATENCY_BUCKETS):
            return Histogram(name, doc, label, buckets=buckets, registry=r).labels(model_name)

        self.running = gauge("vllm:num_requests_running", "Requests in the running batch")
        self.waiting = gauge("vllm:num_requests_waiting", "Requests waiting to be scheduled")
        self.kv_usage = gauge("vllm:kv_cache_usage_perc", "KV-cache usage, 1 = full")
        self.preemptions = counter("vllm:num_preemptions", "Preemptions")
        self.prompt_tokens = counter("vllm:prompt_tokens", "Prefill tokens processed")
        self.generation_tokens = counter("vllm:generation_tokens", "Generation tokens processed")
        self.prefix_queries = counter("vllm:prefix_cache_queries", "Prompt tokens looked up in the prefix cache")
        self.prefix_hits = counter("vllm:prefix_cache_hits", "Prompt tokens found in the prefix cache")
        self._success = Counter("vllm:request_success", "Finished requests", ["model_name", "finished_reason"],
                                registry=r)
        self.ttft = hist("vllm:time_to_first_token_seconds", "Time to first token")
        self.itl = hist("vllm:inter_token_latency_seconds", "Inter-token latency")
        self.tpot = hist("vllm:request_time_per_output_token_seconds", "Time per output token of a request")
        self.e2e = hist("vllm:e2e_request_latency_seconds", "End-to-end request latency")
        self.queue = hist("vllm:request_queue_time_seconds", "Time waiting before the first schedule")
        self.prefill = hist("vllm:request_prefill_time_seconds", "First schedule to first token")
        self.decode = hist("vllm:request_decode_time_seconds", "First token to last token")
        self.iteration_tokens = hist("vllm:iteration_tokens_total", "Tokens per engine step", ITERATION_BUCKETS)
        self.model_name = model_name

    def success(self, finished_reason: str) -> None:
        self._success.labels(self.model_name, finished_reason).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
