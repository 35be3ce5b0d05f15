"""The shared sidebar: language, model, device and attention backend, instructor mode, lecture moments."""
from __future__ import annotations

import streamlit as st

from engine.config import cuda_available, resolve_dtype
from kernels import backend_label, resolve_backend_name
from ui import models, moments
from ui.i18n import LANG_NAMES, LANGS, choice, t
from ui.models import MODELS, is_loaded


def language_switch() -> None:
    st.session_state.setdefault("lang", "zh")
    st.sidebar.segmented_control(t("side.language"), LANGS, key="lang", format_func=LANG_NAMES.get, required=True)


def device_line(sb, model: str) -> None:
    """What the engine runs on, read from the loaded model's weights; before loading, where it will load.
    On a CUDA machine a switch forces CPU (to compare); without CUDA it shows why it is off."""
    gpu = cuda_available()
    sb.toggle(t("side.force_cpu"), key=models.FORCE_CPU, disabled=not gpu,
              help=t("side.force_cpu_help") if gpu else t("side.no_gpu"))
    now = models.runtime(model)
    if now is not None:
        device, dtype, backend = now
        sb.caption(t("side.runs_on", device=device, dtype=dtype, backend=backend))
    else:
        device = models.device()
        sb.caption(t("side.loads_on", device=device, dtype=resolve_dtype("auto", device),
                     backend=backend_label(resolve_backend_name("auto", device), device)))


def render() -> None:
    sb = st.sidebar
    st.session_state.setdefault("model", "tiny")
    choice(sb.selectbox, t("side.model"), MODELS, "model", "model.")
    model = st.session_state["model"]
    sb.caption(t("side.model_loaded") if is_loaded(model) else t("side.model_lazy"))
    device_line(sb, model)
    sb.toggle(t("side.instructor"), key="instructor", help=t("side.instructor_help"))
    if st.session_state.get("instructor"):
        with sb.expander(t("side.moments"), expanded=True):
            for p in moments.all_moments().values():
                if st.button(f"🎓 {p.id}", key=f"side.moment.{p.id}", help=p.narration[st.session_state['lang']],
                             width="stretch"):
                    moments.open_moment(p.id)
