"""Hints on worksheet answers from keyword criteria, grade quiz answers, order the quiz.

A keyword reader does not read meaning, so its findings on an explanation are hints, never a verdict: the
verdict comes from the evidence (lessons/evidence), the student's self-assessment and the instructor
(lessons/worksheet_status.py).

Keyword matching is forgiving about form (case, full-width characters, spaces, hyphens and underscores:
`首token`, `首 token`, `block table` and `block_table` all match) and strict about sense: a keyword the
answer denies does not count (lessons/reading.py).
"""
from __future__ import annotations

import math
import numbers
import random
import unicodedata
from dataclasses import dataclass, field

from lessons.loader import Moment, Question, Task, TaskField, load_moments
from lessons.reading import is_keyword_list, matches, normalize, read, size  # noqa: F401 (matches: re-exported)

MESSAGES = {
    "empty": {"zh": "这一栏还是空的：写一两句你自己的话再提交。",
              "en": "This field is empty: write a sentence or two in your own words, then submit."},
    "no_measure": {"zh": "先运行这道题指定的预设，再用你自己那次运行的数字作答。",
                   "en": "Run the experiment this question names first; the answer is checked against your own run."},
    "not_number": {"zh": "请填写一个数字（可以带 %）。", "en": "Enter a number (a trailing % is fine)."},
    "points": {"zh": " 个百分点", "en": " points"},
    "numeric": {"zh": "你的运行测得 {measured:g}{unit}；允许误差 {tol}。",
                "en": "Your run measured {measured:g}{unit}; accepted within {tol}."},
}


def _msg(key: str, lang: str, **kw) -> str:
    text = MESSAGES[key].get(lang) or MESSAGES[key]["en"]
    return text.format(**kw) if kw else text


# --- worksheets --------------------------------------------------------------------------
WORKSHEET = {
    "denied": {"zh": "你提到了「{words}」，但是在否定或「无所谓」的语气里：这不算数。",
               "en": "You mention “{words}”, but only to deny or dismiss it: that does not count."},
    "stuffed": {"zh": "这更像一串关键词，而不是解释：请用完整的句子写出因果。",
                "en": "This reads like a list of keywords, not an explanation: say what causes what, in sentences."},
    "short": {"zh": "太短了：请用一两句完整的话说明。", "en": "Too short: explain in a sentence or two."},
}
MIN_LONG = 6  # words (en) or characters (zh) a long answer needs


def _say(key: str, lang: str, **kw) -> str:
    return (WORKSHEET[key].get(lang) or WORKSHEET[key]["en"]).format(**kw)


@dataclass
class CriterionResult:
    id: str
    met: bool
    feedback: str  # the criterion's `ok` text when met, its `missing` text when not
    required: bool = True
    denied: list[str] = field(default_factory=list)  # its keywords the answer only denied


@dataclass
class FieldFeedback:
    field_id: str
    checked: bool  # False for fields without criteria (free notes)
    empty: bool = False
    rejected: bool = False  # the answer affirms only reject_if_only words (e.g. speed, and no memory)
    stuffed: bool = False  # a long answer that is mostly keywords, or too short to explain anything
    criteria: list[CriterionResult] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # what to show, in order

    @property
    def passed(self) -> bool:
        return not self.checked or (not self.empty and not self.rejected and not self.stuffed
                                    and all(c.met for c in self.criteria if c.required))


@dataclass
class TaskFeedback:
    task_id: str
    fields: dict[str, FieldFeedback]

    @property
    def passed(self) -> bool:
        return all(f.passed for f in self.fields.values())

    @property
    def missing(self) -> list[str]:
        """Field ids that still fall short."""
        return [fid for fid, f in self.fields.items() if not f.passed]


def check_field(task_field: TaskField, answer: str | None, lang: str = "en") -> FieldFeedback:
    fb = FieldFeedback(task_field.id, bool(task_field.criteria))
    if not bool(task_field.criteria):
        return fb
    if not normalize(answer or ""):
        fb.empty = True
        fb.messages.append(_msg("empty", lang))
        fb.criteria = [CriterionResult(c.id, False, c.missing, c.required) for c in task_field.criteria]
        return fb
    for c in task_field.criteria:
        r = read(answer, c.any)
        found = r.affirmed + r.not_only + (r.denied if c.negation_ok else [])
        denied = [] if found else r.denied + r.dismissed
        text = c.ok if found else c.missing + (" " + _say("denied", lang, words="、".join(denied) if lang == "zh"
                                                          else ", ".join(denied)) if denied else "")
        fb.criteria.append(CriterionResult(c.id, bool(found), text, c.required, denied))
    required_met = all(c.met for c in fb.criteria if c.required)
    if task_field.reject_if_only and read(answer, task_field.reject_if_only).affirmed and not required_met:
        fb.rejected = True
        fb.messages.append(task_field.reject_feedback)
    if task_field.kind == "long":
        words = [k for c in task_field.criteria for k in c.any] + list(task_field.reject_if_only)
        if size(answer) < MIN_LONG:
            fb.stuffed = True
            fb.messages.append(_say("short", lang))
        elif is_keyword_list(answer, words):
            fb.stuffed = True
            fb.messages.append(_say("stuffed", lang))
    fb.messages += [c.feedback for c in fb.criteria]
    return fb


def check_task(task: Task, answers: dict[str, str]) -> TaskFeedback:
    """Hints per field, per criterion: what the keyword reader found, with the feedback text. Students mix
    languages, so keyword lists hold both. `passed` only says the reader found nothing to hint at."""
    answers = answers or {}
    return TaskFeedback(task.id, {f.id: check_field(f, answers.get(f.id), task.lang) for f in task.fields})


# --- quiz --------------------------------------------------------------------------------
@dataclass
class Grade:
    correct: bool
    explanation: str
    expected: object  # single: index; multiple: sorted indices; ordering: items; numeric: the value as shown
    message: str = ""  # numeric: what was measured and the tolerance, or why it could not be graded


def parse_number(answer, percent: bool = False) -> float | None:
    """A float from a number or a string such as '491', '0.38', '1,169' or '38%'. A trailing % means
    'divide by 100', unless `percent` (the question is answered in percent anyway: '38%' = 38)."""
    if isinstance(answer, bool):
        return None
    if isinstance(answer, (int, float)):
        return float(answer) if math.isfinite(answer) else None
    if not isinstance(answer, str):
        return None
    text = unicodedata.normalize("NFKC", answer).strip().replace(",", "").replace(" ", "")
    scale = 1.0
    if text.endswith("%"):
        text, scale = text[:-1], 1.0 if percent else 0.01
    try:
        value = float(text) * scale
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def shown_value(question: Question, measured: float) -> float:
    """The metric as the page shows it and the student enters it: unit '%' turns a 0-1 share into percent."""
    return measured * 100 if question.unit == "%" else measured


def within(value: float, measured: float, tolerance: dict) -> bool:
    """Inside either bound: |value - measured| <= abs, or <= rel * |measured|."""
    diff = abs(value - measured)
    eps = 1e-9 * max(1.0, abs(measured))
    return any(diff <= bound + eps for bound in
               ([tolerance["abs"]] if "abs" in tolerance else []) +
               ([tolerance["rel"] * abs(measured)] if "rel" in tolerance else []))


def _tolerance_text(tolerance: dict, unit: str, lang: str) -> str:
    parts = [f"±{tolerance['rel'] * 100:g}%"] if "rel" in tolerance else []
    if "abs" in tolerance:
        parts.append(f"±{tolerance['abs']:g}" + (_msg("points", lang) if unit == "%" else f" {unit}" if unit else ""))
    return " / ".join(parts)


def grade(question: Question, answer, measured: float | None = None) -> Grade:
    """single: answer is an option index; multiple: a list of indices; ordering: the items as
    strings in the student's order; numeric: a number (or numeric string), checked against
    `measured`, the value of question.metric in the student's own run (a 0-1 share when the unit is
    '%': then the answer and `expected` are in percent, and an abs tolerance is in points)."""
    q = question
    if q.type == "single":
        ok = isinstance(answer, numbers.Integral) and not isinstance(answer, bool) and int(answer) == q.answer
        return Grade(ok, q.explanation, q.answer)
    if q.type == "multiple":
        try:
            chosen = sorted(set(int(a) for a in answer)) if answer is not None else None
        except (TypeError, ValueError):
            chosen = None
        return Grade(chosen == list(q.answer), q.explanation, list(q.answer))
    if q.type == "ordering":
        ok = isinstance(answer, (list, tuple)) and [str(a) for a in answer] == list(q.items)
        return Grade(ok, q.explanation, list(q.items))
    if measured is None or not math.isfinite(measured):
        return Grade(False, q.explanation, None, _msg("no_measure", q.lang))
    shown, value = shown_value(q, measured), parse_number(answer, percent=q.unit == "%")
    unit = q.unit if q.unit == "%" else f" {q.unit}" if q.unit else ""
    message = _msg("numeric", q.lang, measured=round(shown, 4), unit=unit,
                   tol=_tolerance_text(q.tolerance, q.unit, q.lang))
    if value is None:
        return Grade(False, q.explanation, shown,
                     _msg("not_number", q.lang) + ("" if q.lang == "zh" else " ") + message)
    return Grade(within(value, shown, q.tolerance), q.explanation, shown, message)


def quiz_order(questions: list, seed: int) -> list:
    """The questions in a seeded shuffle: the same seed gives the same order."""
    out = list(questions)
    random.Random(seed).shuffle(out)
    return out


def shuffled_items(question: Question, seed: int) -> list[str]:
    """An ordering question's items in a seeded order that is never already the correct one."""
    items = list(question.items)
    rng = random.Random(f"{seed}:{question.id}")
    for _ in range(20):
        rng.shuffle(items)
        if items != list(question.items):
            return items
    return items[1:] + items[:1]


# --- numeric questions ---------------------------------------------------------------------
def run_spec(question: Question, moments: dict[str, Moment] | None = None) -> dict:
    """What a numeric question's Run button runs: the moment's workload and seed, and as EngineConfig
    overrides the moment's settings, then the question's. Run it as
    run_requests(model, workload_requests(model, preset(workload), seed),
    engine_config_for(preset(workload), **settings))."""
    p = (moments if moments is not None else load_moments())[question.run["moment"]]
    label = next(iter(question.run["settings"].values()), None)  # the compared run it reads: batcher, layout, policy
    return {"moment": p.id, "page": p.page, "workload": p.workload, "seed": p.seed, "label": label,
            "settings": {**p.settings, **question.run["settings"]}}


def metric_value(summary: dict, path: str) -> float | None:
    """A number out of summarize()'s dict by dotted path (`by_class.chat.ttft_steps.p95`); None if absent."""
    value = summary
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return None if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)
