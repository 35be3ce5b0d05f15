"""What each evidence finding says, in the student's language (the `evidence.<code>` strings of
lessons/strings.yaml). Fields are named by their worksheet labels."""
from __future__ import annotations

from typing import TYPE_CHECKING

from lessons.strings import phrase

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from lessons.evidence.checks import Finding


def say(finding: Finding, lang: str, labels: dict[str, str] | None = None) -> str:
    """The finding in words; `labels` turns field ids (and columns, metrics, changes) into what the page calls them."""
    labels = labels or {}

    def named(value):
        if isinstance(value, list):  # several (policies): each named, joined the language's way
            return ("、" if lang == "zh" else ", ").join(str(named(v)) for v in value)
        return labels.get(value, value) if isinstance(value, str) else value
    params = {k: named(v) for k, v in finding.params.items()}
    return phrase(f"evidence.{finding.code}", lang, **params)
