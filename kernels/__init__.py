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

__all__ = ["AttentionBackend", "AttentionMetadata", "TritonUnavailable", "backend_label", "get_backend",
           "is_interpreted", "load_triton_kernels", "resolve_backend_name"]


class TritonUnavailable(RuntimeError):
    """The Triton backend cannot run in this process. `reason`: "imported_first", "missing" (`detail`: the import
    error) or "interpreted"; the engine shows each as its own message."""

    def __init__(self, reason: str, text: str, detail: str = ""):
        super().__init__(text)
        self.reason, self.detail = reason, detail


@dataclass(frozen=True)
class AttentionBackend:
    name: str  # "torch", "triton" or "triton (interpreter)"
    store_kv: Callable
    attention: Callable


def load_triton_kernels(device: str):
    """Import the Triton kernels: compiled for CUDA, or under the interpreter for CPU tensors.

    One process can hold only one of the two (Triton fixes the mode when a kernel is defined)."""
    on_cuda = device.startswith("cuda")
    if not on_cuda:
        if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
            raise TritonUnavailable("imported_first", "triton was imported before its interpreter was switched on: "
                                    "import kernels (or engine.LLMEngine) before anything that imports triton, "
                                    "or use attention_backend='torch' on CPU")
        os.environ["TRITON_INTERPRET"] = "1"
    try:
        mod = importlib.import_module("kernels.triton_attention")
    except ImportError as e:  # triton missing or broken on this platform
        raise TritonUnavailable("missing", f"the triton backend is unavailable here ({e}); use "
                                "attention_backend='torch'", str(e)) from e
    if on_cuda and is_interpreted(mod):
        raise TritonUnavailable("interpreted", "the Triton kernels were defined under TRITON_INTERPRET=1, so they "
                                "would not compile for CUDA: unset TRITON_INTERPRET (or, in this process, use "
                                "attention_backend='torch')")
    return mod


def is_interpreted(mod) -> bool:
    """Whether the kernels run under Triton's interpreter, read from the kernel object itself."""
    return mod.INTERPRETED


def resolve_backend_name(name: str, device: str) -> str:
    """`auto` means compiled Triton on CUDA and the torch reference on CPU."""
    if name == "auto":
        return "triton" if device.startswith("cuda") else "torch"
    return name


def backend_label(name: str, device: str) -> str:
    """What a resolved backend name runs as on this device, without importing the kernels."""
    if name == "triton" and not device.startswith("cuda"):
        return "triton (interpreter)"
    return name


def get_backend(name: str, device: str) -> AttentionBackend:
    name = resolve_backend_name(name, device)
    if name == "torch":
        from kernels import reference
        return AttentionBackend("torch", reference.store_kv, reference.paged_attention)
    if name == "triton":
        mod = load_triton_kernels(device)
        label = "triton (interpreter)" if is_interpreted(mod) else "triton"
        return AttentionBackend(label, mod.store_kv, mod.paged_attention)
    raise ValueError(f"attention_backend must be auto, torch or triton (got {name!r})")
