"""Every engine knob as a widget, named as in vLLM; returns EngineConfig keyword arguments."""
from __future__ import annotations


import streamlit as st

from engine.config import BACKENDS, BATCHERS, EngineConfig, KV_LAYOUTS, POLICIES, PREEMPTION_MODES
from ui.labs import bounded
from ui.shell.i18n import t
from ui.shell.style import instructor

KNOBS = ("batcher", "policy", "kv_layout", "preemption_mode", "block_size", "num_blocks", "max_num_seqs",
         "max_num_batched_tokens", "max_model_len", "enable_chunked_prefill", "long_prefill_token_threshold",
         "enable_prefix_caching", "max_wait_steps", "contiguous_reserve", "num_swap_blocks", "priority_aging_steps",
         "attention_backend", "vllm_v1_semantics")
# Read from EngineConfig itself, so the two cannot drift. None (num_blocks, max_model_len,
# num_swap_blocks) is the engine's "auto": an empty box that the engine sizes.
DEFAULTS = {name: EngineConfig.default(name) for name in KNOBS}


def apply_hints(prefix: str, source: str, hints: dict) -> None:
    """Put a workload's suggested settings into the knobs themselves, once each time the workload
    changes, so the knobs show what will run (and the user can still move them afterwards)."""
    ss = st.session_state
    previous = ss.get(f"{prefix}.hints_from")
    if previous == source:
        return
    ss[f"{prefix}.hints_from"] = source
    for name, value in hints.items():  # on the first visit, a knob set from outside (a link, a test) stays
        if name in DEFAULTS and (previous is not None or f"{prefix}.{name}" not in ss):
            ss[f"{prefix}.{name}"] = value


def _cells(count: int) -> list:
    """Places for `count` knobs, in rows of four, or of three in instructor mode's larger type: a knob's name is
    an identifier, which never wraps, so the widest (long_prefill_token_threshold) needs a third of the row."""
    per_row = 3 if instructor() else 4
    cells = []
    for start in range(0, count, per_row):
        cells += st.columns(per_row)[:min(per_row, count - start)]
    return cells


def engine_knobs(prefix: str) -> dict:
    """EngineConfig keyword arguments: every knob as shown (0 for num_blocks or num_swap_blocks: None,
    sized automatically), so the run uses exactly what the knobs show."""
    ss = st.session_state
    for name, value in DEFAULTS.items():
        ss.setdefault(f"{prefix}.{name}", value)
    k = lambda name: f"{prefix}.{name}"  # noqa: E731
    c = iter(_cells(17))
    next(c).selectbox("batcher", BATCHERS, key=k("batcher"))
    next(c).selectbox("policy", POLICIES, key=k("policy"))
    next(c).selectbox("kv_layout", KV_LAYOUTS, key=k("kv_layout"))
    next(c).selectbox("preemption_mode", PREEMPTION_MODES, key=k("preemption_mode"), help=t("knob.preemption_mode"))
    bounded.number(next(c), "max_num_seqs", 0, 256, key=k("max_num_seqs"), help=t("knob.max_num_seqs"))
    bounded.number(next(c), "max_num_batched_tokens", 0, 8192, key=k("max_num_batched_tokens"), help=t("knob.budget"))
    bounded.number(next(c), "block_size", 0, 256, key=k("block_size"))
    bounded.number(next(c), "num_blocks", 0, 8192, value=None, key=k("num_blocks"), help=t("knob.num_blocks"))
    bounded.number(next(c), "max_model_len", 1, 8192, value=None, key=k("max_model_len"))
    bounded.number(next(c), "long_prefill_token_threshold", 0, 8192, key=k("long_prefill_token_threshold"),
                   help=t("knob.threshold"))
    bounded.number(next(c), "max_wait_steps", 0, 1000, key=k("max_wait_steps"), help=t("knob.max_wait"))
    bounded.number(next(c), "priority_aging_steps", 1, 100_000, key=k("priority_aging_steps"))
    next(c).toggle("enable_chunked_prefill", key=k("enable_chunked_prefill"))
    next(c).toggle("enable_prefix_caching", key=k("enable_prefix_caching"))
    next(c).toggle("vllm_v1_semantics", key=k("vllm_v1_semantics"), help=t("knob.vllm_v1_semantics"))
    next(c).selectbox("contiguous_reserve", ("max_tokens", "max_model_len"), key=k("contiguous_reserve"))
    bounded.number(next(c), "num_swap_blocks", 0, 8192, value=None, key=k("num_swap_blocks"), help=t("knob.swap"))
    st.selectbox("attention_backend", BACKENDS, key=k("attention_backend"), help=t("knob.backend"))
    auto = ("num_blocks", "num_swap_blocks")
    return {name: (ss[k(name)] or None) if name in auto else ss[k(name)] for name in DEFAULTS}
