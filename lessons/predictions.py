"""Predict, then observe: before a lecture moment runs, the student (or the room, in instructor mode)
commits to a number or a choice; after the run it sits next to what the engine measured.

A moment's `predict` (moments.yaml) names what to predict and how to read it from the runs:
    kind: number | choice
    metric: dotted path into summarize()    scale: 100 for a 0-1 share shown in percent
    runs: [a] (that run's value) or [a, b] (a / b for a number; which is lower for a choice)
    choices: for a choice, the run labels plus "same" (within 5 %)
Predictions live in a plain dict (the attempt's store; session state for now) keyed by moment id, so a
database can keep them later without touching the pages."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from lessons.figures import figure, unit_word, with_unit
from lessons.grading import metric_value, parse_number
from lessons.loader import Moment

SAME_WITHIN = 0.05


@dataclass(frozen=True)
class Prediction:
    moment: str
    value: float | str  # a number, or a choice (a run label or "same")
    made_at: float  # unix seconds
    by_room: bool = False  # made in instructor mode: the room's answer


def record(store: dict, moment: Moment, raw, by_room: bool = False) -> Prediction | None:
    """Store a prediction; None (nothing stored) when a number prediction is not a number."""
    kind = moment.predict.get("kind")
    value = parse_number(raw) if kind == "number" else raw if raw in moment.predict.get("choices", ()) else None
    if value is None:
        return None
    store[moment.id] = asdict(Prediction(moment.id, value, time.time(), by_room))
    return Prediction(**store[moment.id])


def made(store: dict, moment_id: str) -> Prediction | None:
    return Prediction(**store[moment_id]) if moment_id in store else None


def measured(moment: Moment, summaries: dict[str, dict]) -> float | str | None:
    """The predicted quantity, read from the moment's runs (label -> summarize() dict)."""
    p = moment.predict
    runs = p.get("runs") or []
    if not p or any(r not in summaries for r in runs):
        return None
    values = [metric_value(summaries[r], p["metric"]) for r in runs]
    if any(v is None for v in values):
        return None
    values = [v * p.get("scale", 1) for v in values]
    if p["kind"] == "number":
        if len(values) == 1:
            return values[0]
        return values[0] / values[1] if values[1] else None
    a, b = values
    if abs(a - b) <= SAME_WITHIN * max(abs(a), abs(b), 1e-9):
        return "same"
    return runs[0] if a < b else runs[1]


def unit(moment: Moment | None, lang: str) -> str:
    """The unit a moment's number prediction is in: × for a ratio of two runs, % for a share, else the metric's."""
    p = (moment.predict if moment else None) or {}
    name = p.get("metric", "").split(".")[-1]
    if len(p.get("runs") or []) == 2:
        return "×"
    if p.get("scale") == 100:
        return "%"
    return next((unit_word(u, lang) for u in ("steps", "tokens") if name.endswith(u)), "")


def shown(moment: Moment | None, value, lang: str, typed: bool = False) -> str:
    """A measured number as people write it, in the moment's unit ("2.31×", "37.9 %", "491 steps"), or a
    `typed` prediction as the person wrote it ("5×", not "5.00×"); "–" for none yet."""
    if value is None:
        return "–"
    if not isinstance(value, (int, float)):
        return str(value)
    return with_unit(f"{value:g}", unit(moment, lang), lang) if typed else figure(value, unit(moment, lang), lang)
