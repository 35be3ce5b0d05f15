"""The sidebar's model picker: which model the labs run, whether it is loaded, and what it runs on."""
from __future__ import annotations

import streamlit as st

from engine.config import cuda_available
from engine.core.llm_engine import planned_runtime
from ui.labs import models
from ui.labs.models import MODELS, is_loaded
from ui.shell.i18n import choice, t
from ui.shell.sidebar import bound


def device_line(sb, model: str) -> None:
    """What the engine runs on, read from the loaded model's weights; before loading, where it will load.
    On a CUDA machine a switch forces CPU (to compare); without CUDA it shows why it is off."""
    gpu = cuda_available()
    sb.toggle(t("side.force_cpu"), disabled=not gpu, help=t("side.force_cpu_help") if gpu else t("side.no_gpu"),
              **bound(models.FORCE_CPU))
    now = models.runtime(model)
    if now is not None:
        device, dtype, backend = now
        sb.caption(t("side.runs_on", device=device, dtype=dtype, backend=backend))
    else:
        device, dtype, backend = planned_runtime(models.device())
        sb.caption(t("side.loads_on", device=device, dtype=dtype, backend=backend))


def sidebar_picker() -> None:
    sb = st.sidebar
    models.chosen()  # the default, before the select box shows it
    # a radio: each model's name and what it is, wrapped in the narrow sidebar (a select box would cut them)
    choice(sb.radio, t("side.model"), MODELS, models.MODEL, "model.")
    model = models.chosen()
    sb.caption(t("side.model_loaded") if is_loaded(model) else t("side.model_lazy"))
    device_line(sb, model)
