"""Every label in two languages. Strings live in ui/shell/strings.yaml as key: {zh: ..., en: ...}."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import streamlit as st
import yaml

from engine.messages import MESSAGES, EngineError, EngineMessage, render  # the messages alone: no torch
from ui.shell.keys import LANG

LANGS = ("zh", "en")
LANG_NAMES = {"zh": "中文", "en": "English"}
STRINGS_FILE = Path(__file__).with_name("strings.yaml")


@lru_cache(maxsize=1)
def strings() -> dict[str, dict[str, str]]:
    return yaml.load(STRINGS_FILE.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def lang() -> str:
    return st.session_state.get(LANG, "zh")


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


def engine_message(err_or_code, params: dict | None = None) -> str:
    """An engine error, a rejection code or an EngineMessage, in the current language (strings key
    `engine.<code>`). Another exception (not the engine's) shows its own text, and so does a code this
    engine does not know (read from a trace)."""
    if isinstance(err_or_code, EngineError):
        err_or_code = err_or_code.message
    if isinstance(err_or_code, EngineMessage):
        code, params = err_or_code.code, err_or_code.params
    elif isinstance(err_or_code, BaseException):
        return str(err_or_code)
    else:
        code, params = err_or_code, params or {}
    if code not in MESSAGES:
        return str(code)
    templates = {c: strings().get(f"engine.{c}", {}).get(lang(), text) for c, text in MESSAGES.items()}
    return render(code, params, templates)


def run_name(label: str) -> str:
    """A run's label (static, fcfs, paged-swap ...) in the current language; other labels (#3) as they are."""
    return t(f"run.name.{label}") if f"run.name.{label}" in strings() else label


def class_name(cls: str) -> str:
    """A request class (chat, batch ...) in the current language; a class a user named, as it is."""
    return t(f"cls.{cls}") if f"cls.{cls}" in strings() else cls
