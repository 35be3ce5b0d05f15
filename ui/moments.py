"""Lecture moments: one click sets a lab up (workload, settings, what to compare) and says what to watch."""
from __future__ import annotations

import streamlit as st

from lessons import load_moments
from ui import nav
from ui.i18n import lang, strings, t


def all_moments():
    return load_moments()


def title(moment_id: str) -> str:
    """A moment's short title in the current language (its id if it has none)."""
    return t(f"moment.name.{moment_id}") if f"moment.name.{moment_id}" in strings() else moment_id


def page_title(page_id: str) -> str:
    """A lab or practice page's title (as in the sidebar) from its url path."""
    key = next((title for entries in nav.SECTIONS.values() for url, _, title, _ in entries if url == page_id), None)
    return t(key) if key else page_id


def open_moment(moment_id: str) -> None:
    """Queue a moment for its page, and go there; the page applies it and runs the experiment."""
    st.session_state["pending_moment"] = moment_id
    nav.go(all_moments()[moment_id].page)


def take_pending(page_id: str):
    """The moment queued for this page, if any (taken once)."""
    pid = st.session_state.get("pending_moment")
    if pid and all_moments().get(pid) and all_moments()[pid].page == page_id:
        del st.session_state["pending_moment"]
        st.session_state[f"{page_id}.moment"] = pid
        return all_moments()[pid]
    return None


def narration(page_id: str) -> None:
    """The active moment's narration line, above the experiment."""
    pid = st.session_state.get(f"{page_id}.moment")
    if pid and pid in all_moments():
        st.info(f"**{t('moment.label')}: {title(pid)}** — {all_moments()[pid].narration[lang()]}", icon="🎓")


def clear(page_id: str) -> None:
    st.session_state.pop(f"{page_id}.moment", None)


def moment_buttons(page_id: str) -> None:
    """One button per lecture moment that belongs to this page."""
    mine = [p for p in all_moments().values() if p.page == page_id]
    if not mine:
        return
    cols = st.columns(len(mine))
    for col, p in zip(cols, mine):
        col.button(f"🎓 {title(p.id)}", key=f"{page_id}.moment-btn.{p.id}", on_click=_queue, args=(p.id,),
                   help=p.narration[lang()], width="stretch")


def _queue(moment_id: str) -> None:
    st.session_state["pending_moment"] = moment_id


def page_header(page_id: str, prefix: str, defaults: dict):
    """A lab's title, intro and lecture-moment buttons; the moment queued for this page, if any,
    whose narration then shows. `defaults` seed the page's widgets on a first visit."""
    st.title(t(f"{prefix}.title"))
    st.markdown(t(f"{prefix}.intro"))
    moment_buttons(page_id)
    pending = take_pending(page_id)
    narration(page_id)
    for name, value in defaults.items():
        st.session_state.setdefault(f"{page_id}.{name}", value)
    return pending
