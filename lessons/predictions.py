"""Predict, then observe: before a lecture moment runs, the student (or the room, in instructor mode)
commits to a number or a choice; after the run it sits next to what the engine measured.

A moment's `predict` (moments.yaml) names what to predict and how to read it from the runs:
    kind: number | choice
    metric: dotted path into summarize()    scale: 100 for a 0-1 share shown in percent
    runs: [a] (that run's value) or [a, b] (a / b for a number; which is lower for a choice)
    choices: for a choice, the run labels plus "same" (within 5 %)
  or, what the engine did to one request at the next step (a choice of engine/lab/journey.py's STATES):
    metric: next_step    runs: [a]    request: its id    step: the step the question is asked at
    words: the strings' prefix of the choices' names (pred.choice. unless given)
A choice is kept in the store (and polled) as its index in `choices` (as_number).
Predictions live in a plain dict (the attempt's store; session state for now) keyed by moment id, so a
database can keep them later without touching the pages."""
from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass

from engine.lab.journey import steps_of
from lessons.figures import figure, unit_word, with_unit
from lessons.grading import metric_value, parse_number
from lessons.loader import Moment

SAME_WITHIN = 0.05
NEXT_STEP = "next_step"  # the metric of a question on one request's next step


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


def measured(moment: Moment, summaries: dict[str, dict], snapshots: dict | None = None) -> float | str | None:
    """The predicted quantity, read from the moment's runs (label -> summarize() dict; `snapshots`: label -> the
    run's step snapshots, which a next-step question reads)."""
    p = moment.predict
    runs = p.get("runs") or []
    if p.get("metric") == NEXT_STEP:
        return _next_step(p, (snapshots or {}).get(runs[0]))
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


def _next_step(p: dict, snapshots) -> str | None:
    """What the engine did to the question's request at the step after the question's (None: no such step)."""
    if snapshots is None:
        return None
    after = next((s.state for s in steps_of(snapshots, p["request"]) if s.step == p["step"] + 1), None)
    return after if after in p["choices"] else None


def as_number(moment: Moment, value) -> float | None:
    """A prediction or a measured value as the store keeps it: a number as it is, a choice as its index."""
    if value is None or isinstance(value, (int, float)):
        return value
    return float(moment.predict["choices"].index(value))


def as_choice(moment: Moment, number: float) -> str | None:
    """The choice a stored index stands for (None: not an index of the question's choices)."""
    choices = moment.predict.get("choices") or ()
    return choices[int(number)] if float(number).is_integer() and 0 <= number < len(choices) else None


def room_answer(moment: Moment, values: list[float]) -> float | None:
    """The room's answer from its stored answers: the median of numbers; the choice most chose (of those tied, the
    first in the question's order)."""
    if not values:
        return None
    if moment.predict.get("kind") != "choice":
        return statistics.median(values)
    return float(max(sorted(set(values)), key=values.count))


def choice_key(moment: Moment, choice: str) -> str:
    """The strings' key of a choice's name."""
    return moment.predict.get("words", "pred.choice.") + choice


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
