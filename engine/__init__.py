"""Serving Lab's inference engine: a small, real, paged-KV LLM server core.

This module is the public contract: the UI, the CLI and the tests import from here. Inside,
`engine.core` is the serving loop (read it first), `engine.lab` the workloads, runs, traces and
metrics around it, and `engine.models` the model loaders.
"""
from engine.config import (BACKENDS, BATCHERS, KV_LAYOUTS, POLICIES, PREEMPTION_MODES, EngineConfig, ModelConfig, cdiv,
                           cuda_available, resolve_device)
from engine.core.contiguous import blocks_to_reserve
from engine.core.llm_engine import LLMEngine, planned_runtime, runtime_of
from engine.core.request import SLO, FinishReason, Request, ServiceClass
from engine.core.snapshot import RequestView, StepSnapshot, StepStats
from engine.lab.challenge import DEFAULT_TARGETS as CHALLENGE_TARGETS
from engine.lab.challenge import (CHALLENGE, PUBLIC_SEED, Grade, builtin_run, fcfs_run, grade_key, grade_runs,
                                  run_key)
from engine.lab.experiment import (LiveRun, RunResult, engine_config_for, measure_batch_curve, measure_decode,
                                   run_requests, workload_requests)
from engine.lab.metrics import free_runs, kv_split, kv_timeline, request_metrics, summarize
from engine.lab.trace import Trace, TraceError, TraceRequest, read_trace, write_trace
from engine.lab.workload import PRESETS, Arrivals, Lengths, RequestClassSpec, Workload, preset
from engine.llm import LLM, RequestOutput
from engine.messages import MESSAGES, ConfigError, EngineError, EngineMessage
from engine.messages import render as render_message
from engine.models.loaded import LoadedModel, cache_root
from engine.policy_key import FIELDS as POLICY_KEY_FIELDS
from engine.policy_key import MAX_KEY_CHARS, PolicyKeyError, compile_key
from engine.models.loader import DEFAULT_MODEL, MODEL_CHOICES, load_model
from engine.sampling_params import SamplingParams

__all__ = [
    # the offline API and the step loop
    "LLM", "RequestOutput", "LLMEngine", "SamplingParams", "runtime_of", "planned_runtime",
    "cuda_available", "resolve_device",
    # messages a user meets: a code, its parameters, the English text (the UI translates the code)
    "MESSAGES", "EngineError", "EngineMessage", "render_message",
    # configuration
    "EngineConfig", "ModelConfig", "ConfigError", "BATCHERS", "POLICIES", "KV_LAYOUTS", "PREEMPTION_MODES",
    "BACKENDS", "cdiv", "blocks_to_reserve",
    # requests and what each step records
    "Request", "SLO", "ServiceClass", "FinishReason", "StepSnapshot", "StepStats", "RequestView",
    # models
    "load_model", "LoadedModel", "DEFAULT_MODEL", "MODEL_CHOICES", "cache_root",
    # the lab: workloads, runs, traces, metrics
    "Workload", "RequestClassSpec", "Arrivals", "Lengths", "PRESETS", "preset", "LiveRun", "RunResult",
    "run_requests", "engine_config_for", "workload_requests", "measure_decode", "measure_batch_curve",
    "Trace", "TraceRequest",
    "TraceError", "read_trace", "write_trace", "summarize", "request_metrics", "kv_split", "kv_timeline", "free_runs",
    # a student's own policy and the challenge it is graded in
    "compile_key", "PolicyKeyError", "POLICY_KEY_FIELDS", "MAX_KEY_CHARS", "CHALLENGE", "CHALLENGE_TARGETS",
    "PUBLIC_SEED", "Grade", "grade_key",
    "grade_runs", "run_key", "fcfs_run", "builtin_run",
]
