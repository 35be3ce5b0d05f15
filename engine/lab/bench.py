"""`python -m engine bench`: run a workload on the real engine and print every metric.

    python -m engine bench --workload chat-and-reports --batcher continuous --policy fcfs --kv paged --json
    python -m engine bench --workload support-bot-vs-batch --compare
    python -m engine bench --workload chat-and-reports --policy-key "waited - 0.1 * max_tokens"
"""
from __future__ import annotations

import argparse
import json
import sys

from engine.config import BATCHERS, KV_LAYOUTS, POLICIES, PREEMPTION_MODES, EngineConfig
from engine.lab.experiment import RunResult, run_requests, workload_requests
from engine.lab.workload import engine_config_for
from engine.models.loader import DEFAULT_MODEL, load_model
from engine.lab.trace import read_trace, write_trace
from engine.lab.workload import PRESETS, preset
from engine.policy_key_flags import POLICY_KEY_KNOBS, add_policy_key_args

# (label, settings): the matrix --compare runs on one workload
COMPARE = [
    ("static / fcfs / paged", dict(batcher="static", policy="fcfs", kv_layout="paged")),
    ("continuous / fcfs / paged", dict(batcher="continuous", policy="fcfs", kv_layout="paged")),
    ("continuous / fcfs / contiguous", dict(batcher="continuous", policy="fcfs", kv_layout="contiguous")),
    ("continuous / sjf / paged", dict(batcher="continuous", policy="sjf", kv_layout="paged")),
    ("continuous / priority / paged", dict(batcher="continuous", policy="priority", kv_layout="paged")),
    ("continuous / edf / paged", dict(batcher="continuous", policy="edf", kv_layout="paged")),
]


def add_bench_parser(sub) -> None:
    p = sub.add_parser("bench", help="run a workload and print its metrics")
    p.add_argument("--workload", choices=sorted(PRESETS), default="chat-and-reports")
    p.add_argument("--trace-in", help="replay the requests of this JSONL trace instead of a preset")
    p.add_argument("--trace-out", help="record the requests and snapshots of the run to this JSONL file")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scale", type=float, default=1.0, help="more or fewer requests of the same mix")
    p.add_argument("--batcher", choices=BATCHERS)
    p.add_argument("--policy", choices=POLICIES)
    add_policy_key_args(p)
    p.add_argument("--kv", dest="kv_layout", choices=KV_LAYOUTS)
    p.add_argument("--preemption", dest="preemption_mode", choices=PREEMPTION_MODES)
    p.add_argument("--prefix-caching", dest="enable_prefix_caching", action=argparse.BooleanOptionalAction,
                   default=None)
    p.add_argument("--chunked-prefill", dest="enable_chunked_prefill", action=argparse.BooleanOptionalAction,
                   default=None)
    p.add_argument("--vllm-v1-semantics", dest="vllm_v1_semantics", action="store_true", default=None,
                   help="schedule as vLLM v1 does: no waiting request preempts running ones, recompute only")
    p.add_argument("--max-num-seqs", type=int)
    p.add_argument("--max-num-batched-tokens", type=int)
    p.add_argument("--num-blocks", type=int)
    p.add_argument("--block-size", type=int)
    p.add_argument("--backend", dest="attention_backend", choices=("auto", "torch", "triton"))
    p.add_argument("--json", action="store_true", help="print one JSON object with every metric")
    p.add_argument("--compare", action="store_true", help="run a matrix of batchers, policies and layouts")
    p.set_defaults(func=cmd_bench)


KNOBS = ("batcher", "policy", "kv_layout", "preemption_mode", "enable_prefix_caching", "enable_chunked_prefill",
         "max_num_seqs", "max_num_batched_tokens", "num_blocks", "block_size", "attention_backend",
         "vllm_v1_semantics", *POLICY_KEY_KNOBS)


def cmd_bench(args) -> int:
    if args.policy_key is not None or args.policy_victim_key is not None:  # a refused key, before the model loads
        EngineConfig(**{k: getattr(args, k) for k in POLICY_KEY_KNOBS}).validate()
    loaded = load_model(args.model, progress=lambda msg, frac: print(f"[model] {msg}", file=sys.stderr)
                        if not args.json else None)
    if args.trace_in:
        trace = read_trace(args.trace_in)
        if not trace.requests:
            raise SystemExit(f"error: {args.trace_in} has snapshots but no requests to replay")
        workload, requests, name = None, trace.requests, args.trace_in
        vocab = loaded.model.config.vocab_size
        bad = next((r for r in requests if max(r.prompt_token_ids) >= vocab), None)
        if bad:
            raise SystemExit(f"error: request {bad.request_id} has token ids beyond this model's vocabulary ({vocab}): "
                             f"the trace was recorded with another model ({trace.header.get('model')!r})")
    else:
        workload = preset(args.workload).scaled(args.scale)
        requests, name = workload_requests(loaded, workload, args.seed), args.workload
    knobs = {k: getattr(args, k) for k in KNOBS}
    if args.compare:
        runs = [(label, run_requests(loaded, requests, engine_config_for(workload, **{**knobs, **settings})))
                for label, settings in COMPARE]
        print(json.dumps({label: report(r, name, args) for label, r in runs}) if args.json
              else compare_table(runs, name))
        return 0
    result = run_requests(loaded, requests, engine_config_for(workload, **knobs))
    if args.trace_out:
        write_trace(args.trace_out, {"model": args.model, "workload": name, "seed": args.seed,
                                     "engine_config": result.config.to_dict()}, requests, result.snapshots)
    print(json.dumps(report(result, name, args)) if args.json else summary_text(result, name))
    return 0


def report(result: RunResult, name: str, args) -> dict:
    return {"workload": name, "model": args.model, "seed": args.seed, "engine_config": result.config.to_dict(),
            **result.summary}


def _fmt(value, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def compare_table(runs: list[tuple[str, RunResult]], name: str) -> str:
    classes = sorted(runs[0][1].summary["by_class"])
    head = (f"{'batcher / policy / kv':<32}{'steps':>6}{'tok/step':>9}{'tok/s':>7}{'KV waste':>9}{'Jain':>6}"
            f"{'preempt':>8}"
            + "".join(f"{'TTFT p50 ' + c:>18}{'SLO ' + c:>12}" for c in classes))
    lines = [f"workload: {name} (TTFT in steps; SLO: share of requests meeting theirs)", head, "-" * len(head)]
    for label, r in runs:
        s = r.summary
        row = (f"{label:<32}{s['steps']:>6}{_fmt(s['throughput_tok_per_step'], '.2f'):>9}"
               f"{_fmt(s['throughput_tok_per_s'], '.0f'):>7}{s['kv_waste_share']:>9.0%}"
               f"{_fmt(s['fairness_jain'], '.2f'):>6}"
               f"{s['preemptions']:>8}")
        for c in classes:
            lat = s["by_class"][c]
            slo = lat["slo_attainment"]
            row += f"{_fmt(lat['ttft_steps']['p50']):>18}{'-' if slo is None else format(slo, '.0%'):>12}"
        lines.append(row)
    return "\n".join(lines)


def summary_text(result: RunResult, name: str) -> str:
    s, c = result.summary, result.config
    lat = s["latency"]
    lines = [
        f"workload {name}: {s['num_requests']} requests ({s['num_finished']} finished, {s['num_rejected']} rejected)",
        f"engine: {c.batcher} batcher, {policy_label(c)} policy, "
        f"{c.kv_layout} KV ({c.num_blocks} blocks of {c.block_size}), "
        f"max_num_seqs {c.max_num_seqs}, max_num_batched_tokens {c.max_num_batched_tokens}",
        f"throughput: {_fmt(s['throughput_tok_per_s'], '.0f')} tok/s, "
        f"{_fmt(s['throughput_tok_per_step'], '.2f')} tok/step "
        f"over {s['steps']} steps ({s['wall_s']:.2f} s)",
        f"latency (steps) p50/p90/p99: queue {_fmt(lat['queue_steps']['p50'])}/{_fmt(lat['queue_steps']['p90'])}/"
        f"{_fmt(lat['queue_steps']['p99'])}, TTFT {_fmt(lat['ttft_steps']['p50'])}/{_fmt(lat['ttft_steps']['p90'])}/"
        f"{_fmt(lat['ttft_steps']['p99'])}, e2e {_fmt(lat['e2e_steps']['p50'])}/{_fmt(lat['e2e_steps']['p90'])}/"
        f"{_fmt(lat['e2e_steps']['p99'])}",
        f"latency (ms) p50: TTFT {_fmt(_ms(lat['ttft_s']['p50']))}, TPOT {_fmt(_ms(lat['tpot_s']['p50']), '.2f')}, "
        f"e2e {_fmt(_ms(lat['e2e_s']['p50']))}",
        f"memory: KV waste {s['kv_waste_share']:.1%}, peak use {s['kv_peak_used_share']:.0%}, "
        f"refused by fragmentation {s['admissions_refused_by_fragmentation']}x, "
        f"prefix-cached tokens {s['prefix_cached_tokens']}",
        f"fairness (Jain over slowdown): {_fmt(s['fairness_jain'], '.3f')}; slot use {s['slot_utilisation']:.0%}; "
        f"preemptions {s['preemptions']} ({s['recomputed_tokens']} tokens recomputed, "
        f"{s['blocks_swapped']} blocks swapped)",
    ]
    if s.get("stopped"):
        lines.append(f"stopped early: {s['stopped']}")
    for cls, d in s["by_class"].items():
        slo = d["slo_attainment"]
        lines.append(f"  class {cls}: {d['num_requests']} requests, TTFT p50 {_fmt(d['ttft_steps']['p50'])} steps, "
                     f"p90 {_fmt(d['ttft_steps']['p90'])}; SLO met {'-' if slo is None else format(slo, '.0%')}")
    return "\n".join(lines)


def policy_label(config) -> str:
    if config.policy_key is None:
        return config.policy
    victim = f", victim key {config.policy_victim_key!r}" if config.policy_victim_key else ""
    return f"key {config.policy_key!r}{victim}{' (preemptive)' if config.policy_key_preemptive else ''}"


def _ms(seconds):
    return None if seconds is None else seconds * 1000
