"""The load client and the metric reader: against the lab's own server, and against recorded
exposition text in vLLM's and SGLang's format."""
import asyncio
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from engine.server.bench_report import RequestResult, build_report, parse_goodput
from engine.server.cli import make_app
from engine.server.loadgen import LoadSpec, run_load, send_times, bench_requests
from engine.server.metric_reader import read_metrics
from engine.server.thread import ServerThread

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "metrics"


def test_the_reader_takes_vllm_names_from_vllm_exposition():
    s = read_metrics((FIXTURES / "vllm.txt").read_text())
    assert (s.kind, s.running, s.waiting, s.kv_usage, s.preemptions) == ("vllm", 12, 5, 0.87, 3)
    assert s.generation_tokens == 20110


def test_the_reader_takes_sglang_names_from_sglang_exposition():
    s = read_metrics((FIXTURES / "sglang.txt").read_text())
    assert (s.kind, s.running, s.waiting, s.kv_usage, s.preemptions) == ("sglang", 30, 7, 0.64, 4)


def test_the_reader_knows_nothing_of_an_unknown_server():
    s = read_metrics("# TYPE other_metric gauge\nother_metric 1.0\n")
    assert s.kind == "unknown" and s.running is None


def test_send_times_keep_the_mean_rate_and_inf_sends_everything_at_once():
    assert send_times(5, float("inf"), 1.0, 0) == [0.0] * 5
    times = send_times(2000, 10.0, 1.0, 0)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert statistics.fmean(gaps) == pytest.approx(0.1, rel=0.1)
    burst = send_times(2000, 10.0, 0.25, 0)
    bursty = [b - a for a, b in zip(burst, burst[1:])]
    assert statistics.fmean(bursty) == pytest.approx(0.1, rel=0.15)
    assert statistics.pstdev(bursty) > 1.5 * statistics.pstdev(gaps)  # burstiness < 1: more spread


def test_goodput_counts_only_requests_within_every_slo():
    fast = RequestResult("a", success=True, output_tokens=3, ttft=0.1, latency=0.3, token_times=[0.1, 0.2, 0.3])
    slow = RequestResult("b", success=True, output_tokens=3, ttft=0.9, latency=1.2, token_times=[0.9, 1.0, 1.2])
    report = build_report([fast, slow], duration=2.0, slos=parse_goodput(["ttft:500"]))
    assert report["request_goodput"] == 0.5 and report["completed"] == 2
    assert set(report["per_class"]) == {"a", "b"}
    with pytest.raises(ValueError, match="ttft:MS"):
        parse_goodput(["latency:5"])


def test_workload_requests_keep_the_presets_classes_and_count():
    reqs = bench_requests("chat-and-reports", 12, seed=0)
    assert len(reqs) == 12 and {r.request_class for r in reqs} == {"chat", "report"}
    assert reqs == bench_requests("chat-and-reports", 12, seed=0)


def test_loadgen_against_the_lab_server_measures_every_request_and_reads_its_metrics(tiny):
    app = make_app("tiny", loaded=tiny, max_num_seqs=4)
    requests = bench_requests("chat-and-reports", 10, seed=1)
    requests = [r.__class__(r.prompt, min(r.max_tokens, 40), r.request_class) for r in requests]
    seen = []
    with ServerThread(app) as url:
        result = asyncio.run(run_load(LoadSpec(url, request_rate=20.0, max_concurrency=8, slos={"e2el": 60000}),
                                      requests, on_progress=lambda done, tl: seen.append((len(done), len(tl)))))
    assert result["completed"] == 10 and result["failed"] == 0 and result["model"] == "tiny"
    assert result["total_output_tokens"] == sum(r.max_tokens for r in requests)  # ignore_eos: exact lengths
    assert result["request_goodput"] == result["request_throughput"]
    assert result["engine_kind"] == "vllm" and result["timeline"]
    assert max(s["running"] for s in result["timeline"]) <= 4  # the server's own gauge, never above max_num_seqs
    assert set(result["per_class"]) == {"chat", "report"}
    assert all(r["ttft"] > 0 and r["output_tokens"] == len(r["token_times"]) for r in result["requests"])
    assert seen and seen[-1][0] == 10


def test_the_cli_serves_and_loadgen_saves_a_result(tmp_path):
    from engine.server.thread import free_port

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "engine", "serve", "--model", "tiny", "--port", str(port),
                               "--max-num-seqs", "4"], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        assert "serving tiny on http://127.0.0.1:" in server.stderr.readline()
        out = tmp_path / "result.json"
        run = subprocess.run([sys.executable, "-m", "engine", "loadgen", "--base-url", f"http://127.0.0.1:{port}",
                              "--workload", "uniform", "--num-prompts", "4", "--ignore-eos", "--request-rate", "50",
                              "--goodput", "ttft:60000", "--save-result", str(out)],
                             cwd=ROOT, capture_output=True, text=True, timeout=180)
        assert run.returncode == 0, run.stderr
        assert "Successful requests:" in run.stdout and "Mean TTFT (ms):" in run.stdout
        saved = json.loads(out.read_text())
        assert saved["completed"] == 4 and saved["total_output_tokens"] == 4 * 64
        bad = subprocess.run([sys.executable, "-m", "engine", "loadgen", "--base-url", f"http://127.0.0.1:{port}",
                              "--goodput", "speed:5"], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and "--goodput" in bad.stderr and "Traceback" not in bad.stderr
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.mark.parametrize("base_url, says", [("notaurl", "--base-url must be an http:// or https:// address"),
                                             ("ftp://127.0.0.1:21", "--base-url must be an http:// or https://"),
                                             ("http://127.0.0.1:9", "Cannot connect to host 127.0.0.1:9")])
def test_a_bad_or_dead_base_url_is_one_line_and_exit_status_2(base_url, says):
    run = subprocess.run([sys.executable, "-m", "engine", "loadgen", "--base-url", base_url, "--num-prompts", "2"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and says in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_the_in_process_run_sends_on_the_same_schedule_and_reports_in_the_same_shape(tiny):
    import torch

    from engine import EngineConfig
    from engine.server.replay import run_in_process

    requests = bench_requests("uniform", 6, seed=0)
    before = torch.get_num_threads()
    result = run_in_process(tiny, EngineConfig(max_num_seqs=2), requests, LoadSpec("-", request_rate=50.0),
                            num_threads=1)
    assert torch.get_num_threads() == before  # the page's process keeps its own setting
    assert result["completed"] == 6 and result["total_output_tokens"] == 6 * 64
    assert max(s["running"] for s in result["timeline"]) == 2 and max(s["waiting"] for s in result["timeline"]) >= 1
    starts = sorted(r["start"] for r in result["requests"])
    assert starts == sorted(starts) and starts[-1] > 0  # sent over time at 50 req/s, not all at once
    assert all(r["ttft"] > 0 and r["latency"] >= r["ttft"] for r in result["requests"])


def test_a_recorded_trace_becomes_the_load_in_arrival_order(tmp_path):
    from engine import SamplingParams
    from engine.server.loadgen import trace_requests
    from engine.lab.trace import TraceRequest, write_trace

    reqs = [TraceRequest("b", list(b"late one"), SamplingParams(max_tokens=7), arrival_step=5, request_class="x"),
            TraceRequest("a", [1, 2], SamplingParams(max_tokens=3), arrival_step=0, prompt="early one")]
    write_trace(tmp_path / "t.jsonl", {"model": "tiny"}, reqs, [])
    got = trace_requests(str(tmp_path / "t.jsonl"))
    assert [(r.prompt, r.max_tokens, r.request_class) for r in got] == [("early one", 3, "default"),
                                                                        ("late one", 7, "x")]
