"""The lessons layer's own strings in the student's language: lessons/strings.yaml, as key: {zh: ..., en: ...}."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

STRINGS_FILE = Path(__file__).with_name("strings.yaml")


@lru_cache(maxsize=1)
def strings() -> dict[str, dict[str, str]]:
    return yaml.load(STRINGS_FILE.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def phrase(key: str, lang: str, **fmt) -> str:
    """The string `key` in `lang` (English for a language it lacks), its {fields} filled from `fmt`."""
    entry = strings()[key]
    template = entry.get(lang) or entry["en"]
    return template.format(**fmt) if fmt else template
