"""The chapter's figures, measured on this machine in one run (tiny model unless --model).

    python bench/scheduling_figures.py [--model tiny] [--seed 0]

1. KV memory waste, paged vs contiguous, on chat-and-reports (vLLM paper: <4 % vs 60-80 %).
2. Continuous / static throughput on high-variance and on uniform (the gain grows with variance).
3. Short-request TTFT p50, static vs continuous, on chat-and-reports.
4. Interactive-class SLO attainment, FCFS vs priority vs EDF, on support-bot-vs-batch.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from engine.lab.experiment import run_requests, workload_requests
from engine.lab.workload import engine_config_for
from engine.models.loader import load_model
from engine.lab.workload import preset


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    loaded = load_model(args.model)

    def run(name, **settings):
        workload = preset(name)
        return run_requests(loaded, workload_requests(loaded, workload, args.seed),
                            engine_config_for(workload, **settings)).summary

    rows = []
    paged, contiguous = run("chat-and-reports", kv_layout="paged"), run("chat-and-reports", kv_layout="contiguous")
    whole = run("chat-and-reports", kv_layout="contiguous", contiguous_reserve="max_model_len")
    rows.append(("KV waste on chat-and-reports: paged | contiguous (max_tokens)",
                 f"{paged['kv_waste_share']:.1%}", f"{contiguous['kv_waste_share']:.1%}",
                 f"reserving max_model_len: {whole['kv_waste_share']:.1%}; contiguous refused "
                 f"{contiguous['admissions_refused_by_fragmentation']}x for fragmentation; "
                 f"max concurrent {paged['max_concurrent']} vs {contiguous['max_concurrent']}"))
    for name in ("high-variance", "uniform"):
        static, cont = run(name, batcher="static"), run(name, batcher="continuous")
        rows.append((f"throughput on {name}: static | continuous (tok/step)",
                     f"{static['throughput_tok_per_step']:.2f}", f"{cont['throughput_tok_per_step']:.2f}",
                     f"continuous/static {cont['throughput_tok_per_step'] / static['throughput_tok_per_step']:.2f}x "
                     f"per step, {cont['throughput_tok_per_s'] / static['throughput_tok_per_s']:.2f}x per second"))
    static, cont = run("chat-and-reports", batcher="static"), run("chat-and-reports", batcher="continuous")
    s_ttft, c_ttft = static["by_class"]["chat"]["ttft_steps"]["p50"], cont["by_class"]["chat"]["ttft_steps"]["p50"]
    s_ms, c_ms = static["by_class"]["chat"]["ttft_s"]["p50"] * 1e3, cont["by_class"]["chat"]["ttft_s"]["p50"] * 1e3
    rows.append(("chat TTFT p50 on chat-and-reports: static | continuous (steps)", f"{s_ttft:.1f}", f"{c_ttft:.1f}",
                 f"{s_ms:.1f} ms vs {c_ms:.1f} ms"))
    slo = {p: run("support-bot-vs-batch", policy=p) for p in ("fcfs", "priority", "edf")}
    rows.append(("support SLO attainment (TTFT <= 8 steps): fcfs | priority | edf",
                 f"{slo['fcfs']['by_class']['support']['slo_attainment']:.0%}",
                 f"{slo['priority']['by_class']['support']['slo_attainment']:.0%}",
                 f"edf {slo['edf']['by_class']['support']['slo_attainment']:.0%}; batch TTFT p50 (steps) "
                 + " / ".join(f"{p} {s['by_class']['batch']['ttft_steps']['p50']:.0f}" for p, s in slo.items())))
    print(f"model={args.model} seed={args.seed} threads={args.threads}")
    for label, a, b, note in rows:
        print(f"{label:<66}{a:>9}{b:>9}   {note}")


if __name__ == "__main__":
    main()
