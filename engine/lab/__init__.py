"""The lab around the core: workloads to run, runs to keep and replay, figures to compute.

    workload      arrival processes, length distributions, request classes, presets
    trace         JSONL record / replay of requests and snapshots
    experiment    run a workload through an engine and keep everything (LiveRun for the UI)
    recorder      rebuild a run's requests from its snapshots alone
    columns       a run's snapshots as compact integer columns, rebuilt exactly on demand
    metrics       throughput, latency percentiles, KV memory split, fairness, goodput
    bench         the `python -m engine bench` subcommand
    soak          random workloads with every accounting invariant checked each step
"""
