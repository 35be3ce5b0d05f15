"""The shared sidebar: language, model, device and attention backend, instructor mode, lecture moments."""
from __future__ import annotations

import streamlit as st

from engine import runtime_info
from ui import moments
from ui.i18n import LANG_NAMES, LANGS, choice, t
from ui.models import MODELS, is_loaded


def language_switch() -> None:
    st.session_state.setdefault("lang", "zh")
    st.sidebar.segmented_control(t("side.language"), LANGS, key="lang", format_func=LANG_NAMES.get, required=True)


def render() -> None:
    sb = st.sidebar
    st.session_state.setdefault("model", "tiny")
    choice(sb.selectbox, t("side.model"), MODELS, "model", "model.")
    model = st.session_state["model"]
    sb.caption(t("side.model_loaded") if is_loaded(model) else t("side.model_lazy"))
    device, backend = runtime_info()
    sb.caption(t("side.runtime", device=device, backend=backend))
    sb.toggle(t("side.instructor"), key="instructor", help=t("side.instructor_help"))
    if st.session_state.get("instructor"):
        with sb.expander(t("side.moments"), expanded=True):
            for p in moments.all_moments().values():
                if st.button(f"🎓 {p.id}", key=f"side.moment.{p.id}", help=p.narration[st.session_state['lang']],
                             width="stretch"):
                    moments.open_moment(p.id)
