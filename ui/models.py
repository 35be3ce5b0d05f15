"""Models load once per process (shared by every browser session); engines are per session."""
from __future__ import annotations

import threading

import streamlit as st

from engine import LoadedModel, load_model

MODELS = ("tiny", "smollm2")


class ModelSlot:
    """One model for the whole process, loaded on first use. The slot (not the model) is what
    st.cache_resource holds, so the loading can report progress to whichever page asked first."""

    def __init__(self, name: str):
        self.name = name
        self.model: LoadedModel | None = None
        self.lock = threading.Lock()

    def get(self, progress=None) -> LoadedModel:
        with self.lock:
            if self.model is None:
                self.model = load_model(self.name, progress=progress)
            return self.model


@st.cache_resource(show_spinner=False)
def slot(name: str) -> ModelSlot:
    return ModelSlot(name)


def is_loaded(name: str) -> bool:
    return slot(name).model is not None


def get_model(name: str) -> LoadedModel:
    """The model, loaded on first use with a progress bar."""
    if is_loaded(name):
        return slot(name).get()
    bar = st.progress(0.0, text=f"{name}: …")
    try:
        return slot(name).get(progress=lambda msg, frac: bar.progress(min(1.0, frac), text=f"{name}: {msg}"))
    finally:
        bar.empty()
