"""Rebuilding a run from its snapshots alone gives the engine's own stamps and metrics."""
import json

from engine.lab.experiment import run_requests, workload_requests
from engine.lab.workload import engine_config_for
from engine.lab.recorder import RunRecorder
from engine.core.snapshot import StepSnapshot
from engine.lab.workload import preset

STEP_STAMPS = ("arrival_step", "first_scheduled_step", "first_token_step", "finish_step", "token_steps",
               "output_token_ids", "num_preemptions", "num_recomputed_tokens", "num_cached_tokens")


def test_replay_from_snapshots_matches_the_engine(tiny):
    workload = preset("support-bot-vs-batch").scaled(0.25)
    requests = workload_requests(tiny, workload, seed=2)
    config = engine_config_for(workload, policy="edf", num_blocks=40)
    run = run_requests(tiny, requests, config)
    assert run.summary["preemptions"] > 0
    recorder = RunRecorder(requests, config.max_num_seqs, config.max_num_batched_tokens)
    for snap in run.snapshots:  # through JSON, as a saved trace would be
        recorder.add(StepSnapshot.from_dict(json.loads(json.dumps(snap.to_dict()))))
    for original in run.requests:
        rebuilt = recorder.requests[original.request_id]
        for stamp in STEP_STAMPS:
            assert getattr(rebuilt, stamp) == getattr(original, stamp), (original.request_id, stamp)
        assert rebuilt.finish_reason == original.finish_reason
        assert abs(rebuilt.first_token_time - original.first_token_time) < 0.05
    replayed = recorder.summary()
    for key in ("steps", "output_tokens", "throughput_tok_per_step", "preemptions", "recomputed_tokens",
                "fairness_jain", "kv_waste_share", "slot_utilisation"):
        assert replayed[key] == run.summary[key], key
    assert replayed["by_class"]["support"]["ttft_steps"] == run.summary["by_class"]["support"]["ttft_steps"]


def test_frame_metrics_only_see_the_past(tiny):
    workload = preset("chat-and-reports").scaled(0.3)
    requests = workload_requests(tiny, workload, seed=0)
    config = engine_config_for(workload)
    run = run_requests(tiny, requests, config)
    recorder = RunRecorder(requests, config.max_num_seqs, config.max_num_batched_tokens)
    for snap in run.snapshots:
        recorder.add(snap)
    first = recorder.frame_metrics(0)
    last = recorder.frame_metrics(len(run.snapshots) - 1)
    assert first["tokens"] == len(run.snapshots[0].emitted) and first["finished"] == 0
    assert last["tokens"] == run.summary["output_tokens"] and last["finished"] == len(requests)
    assert last["classes"]["chat"]["ttft_p50_steps"] == run.summary["by_class"]["chat"]["ttft_steps"]["p50"]
    middle = recorder.frame_metrics(len(run.snapshots) // 2)
    assert first["tokens"] <= middle["tokens"] <= last["tokens"]
