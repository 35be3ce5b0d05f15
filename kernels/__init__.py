"""Attention backends over the paged KV cache: `torch` (reference) and `triton` (kernels)."""
from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from typing import Callable

import torch

from kernels.metadata import AttentionMetadata

# Triton reads TRITON_INTERPRET when a kernel (its own library functions included) is defined, and
# torch imports triton on its own (torch._dynamo does). On a machine without CUDA, switch the
# interpreter on now, before anything imports triton.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

__all__ = ["AttentionBackend", "AttentionMetadata", "get_backend", "load_triton_kernels", "resolve_backend_name"]


@dataclass(frozen=True)
class AttentionBackend:
    name: str  # "torch", "triton" or "triton (interpreter)"
    store_kv: Callable
    attention: Callable


def load_triton_kernels(device: str):
    """Import the Triton kernels; on CPU, first switch Triton to its interpreter."""
    if not device.startswith("cuda"):
        if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
            raise RuntimeError("triton was imported before its interpreter was switched on: "
                               "import engine (or kernels) before anything that imports triton")
        os.environ["TRITON_INTERPRET"] = "1"
    try:
        return importlib.import_module("kernels.triton_attention")
    except ImportError as e:  # triton missing or broken on this platform
        raise RuntimeError(f"the triton backend is unavailable here ({e}); use attention_backend='torch'") from e


def resolve_backend_name(name: str, device: str) -> str:
    """`auto` means compiled Triton on CUDA and the torch reference on CPU."""
    if name == "auto":
        return "triton" if device.startswith("cuda") else "torch"
    return name


def get_backend(name: str, device: str) -> AttentionBackend:
    name = resolve_backend_name(name, device)
    if name == "torch":
        from kernels import reference
        return AttentionBackend("torch", reference.store_kv, reference.paged_attention)
    if name == "triton":
        mod = load_triton_kernels(device)
        label = "triton" if device.startswith("cuda") else "triton (interpreter)"
        return AttentionBackend(label, mod.store_kv, mod.paged_attention)
    raise ValueError(f"attention_backend must be auto, torch or triton (got {name!r})")
