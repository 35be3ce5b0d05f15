"""The shared sidebar: language, model, device and attention backend, instructor mode, lecture moments."""
from __future__ import annotations

import streamlit as st

from engine import cuda_available, planned_runtime
from ui.labs import models
from ui.instructor import moments
from ui.progress import saved as progress
from ui.shell.i18n import LANG_NAMES, LANGS, choice, lang, t
from ui.labs.models import MODELS, is_loaded


def _copy(widget_key: str, key: str) -> None:
    st.session_state[key] = st.session_state[widget_key]

def _bound(key: str) -> str:
    """The widget shows the session's value (the URL's, after ui.shell.url_state.restore) and only copies
    a click back: the value itself never lives in widget state, which a page switch drops."""
    widget_key = f"{key}.widget"
    st.session_state[widget_key] = st.session_state.setdefault(key, False)
    return widget_key


def language_switch() -> None:
    st.sidebar.segmented_control(t("side.language"), LANGS, key=_bound("lang"), format_func=LANG_NAMES.get,
                                 required=True, on_change=_copy, args=("lang.widget", "lang"))

def device_line(sb, model: str) -> None:
    """What the engine runs on, read from the loaded model's weights; before loading, where it will load.
    On a CUDA machine a switch forces CPU (to compare); without CUDA it shows why it is off."""
    gpu = cuda_available()
    sb.toggle(t("side.force_cpu"), key=_bound(models.FORCE_CPU), disabled=not gpu,
              help=t("side.force_cpu_help") if gpu else t("side.no_gpu"), on_change=_copy,
              args=(f"{models.FORCE_CPU}.widget", models.FORCE_CPU))
    now = models.runtime(model)
    if now is not None:
        device, dtype, backend = now
        sb.caption(t("side.runs_on", device=device, dtype=dtype, backend=backend))
    else:
        device, dtype, backend = planned_runtime(models.device())
        sb.caption(t("side.loads_on", device=device, dtype=dtype, backend=backend))


def render() -> None:
    sb = st.sidebar
    st.session_state.setdefault("model", "tiny")
    choice(sb.selectbox, t("side.model"), MODELS, "model", "model.")
    model = st.session_state["model"]
    sb.caption(t("side.model_loaded") if is_loaded(model) else t("side.model_lazy"))
    device_line(sb, model)
    sb.toggle(t("side.instructor"), key=_bound("instructor"), help=t("side.instructor_help"),
              on_change=_copy, args=("instructor.widget", "instructor"))
    progress.sidebar_line()
    if st.session_state.get("instructor"):
        with sb.expander(t("side.moments"), expanded=True):
            for p in moments.all_moments().values():
                if st.button(f"🎓 {moments.title(p.id)}", key=f"side.moment.{p.id}", help=p.narration[lang()],
                             width="stretch"):
                    moments.open_moment(p.id)

