"""Serving Lab's inference engine: a small, real, paged-KV LLM server core.

This module is the public contract: the CLI, the tests and the benchmarks import from here (the lab's own
modules import the submodules directly). Inside,
`engine.core` is the serving loop (read it first), `engine.lab` the workloads, runs, traces and
metrics around it, and `engine.models` the model loaders.

Each name is imported when first used (PEP 562), so importing one submodule (engine.messages, say) does not
load torch, the lab and the challenge through this package.
"""
import importlib

_WHERE = {  # public name -> (module, name there)
    "BACKENDS": ("engine.config", "BACKENDS"),
    "BATCHERS": ("engine.config", "BATCHERS"),
    "KV_LAYOUTS": ("engine.config", "KV_LAYOUTS"),
    "POLICIES": ("engine.config", "POLICIES"),
    "PREEMPTION_MODES": ("engine.config", "PREEMPTION_MODES"),
    "EngineConfig": ("engine.config", "EngineConfig"),
    "ModelConfig": ("engine.config", "ModelConfig"),
    "cdiv": ("engine.config", "cdiv"),
    "cuda_available": ("engine.config", "cuda_available"),
    "resolve_device": ("engine.config", "resolve_device"),
    "blocks_to_reserve": ("engine.core.contiguous", "blocks_to_reserve"),
    "LLMEngine": ("engine.core.llm_engine", "LLMEngine"),
    "planned_runtime": ("engine.core.llm_engine", "planned_runtime"),
    "runtime_of": ("engine.core.llm_engine", "runtime_of"),
    "SLO": ("engine.core.request", "SLO"),
    "FinishReason": ("engine.core.request", "FinishReason"),
    "Request": ("engine.core.request", "Request"),
    "ServiceClass": ("engine.core.request", "ServiceClass"),
    "RequestView": ("engine.core.snapshot", "RequestView"),
    "StepSnapshot": ("engine.core.snapshot", "StepSnapshot"),
    "StepStats": ("engine.core.snapshot", "StepStats"),
    "CHALLENGE_TARGETS": ("engine.lab.challenge_score", "DEFAULT_TARGETS"),
    "CHALLENGE": ("engine.lab.challenge", "CHALLENGE"),
    "PUBLIC_SEED": ("engine.lab.challenge", "PUBLIC_SEED"),
    "Grade": ("engine.lab.challenge", "Grade"),
    "builtin_run": ("engine.lab.challenge", "builtin_run"),
    "fcfs_run": ("engine.lab.challenge", "fcfs_run"),
    "grade_key": ("engine.lab.challenge", "grade_key"),
    "grade_runs": ("engine.lab.challenge", "grade_runs"),
    "hidden_seeds": ("engine.lab.challenge", "hidden_seeds"),
    "run_key": ("engine.lab.challenge", "run_key"),
    "LiveRun": ("engine.lab.experiment", "LiveRun"),
    "RunResult": ("engine.lab.experiment", "RunResult"),
    "measure_batch_curve": ("engine.lab.batch_curve", "measure_batch_curve"),
    "measure_decode": ("engine.lab.batch_curve", "measure_decode"),
    "run_requests": ("engine.lab.experiment", "run_requests"),
    "workload_requests": ("engine.lab.experiment", "workload_requests"),
    "engine_config_for": ("engine.lab.workload", "engine_config_for"),
    "free_runs": ("engine.lab.metrics", "free_runs"),
    "kv_split": ("engine.lab.metrics", "kv_split"),
    "kv_timeline": ("engine.lab.metrics", "kv_timeline"),
    "request_metrics": ("engine.lab.metrics", "request_metrics"),
    "summarize": ("engine.lab.metrics", "summarize"),
    "Trace": ("engine.lab.trace", "Trace"),
    "TraceError": ("engine.lab.trace", "TraceError"),
    "TraceRequest": ("engine.lab.trace", "TraceRequest"),
    "read_trace": ("engine.lab.trace", "read_trace"),
    "write_trace": ("engine.lab.trace", "write_trace"),
    "PRESETS": ("engine.lab.workload", "PRESETS"),
    "Arrivals": ("engine.lab.workload", "Arrivals"),
    "Lengths": ("engine.lab.workload", "Lengths"),
    "RequestClassSpec": ("engine.lab.workload", "RequestClassSpec"),
    "Workload": ("engine.lab.workload", "Workload"),
    "preset": ("engine.lab.workload", "preset"),
    "LLM": ("engine.llm", "LLM"),
    "RequestOutput": ("engine.llm", "RequestOutput"),
    "MESSAGES": ("engine.messages", "MESSAGES"),
    "ConfigError": ("engine.messages", "ConfigError"),
    "EngineError": ("engine.messages", "EngineError"),
    "EngineMessage": ("engine.messages", "EngineMessage"),
    "render_message": ("engine.messages", "render"),
    "LoadedModel": ("engine.models.loaded", "LoadedModel"),
    "cache_root": ("engine.models.loaded", "cache_root"),
    "POLICY_KEY_FIELDS": ("engine.policy_key", "FIELDS"),
    "MAX_KEY_CHARS": ("engine.policy_key", "MAX_KEY_CHARS"),
    "PolicyKeyError": ("engine.policy_key", "PolicyKeyError"),
    "compile_key": ("engine.policy_key", "compile_key"),
    "DEFAULT_MODEL": ("engine.models.loader", "DEFAULT_MODEL"),
    "MODEL_CHOICES": ("engine.models.loader", "MODEL_CHOICES"),
    "load_model": ("engine.models.loader", "load_model"),
    "SamplingParams": ("engine.sampling_params", "SamplingParams"),
}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    module, attr = _WHERE[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = list(_WHERE)  # the public names are the ones _WHERE places
