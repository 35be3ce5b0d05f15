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


def option_labels(prefix: str, options) -> callable:
    """A format_func for option values: labels are looked up now, in the current language (a lambda
    calling t() later would ask for the language outside the script run, e.g. in AppTest)."""
    return {o: t(f"{prefix}{o}") for o in options}.get
