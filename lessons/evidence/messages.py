"""What each evidence finding says, in the student's language (messages.yaml). Fields are named by their
worksheet labels."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from lessons.evidence.checks import Finding


@lru_cache(maxsize=1)
def texts() -> dict:
    return yaml.safe_load((Path(__file__).with_name("messages.yaml")).read_text(encoding="utf-8"))


def say(finding: Finding, lang: str, labels: dict[str, str] | None = None) -> str:
    """The finding in words; `labels` turns field ids (and columns, metrics, changes) into what the page calls them."""
    labels = labels or {}

    def named(value):
        if isinstance(value, list):  # several (policies): each named, joined the language's way
            return ("、" if lang == "zh" else ", ").join(str(named(v)) for v in value)
        return labels.get(value, value) if isinstance(value, str) else value
    params = {k: named(v) for k, v in finding.params.items()}
    text = texts()[finding.code].get(lang) or texts()[finding.code]["en"]
    return text.format(**params)
