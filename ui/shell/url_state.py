"""Language and instructor mode live in the URL (`?lang=en&instructor=1`), so they survive every
page switch, reload, bookmark and deep link.

Streamlit drops a widget's state on a page switch, so neither may live in a widget: the values are
plain session keys (ui/shell/keys.py); the sidebar widgets only copy into them; and every run writes
them back to the URL. A URL value the lab did not write itself (a deep link, a reload in a new
session, an edited address) wins over the session; a URL with no value (Streamlit's own page links
clear the query) changes nothing. A value this session wrote itself earlier is a stale echo, not a
request: a rerun the browser sent before it applied the session's last write (a click during
playback) carries the old query, and taking it would switch a lecturer's English page back to
Chinese.
"""
from __future__ import annotations

import streamlit as st

from ui.shell.i18n import LANGS
from ui.shell.keys import INSTRUCTOR, LANG, REDUCE_MOTION, STUDENT_TOKEN
DEFAULT_LANG = "zh"  # the chapter's language, for a browser that names neither zh nor en
_WRITTEN = "url_state.written"  # every value this session has put in the URL, per parameter
_MOTION_SEEN = "url_state.motion_seen"  # reduce motion has been on in this session


def browser_language(accept_language: str | None) -> str:
    """The first of zh / en in the browser's Accept-Language, by preference (q) then order."""
    ranked = []
    for i, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        ranked.append((-q, i, tag.strip().lower().split("-")[0]))
    return next((code for _, _, code in sorted(ranked) if code in LANGS), DEFAULT_LANG)


def _flag(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "on", "yes")


def restore() -> None:
    """At the top of every run: take what the URL says, where it says something new."""
    ss, qp = st.session_state, st.query_params
    written = ss.get(_WRITTEN, {})
    url_lang = qp.get("lang")
    if url_lang in LANGS and url_lang not in written.get("lang", ()):
        ss[LANG] = url_lang
    elif LANG not in ss:
        ss[LANG] = browser_language(st.context.headers.get("Accept-Language"))
    url_instructor = qp.get("instructor")
    if url_instructor is not None and url_instructor not in written.get("instructor", ()):
        ss[INSTRUCTOR] = _flag(url_instructor)
    ss.setdefault(INSTRUCTOR, False)
    # ?motion=reduce: the sidebar's switch, or the browser's prefers-reduced-motion (ui/shell/a11y.py writes it)
    url_motion = qp.get("motion")
    if url_motion is not None and url_motion not in written.get("motion", ()):
        ss[REDUCE_MOTION] = url_motion == "reduce"
    ss.setdefault(REDUCE_MOTION, False)


def kept() -> dict[str, str]:
    """The query parameters every internal link and page switch carries."""
    ss = st.session_state
    params = {"lang": ss.get(LANG, DEFAULT_LANG)}
    if ss.get(INSTRUCTOR):
        params["instructor"] = "1"
    if ss.get(REDUCE_MOTION):
        params["motion"] = ss[_MOTION_SEEN] = "reduce"
    elif ss.get(_MOTION_SEEN):  # turned off: said so, or the browser's preference would turn it on again on a reload
        params["motion"] = "full"
    if ss.get(STUDENT_TOKEN):  # the student's saved progress (ui/progress/saved.py)
        params["s"] = ss[STUDENT_TOKEN]
    return params


def persist() -> None:
    """After the sidebar's widgets ran: the URL says what the session now holds."""
    params, qp = kept(), st.query_params
    for name in ("lang", "instructor", "motion", "s"):
        if name in params:
            if qp.get(name) != params[name]:
                qp[name] = params[name]
        elif name in qp:
            del qp[name]
    written = st.session_state.setdefault(_WRITTEN, {})
    for name, value in params.items():
        written.setdefault(name, set()).add(value)
