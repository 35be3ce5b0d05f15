"""Lecture moments: one click sets a lab up (workload, settings, what to compare) and says what to watch."""
from __future__ import annotations

import streamlit as st

from lessons import load_presets
from ui import nav
from ui.i18n import lang, t


def all_presets():
    return load_presets()


def open_preset(preset_id: str) -> None:
    """Queue a preset for its page, and go there; the page applies it and runs the experiment."""
    st.session_state["pending_preset"] = preset_id
    nav.go(all_presets()[preset_id].page)


def take_pending(page_id: str):
    """The preset queued for this page, if any (taken once)."""
    pid = st.session_state.get("pending_preset")
    if pid and all_presets().get(pid) and all_presets()[pid].page == page_id:
        del st.session_state["pending_preset"]
        st.session_state[f"{page_id}.preset"] = pid
        return all_presets()[pid]
    return None


def narration(page_id: str) -> None:
    """The active preset's narration line, above the experiment."""
    pid = st.session_state.get(f"{page_id}.preset")
    if pid and pid in all_presets():
        st.info(f"**{t('preset.moment')}: {pid}** — {all_presets()[pid].narration[lang()]}", icon="🎓")


def clear(page_id: str) -> None:
    st.session_state.pop(f"{page_id}.preset", None)


def preset_buttons(page_id: str) -> None:
    """One button per lecture moment that belongs to this page."""
    mine = [p for p in all_presets().values() if p.page == page_id]
    if not mine:
        return
    cols = st.columns(len(mine))
    for col, p in zip(cols, mine):
        col.button(f"🎓 {p.id}", key=f"{page_id}.preset-btn.{p.id}", on_click=_queue, args=(p.id,),
                   help=p.narration[lang()], width="stretch")


def _queue(preset_id: str) -> None:
    st.session_state["pending_preset"] = preset_id


def page_header(page_id: str, prefix: str, defaults: dict):
    """A lab's title, intro and lecture-moment buttons; the moment queued for this page, if any,
    whose narration then shows. `defaults` seed the page's widgets on a first visit."""
    st.title(t(f"{prefix}.title"))
    st.markdown(t(f"{prefix}.intro"))
    preset_buttons(page_id)
    pending = take_pending(page_id)
    narration(page_id)
    for name, value in defaults.items():
        st.session_state.setdefault(f"{page_id}.{name}", value)
    return pending
