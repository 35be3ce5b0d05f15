"""Models load once per process (shared by every browser session); engines are per session.

A model is loaded on the device the sidebar asks for (CUDA when present, unless "force CPU" is on),
so one process may hold the same model twice: once per device."""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import streamlit as st

from engine.config import resolve_device
from engine.core.llm_engine import runtime_of
from engine.models.loader import DEFAULT_MODEL, load_model

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.models.loaded import LoadedModel


MODELS = ("tiny", "smollm2")
MODEL = "model"  # session key: the model the sidebar picked
FORCE_CPU = "force_cpu"  # session key of the sidebar switch


def chosen() -> str:
    """The model this session's labs run (the sidebar's pick)."""
    return st.session_state.setdefault(MODEL, DEFAULT_MODEL)


class ModelSlot:
    """One model on one device for the whole process, loaded on first use. The slot (not the model) is
    what st.cache_resource holds, so the loading can report progress to whichever page asked first."""

    def __init__(self, name: str, device: str):
        self.name, self.device = name, device
        self.model: LoadedModel | None = None
        self.lock = threading.Lock()

    def get(self, progress=None) -> LoadedModel:
        with self.lock:
            if self.model is None:
                self.model = load_model(self.name, device=self.device, progress=progress)
            return self.model


@st.cache_resource(show_spinner=False)
def _slot(name: str, device: str) -> ModelSlot:
    return ModelSlot(name, device)


def device() -> str:
    """The device this session's models load on: CUDA when present, unless the sidebar forces CPU."""
    return "cpu" if st.session_state.get(FORCE_CPU) else resolve_device("auto")


def slot(name: str) -> ModelSlot:
    return _slot(name, device())


def is_loaded(name: str) -> bool:
    return slot(name).model is not None


def runtime(name: str) -> tuple[str, str, str] | None:
    """(device, dtype, attention backend) an engine over the loaded model runs with; None before it loads."""
    loaded = slot(name).model
    return runtime_of(loaded.model) if loaded is not None else None


def get_model(name: str) -> LoadedModel:
    """The model, loaded on first use with a progress bar."""
    if is_loaded(name):
        return slot(name).get()
    bar = st.progress(0.0, text=f"{name}: …")
    try:
        return slot(name).get(progress=lambda msg, frac: bar.progress(min(1.0, frac), text=f"{name}: {msg}"))
    finally:
        bar.empty()
