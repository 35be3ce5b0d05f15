"""Every label in two languages. Strings live in ui/strings.yaml as key: {zh: ..., en: ...}."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import streamlit as st
import yaml

LANGS = ("zh", "en")
LANG_NAMES = {"zh": "中文", "en": "English"}
STRINGS_FILE = Path(__file__).with_name("strings.yaml")


@lru_cache(maxsize=1)
def strings() -> dict[str, dict[str, str]]:
    return yaml.safe_load(STRINGS_FILE.read_text(encoding="utf-8"))


def lang() -> str:
    return st.session_state.get("lang", "zh")


def t(key: str, **fmt) -> str:
    entry = strings().get(key)
    if entry is None:
        return key  # a missing key shows itself; tests/test_app.py checks that none is missing
    text = entry[lang()]
    return text.format(**fmt) if fmt else text


def labels(*keys: str) -> dict[str, str]:
    """A {key: text} dict for the viz functions, which know no language."""
    return {k: t(k) for k in keys}


def choice(widget, label: str, options, key: str, prefix: str, **kwargs):
    """A selectbox / multiselect / segmented control with translated option labels.

    The browser sends a widget's value back as its label, and a label from the other language
    would not match; so the widget's key carries the language, and the value itself lives in
    session_state[key], where lecture moments may also set it."""
    ss = st.session_state
    widget_key, synced = f"{key}@{lang()}", f"{key}@synced"
    if key in ss and (ss[key] != ss.get(synced) or widget_key not in ss):
        ss[widget_key] = ss[key]  # set from outside (a lecture moment), or first shown in this language
    value = widget(label, options, key=widget_key, format_func={o: t(f"{prefix}{o}") for o in options}.get, **kwargs)
    ss[key] = ss[synced] = value
    return value
