"""Workload generation, trace record/replay and validation, the bench CLI, determinism."""
import json
import random

import pytest

from engine.__main__ import main
from engine.lab.experiment import LiveRun, run_requests, workload_requests
from engine.lab.workload import engine_config_for
from engine.lab.trace import TraceError, TraceRequest, packed, read_trace, write_trace
from engine.lab.workload import PRESETS, Arrivals, Lengths, generate, preset

STEP_FIGURES = ("steps", "output_tokens", "throughput_tok_per_step", "preemptions", "recomputed_tokens",
                "slot_utilisation", "kv_waste_share", "fairness_jain", "max_concurrent")


def test_length_distributions_stay_in_bounds_and_have_their_shape():
    rng = random.Random(0)
    for dist in (Lengths("fixed", 7), Lengths("uniform", low=3, high=9), Lengths("exponential", 40, 1, 400),
                 Lengths("lognormal", 100, 10, 1000, sigma=0.5)):
        xs = [dist.sample(rng) for _ in range(2000)]
        assert min(xs) >= dist.low and max(xs) <= dist.high
    exp = [Lengths("exponential", 40, 1, 10_000).sample(rng) for _ in range(4000)]
    assert 36 < sum(exp) / len(exp) < 44


def test_arrival_processes():
    rng = random.Random(1)
    assert Arrivals("all-at-once", start_step=3).steps(4, rng) == [3, 3, 3, 3]
    poisson = Arrivals("poisson", rate=0.5).steps(2000, rng)
    assert poisson == sorted(poisson) and 3600 < poisson[-1] < 4400  # ~ n / rate
    bursty = Arrivals("bursty", rate=0.5, burst_size=5).steps(20, rng)
    assert [bursty.count(s) for s in sorted(set(bursty))] == [5, 5, 5, 5]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_generate_reproducible_real_text(tiny, name):
    a = workload_requests(tiny, preset(name), seed=3)
    b = workload_requests(tiny, preset(name), seed=3)
    c = workload_requests(tiny, preset(name), seed=4)
    assert [r.to_dict() for r in a] == [r.to_dict() for r in b] != [r.to_dict() for r in c]
    text = tiny.tokenizer.decode(a[0].prompt_token_ids)
    assert sum(ch.isalpha() or ch.isspace() for ch in text) > 0.8 * len(text)
    assert all(r.sampling_params.ignore_eos for r in a)


def test_shared_prefix_and_classes():
    reqs = generate(preset("shared-system-prompt"), lambda t: list(t.encode()), seed=0, bos_token_id=256)
    assert all(r.prompt_token_ids[:97] == reqs[0].prompt_token_ids[:97] for r in reqs)
    support = generate(preset("support-bot-vs-batch"), lambda t: list(t.encode()), seed=0)
    classes = {r.request_class: r for r in support}
    assert classes["support"].slo.ttft_steps == 8 and classes["support"].priority < classes["batch"].priority


def test_step_based_figures_are_deterministic(tiny):
    workload = preset("chat-and-reports").scaled(0.4)
    runs = [run_requests(tiny, workload_requests(tiny, workload, seed=1), engine_config_for(workload)).summary
            for _ in range(2)]
    for key in STEP_FIGURES:
        assert runs[0][key] == runs[1][key], key
    assert runs[0]["by_class"]["chat"]["ttft_steps"] == runs[1]["by_class"]["chat"]["ttft_steps"]


def test_trace_round_trip_replays_the_same_run(tiny, tmp_path):
    workload = preset("support-bot-vs-batch").scaled(0.25)
    requests = workload_requests(tiny, workload, seed=0)
    config = engine_config_for(workload, policy="edf")
    first = run_requests(tiny, requests, config)
    path = tmp_path / "run.jsonl"
    write_trace(path, {"model": "tiny", "engine_config": first.config.to_dict()}, requests, first.snapshots)
    trace = read_trace(path)
    assert [r.to_dict() for r in trace.requests] == [r.to_dict() for r in requests]
    assert trace.snapshots == first.snapshots
    again = run_requests(tiny, trace.requests, engine_config_for(workload, policy="edf"))
    assert [s.batch for s in again.snapshots] == [s.batch for s in first.snapshots]
    kept = packed(trace)  # as the playground keeps an upload: every step as it was read, the replay the same
    assert len(kept.snapshots) == len(first.snapshots) and list(kept.snapshots) == list(first.snapshots)
    replayed = LiveRun.replay(kept.requests, kept.snapshots, first.config, "upload")
    assert replayed.summary() == LiveRun.replay(trace.requests, trace.snapshots, first.config, "upload").summary()


def good_lines():
    req = TraceRequest("a", [1, 2, 3], __import__("engine").SamplingParams(max_tokens=4))
    return [json.dumps({"kind": "header", "version": 1}), json.dumps(req.to_dict())]


@pytest.mark.parametrize("mutate,message", [
    (lambda ls: ls[:1] + ["{not json"], "line 2, column 2: not valid JSON"),
    (lambda ls: ls[:1] + ["[1, 2]"], "line 2: expected a JSON object"),
    (lambda ls: ls[1:], "no header"),
    (lambda ls: ls + [ls[1]], "line 3: request id 'a' appears twice"),
    (lambda ls: [ls[0], ls[1].replace("[1, 2, 3]", "[1, -2, 3]")], "line 2: request a: prompt_token_ids"),
    (lambda ls: [ls[0], ls[1].replace('"arrival_step": 0', '"arrival_step": "soon"')],
     "line 2: request a: arrival_step"),
    (lambda ls: [ls[0], ls[1].replace('"max_tokens": 4', '"max_tokens": 0')], "line 2: request a: max_tokens"),
    (lambda ls: [ls[0], ls[1].replace('"max_tokens": 4', '"max_tokenz": 4')], "line 2: request a"),
    (lambda ls: [ls[0], '{"kind": "comet"}'], "line 2: unknown kind 'comet'"),
    (lambda ls: [ls[0].replace('"version": 1', '"version": 9')], "line 1: unsupported trace version 9"),
    (lambda ls: ls + ['{"kind": "snapshot", "step": 1}'], "line 3: malformed snapshot"),
])
def test_malformed_traces_are_refused_with_the_line(mutate, message):
    with pytest.raises(TraceError, match=message):
        read_trace("\n".join(mutate(good_lines())).encode())


def test_oversized_and_binary_traces_are_refused(tmp_path):
    with pytest.raises(TraceError, match="not UTF-8"):
        read_trace(b"\xff\xfe\x00garbage")
    with pytest.raises(TraceError, match="limit"):
        read_trace(b" " * (64 * 1024 * 1024 + 1))
    with pytest.raises(TraceError, match="no trace file"):
        read_trace(tmp_path / "missing.jsonl")


def test_bench_cli_prints_every_metric_as_json(capsys):
    assert main(["bench", "--workload", "uniform", "--scale", "0.25", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("throughput_tok_per_s", "throughput_tok_per_step", "goodput_requests", "slot_utilisation",
                "kv_mean_share", "fairness_jain", "preemptions", "recomputed_tokens", "latency", "by_class",
                "by_length"):
        assert key in report
    assert report["latency"]["ttft_steps"]["p99"] is not None and report["engine_config"]["batcher"] == "continuous"


def test_bench_cli_compare_and_bad_trace(capsys, tmp_path):
    assert main(["bench", "--workload", "uniform", "--scale", "0.125", "--compare"]) == 0
    table = capsys.readouterr().out
    assert "static / fcfs / paged" in table and "continuous / edf / paged" in table
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "header", "version": 1}\n{"kind": "request"}\n')
    assert main(["bench", "--trace-in", str(bad)]) == 2
    assert "line 2: request_id must be a non-empty string" in capsys.readouterr().err
