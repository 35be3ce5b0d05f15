"""Configuration: the model's shape (HF-style config.json) and the engine's knobs (vLLM names)."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from engine.messages import ConfigError


def cdiv(a: int, b: int) -> int:
    """Ceiling division: the blocks that `a` tokens fill at `b` tokens a block."""
    return -(-a // b)


@dataclass(frozen=True)
class ModelConfig:
    """Shape of a Llama-style decoder. Field names follow Hugging Face's config.json."""

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int = 0  # 0: hidden_size // num_attention_heads
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    max_position_embeddings: int = 2048
    tie_word_embeddings: bool = True
    attention_bias: bool = False  # Qwen2 has q/k/v biases
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None
    initializer_range: float = 0.02

    def __post_init__(self):
        if self.head_dim == 0:
            object.__setattr__(self, "head_dim", self.hidden_size // self.num_attention_heads)
        if self.num_attention_heads % self.num_key_value_heads:
            raise ConfigError("config.gqa_heads", heads=self.num_attention_heads, kv_heads=self.num_key_value_heads)

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        if self.eos_token_id is None:
            return ()
        if isinstance(self.eos_token_id, int):
            return (self.eos_token_id,)
        return tuple(self.eos_token_id)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        missing = [k for k in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                               "num_attention_heads") if k not in d]
        if missing:
            raise ConfigError("config.json_lacks", fields=", ".join(missing))
        d = dict(d)
        if d.get("model_type") == "qwen2":
            d.setdefault("attention_bias", True)
        d.setdefault("num_key_value_heads", d["num_attention_heads"])
        if d.get("head_dim") is None:
            d["head_dim"] = 0
        return cls(**{k: v for k, v in d.items() if k in known})

    @classmethod
    def from_json(cls, path: str | Path) -> "ModelConfig":
        return cls.from_dict(json.loads(Path(path).read_text()))

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["architectures"] = ["LlamaForCausalLM"]
        d["model_type"] = "llama"
        d["hidden_act"] = "silu"
        return d


BATCHERS = ("continuous", "static")
KV_LAYOUTS = ("paged", "contiguous")
PREEMPTION_MODES = ("recompute", "swap")
BACKENDS = ("auto", "torch", "triton")
# The queue orders' names, here because the core reads its settings from this module (engine.core.policy holds
# the orders themselves, one class per name, and checks at import that they are these).
POLICIES = ("fcfs", "sjf", "priority", "edf")
DTYPE_NAMES = ("auto", "float32", "bfloat16", "float16")
DEFAULT_MAX_MODEL_LEN = 1024  # a cap on the default, so that a long-context model does not size a huge cache


def cuda_available() -> bool:
    import torch
    return torch.cuda.is_available()


def resolve_device(device: str) -> str:
    """`auto`: CUDA when present, else CPU. Asking for CUDA where there is none is an error, never a quiet CPU run."""
    if device == "auto":
        return "cuda" if cuda_available() else "cpu"
    if device.startswith("cuda") and not cuda_available():
        raise ConfigError("config.no_cuda", value=device)
    return device


def resolve_dtype(dtype: str, device: str) -> str:
    """`auto`: bfloat16 on a GPU (half the bytes, tensor cores), float32 on CPU (bf16 matmuls are slow there)."""
    if dtype == "auto":
        return "bfloat16" if device.startswith("cuda") else "float32"
    return dtype


@dataclass
class EngineConfig:
    """The engine's knobs. Names match vLLM's so they read the same in both."""

    block_size: int = 16
    num_blocks: int | None = None  # None: sized from max_num_seqs * max_model_len
    max_num_seqs: int = 8
    max_num_batched_tokens: int = 512
    max_model_len: int | None = None  # None: the model's context (max_position_embeddings), at most 1024
    batcher: str = "continuous"
    policy: str = "fcfs"
    kv_layout: str = "paged"
    preemption_mode: str = "recompute"
    enable_chunked_prefill: bool = True
    long_prefill_token_threshold: int = 0  # 0: a prefill chunk may use the whole budget
    enable_prefix_caching: bool = False
    max_wait_steps: int = 0  # static batcher: how long to wait for a full batch
    contiguous_reserve: str = "max_tokens"  # or "max_model_len"
    num_swap_blocks: int | None = None  # CPU-side pool for swap preemption; None: = num_blocks
    priority_aging_steps: int = 100  # priority policy: steps of waiting that lift a request one class
    # A student's own policy (engine/policy_key.py): when set it replaces `policy`. Lower key runs first; the
    # victim key (default: the same key) picks who is preempted, highest first; `preemptive` lets a waiting
    # request evict running work its key ranks strictly below it, as priority and edf do.
    policy_key: str | None = None
    policy_victim_key: str | None = None
    policy_key_preemptive: bool = False
    # the work all requests' keys may do in one step, counted (engine/policy_key.py: an operation is one part of a
    # key, or one field read, for one request), not timed: the verdict on a key does not depend on the machine's
    # load. About 50 ms of this lab's CPU at ~0.1 µs an operation.
    policy_key_budget_ops: int = 500_000
    # vLLM v1's scheduler as it is: no waiting request preempts running ones (vLLM issue #40004), preemption by
    # recompute only, and (in both modes) no admission in a step with a preemption. Off: the lab's teaching
    # choices (priority and edf preempt for an urgent arrival; swap as in the vLLM paper and v0).
    vllm_v1_semantics: bool = False
    attention_backend: str = "auto"
    device: str = "auto"  # auto: where the model's weights are (LLM(...) loads them on CUDA when present)
    dtype: str = "auto"  # auto: the model's dtype (LLM(...) loads bfloat16 on CUDA, float32 on CPU)
    extra: dict = field(default_factory=dict)

    def validate(self, model_config: ModelConfig | None = None) -> "EngineConfig":
        def need(cond: bool, code: str, **params):
            if not cond:
                raise ConfigError(code, **params)

        need(isinstance(self.block_size, int) and 1 <= self.block_size <= 256, "config.block_size",
             value=self.block_size)
        need(isinstance(self.max_num_seqs, int) and self.max_num_seqs >= 1, "config.max_num_seqs",
             value=self.max_num_seqs)
        need(isinstance(self.max_num_batched_tokens, int) and self.max_num_batched_tokens >= 1,
             "config.max_num_batched_tokens", value=self.max_num_batched_tokens)
        need(self.num_blocks is None or (isinstance(self.num_blocks, int) and self.num_blocks >= 1),
             "config.num_blocks", value=self.num_blocks)
        need(self.long_prefill_token_threshold >= 0, "config.long_prefill_token_threshold",
             value=self.long_prefill_token_threshold)
        need(self.max_wait_steps >= 0, "config.max_wait_steps", value=self.max_wait_steps)
        need(self.priority_aging_steps >= 1, "config.priority_aging_steps", value=self.priority_aging_steps)
        for name, allowed in (("batcher", BATCHERS), ("policy", POLICIES), ("kv_layout", KV_LAYOUTS),
                              ("preemption_mode", PREEMPTION_MODES), ("attention_backend", BACKENDS),
                              ("contiguous_reserve", ("max_tokens", "max_model_len"))):
            value = getattr(self, name)
            need(value in allowed, "config.one_of", name=name, allowed=", ".join(allowed), value=value)
        need(not (self.vllm_v1_semantics and self.preemption_mode == "swap"), "config.v1_no_swap")
        need(self.dtype in DTYPE_NAMES, "config.dtype", value=self.dtype)
        need(isinstance(self.policy_key_budget_ops, int) and not isinstance(self.policy_key_budget_ops, bool)
             and self.policy_key_budget_ops >= 1, "config.policy_key_budget_ops", value=self.policy_key_budget_ops)
        if self.policy_key is not None or self.policy_victim_key is not None:
            # a refused key is a PolicyKeyError (a ConfigError) at line and column; imported here, where a key is
            # set, so that the settings sit one step above the messages and the scheduler's import chain stays short
            from engine.policy_key import compile_key

            compile_key(self.policy_key if self.policy_key is not None else "")
            if self.policy_victim_key is not None:
                compile_key(self.policy_victim_key)
        need(isinstance(self.device, str) and (self.device in ("auto", "cpu") or self.device.startswith("cuda")),
             "config.device", value=self.device)
        if model_config is not None:
            if self.max_model_len is None:
                self.max_model_len = min(model_config.max_position_embeddings, DEFAULT_MAX_MODEL_LEN)
            need(1 <= self.max_model_len <= model_config.max_position_embeddings, "config.max_model_len",
                 context=model_config.max_position_embeddings, value=self.max_model_len)
        if not self.enable_chunked_prefill and self.max_model_len is not None:
            need(self.max_num_batched_tokens >= self.max_model_len, "config.budget_below_max_model_len",
                 budget=self.max_num_batched_tokens, max_model_len=self.max_model_len)
        return self

    @classmethod
    def default(cls, name: str):
        """A knob's default, for the command line and the UI to read rather than retype."""
        return cls.__dataclass_fields__[name].default

    def blocks_per_seq(self) -> int:
        return cdiv(self.max_model_len, self.block_size)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)
