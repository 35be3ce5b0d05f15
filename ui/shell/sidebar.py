"""The shared sidebar's own switches: language and instructor mode (both kept in the URL by url_state).
app.py lays the sidebar out; the model picker (ui/labs/model_picker.py), the progress link
(ui/progress/saved.py) and the lecture moments (ui/instructor/moments.py) draw their own parts."""
from __future__ import annotations

import streamlit as st

from ui.shell.i18n import LANG_NAMES, LANGS, t
from ui.shell.keys import INSTRUCTOR, LANG, REDUCE_MOTION


def _copy(widget_key: str, key: str) -> None:
    st.session_state[key] = st.session_state[widget_key]


def bound(key: str) -> dict:
    """A widget's key and callback that show the session's value (the URL's, after ui.shell.url_state.restore)
    and only copy a click back: the value itself never lives in widget state, which a page switch drops."""
    widget_key = f"{key}.widget"
    st.session_state[widget_key] = st.session_state.setdefault(key, False)
    return {"key": widget_key, "on_change": _copy, "args": (widget_key, key)}


def language_switch() -> None:
    st.sidebar.segmented_control(t("side.language"), LANGS, format_func=LANG_NAMES.get, required=True,
                                 **bound(LANG))


def instructor_switch() -> None:
    st.sidebar.toggle(t("side.instructor"), help=t("side.instructor_help"), **bound(INSTRUCTOR))


def motion_switch() -> None:
    """Reduce motion: ▶ shows the run's last step at once, nothing moves on its own (kept in the URL)."""
    st.sidebar.toggle(t("side.reduce_motion"), help=t("side.reduce_motion_help"), **bound(REDUCE_MOTION))
