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

from lessons.figures import figure, metric_figure, with_unit
from lessons.loader import Moment, Question, Task, TaskField, load_moments
from lessons.reading import is_keyword_list, matches, normalize, read, size  # noqa: F401 (matches: re-exported)
from lessons.strings import phrase


def _msg(key: str, lang: str, **kw) -> str:
    return phrase(f"grading.{key}", lang, **kw)


# --- worksheets --------------------------------------------------------------------------
MIN_LONG = 6  # words (en) or characters (zh) a long answer needs


def _say(key: str, lang: str, **kw) -> str:
    return phrase(f"worksheet.{key}", lang, **kw)


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
class QuizGrade:
    correct: bool  # exactly right: every tick of a multiple-select, both tiers of a two-tier question
    explanation: str
    expected: object  # single: index; multiple: sorted indices; two_tier: {"answer", "reason"}; ordering: items;
    #                   numeric: the value as shown (max_class: the class id)
    message: str = ""  # numeric: what was measured and the tolerance, or why it could not be graded (shown once done)
    credit: float = 0.0  # 0-1: multiple-select scores each option (ticked or not) on its own; the rest all or nothing
    tiers: tuple[bool, bool] | None = None  # two_tier: (answer right, reason right)
    retry: str = ""  # numeric, wrong: too high or too low and where to look, shown while a try is left (no figure)


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
    parts = [f"±{tolerance['rel'] * 100:g}" + ("%" if lang == "zh" else " %")] if "rel" in tolerance else []
    if "abs" in tolerance:
        parts.append(f"±{tolerance['abs']:g}" + (_msg("points", lang) if unit == "%" else f" {unit}" if unit else ""))
    return " / ".join(parts)


def _index(value) -> int | None:
    return int(value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else None


def _ticked(answer) -> list[int] | None:
    """A multiple-select answer as sorted distinct indices; None if it is not a list of indices."""
    if not isinstance(answer, (list, tuple, set)):
        return None
    chosen = [_index(a) for a in answer]
    return None if any(c is None for c in chosen) else sorted(set(chosen))


def _tiers(answer) -> tuple[int | None, int | None]:
    """A two-tier answer, {"answer": i, "reason": j} (or [i, j]), as its two indices (None where missing)."""
    if isinstance(answer, dict):
        return _index(answer.get("answer")), _index(answer.get("reason"))
    if isinstance(answer, (list, tuple)) and len(answer) == 2:
        return _index(answer[0]), _index(answer[1])
    return None, None


def option_credit(question: Question, chosen: list[int] | None) -> float:
    """Multiple-select, per option: the share of options ticked or left unticked as they should be."""
    if chosen is None:
        return 0.0
    right = set(question.answer)
    return sum((i in chosen) == (i in right) for i in range(len(question.options))) / len(question.options)


def incomplete(question: Question, answer) -> str | None:
    """Why `answer` cannot be graded yet (no option picked, a two-tier reason missing, a prediction that is not a
    number...), in the question's language; None when it can. Such an answer uses no try."""
    q, lang = question, question.lang
    if q.type == "single":
        return None if _index(answer) is not None else _msg("need_option", lang)
    if q.type == "multiple":
        return None if _ticked(answer) else _msg("need_ticks", lang)
    if q.type == "two_tier":
        a, r = _tiers(answer)
        return None if a is not None and r is not None else _msg("need_answer" if a is None else "need_reason", lang)
    if q.type == "ordering":
        ok = isinstance(answer, (list, tuple)) and len(answer) == len(q.items)
        return None if ok else _msg("need_order", lang)
    if q.compare == "max_class":
        return None if answer in dict(q.classes) else _msg("need_class", lang)
    return None if parse_number(answer, percent=q.unit == "%") is not None else _msg("not_number", lang)


def grade(question: Question, answer, measured: float | str | None = None) -> QuizGrade:
    """single: answer is an option index; multiple: a list of indices (exactly right, and per-option credit);
    two_tier: {"answer": i, "reason": j}, right only when both are; ordering: the items as strings in the student's
    order; numeric: a number (or numeric string), checked against `measured`: the value of question.metric in the
    student's own run, or the ratio of the two runs (a 0-1 share when the unit is '%': then the answer and
    `expected` are in percent, and an abs tolerance is in points); max_class: a class id, checked against the
    class the run measured (lessons.grading.measure gives `measured` for every kind)."""
    q = question
    if q.type == "single":
        ok = _index(answer) == q.answer
        return QuizGrade(ok, q.explanation, q.answer, credit=float(ok))
    if q.type == "multiple":
        chosen = _ticked(answer)
        return QuizGrade(chosen == list(q.answer), q.explanation, list(q.answer), credit=option_credit(q, chosen))
    if q.type == "two_tier":
        a, r = _tiers(answer)
        tiers = (a == q.answer, r == q.reason)
        return QuizGrade(all(tiers), q.explanation, {"answer": q.answer, "reason": q.reason}, credit=float(all(tiers)),
                     tiers=tiers)
    if q.type == "ordering":
        ok = isinstance(answer, (list, tuple)) and [str(a) for a in answer] == list(q.items)
        return QuizGrade(ok, q.explanation, list(q.items), credit=float(ok))
    if q.compare == "max_class":
        return _grade_class(q, answer, measured)
    if isinstance(measured, (tuple, list)):  # a ratio with its two figures
        measured, parts = measured[0], measured[1:]
    else:
        parts = ()
    if not isinstance(measured, (int, float)) or isinstance(measured, bool) or not math.isfinite(measured):
        return QuizGrade(False, q.explanation, None, _msg("no_measure", q.lang))
    shown, value = shown_value(q, measured), parse_number(answer, percent=q.unit == "%")
    tol = _tolerance_text(q.tolerance, q.unit, q.lang)
    measured_text = figure(shown, q.unit, q.lang)
    message = (_msg("ratio", q.lang, measured=measured_text, tol=tol, a=metric_figure(q.metric, parts[0], q.lang),
                    b=metric_figure(q.metric, parts[1], q.lang))
               if q.compare == "ratio" and len(parts) == 2 else
               _msg("numeric", q.lang, measured=measured_text, tol=tol))
    if value is None:  # (lessons.attempt refuses it before grading: no try, and nothing measured shown)
        return QuizGrade(False, q.explanation, shown, _msg("not_number", q.lang))
    if q.predict:
        message = _msg("predicted", q.lang, value=typed(q, value)) + ("" if q.lang == "zh" else " ") + message
    ok = within(value, shown, q.tolerance)
    retry = "" if ok else _msg("too_high" if value > shown else "too_low", q.lang, look=q.look)
    return QuizGrade(ok, q.explanation, shown, message, credit=float(ok), retry=retry)


def typed(question: Question, value: float) -> str:
    """A student's own number with the question's unit, as entered (up to four significant digits, no padding)."""
    return with_unit(f"{value:.4g}", question.unit, question.lang)


def _grade_class(q: Question, answer, measured) -> QuizGrade:
    """Which class waited longest: `measured` is {class id: figure} from the run (or the class id alone)."""
    figures = measured if isinstance(measured, dict) else {}
    top = longest(figures) if figures else measured if isinstance(measured, str) else None
    if top is None:
        return QuizGrade(False, q.explanation, None, _msg("no_measure", q.lang))
    labels = dict(q.classes)
    sep = "，" if q.lang == "zh" else ", "
    shown = sep.join(f"{labels.get(c, c)} {figure(v, q.unit, q.lang)}" for c, v in figures.items())
    message = _msg("max_class", q.lang, label=labels.get(top, top), figures=shown or "—")
    if q.predict and answer in labels:
        message = _msg("predicted", q.lang, value=labels[answer]) + ("" if q.lang == "zh" else " ") + message
    ok = answer == top
    retry = "" if ok else _msg("other_class", q.lang, look=q.look)
    return QuizGrade(ok, q.explanation, top, message, credit=float(ok), retry=retry)


def longest(figures: dict[str, float]) -> str | None:
    """The class with the largest figure (the first of equals, in the run's class order)."""
    return max(figures, key=lambda c: figures[c]) if figures else None


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
def run_spec(question: Question, moments: dict[str, Moment] | None = None, variant=None) -> dict:
    """What a numeric question's Run button runs: the moment's workload and seed, and as EngineConfig
    overrides the moment's settings, then the question's; a student's `variant` (lessons.quiz_variants) changes
    the seed, the scale of the workload, its output length (`output`, None: the workload's) and max_num_seqs. Run it
    as run_requests(model, workload_requests(model, workload_of(spec), seed), engine_config_for(that workload,
    **settings)). A ratio also runs `versus_settings` (None otherwise)."""
    p = (moments if moments is not None else load_moments())[question.run["moment"]]
    label = next(iter(question.run["settings"].values()), None)  # the compared run it reads: batcher, layout, policy
    versus = question.run.get("versus")

    def settings(over: dict) -> dict:
        both = {**p.settings, **over}
        return variant.settings(both) if variant is not None else both
    return {"moment": p.id, "page": p.page, "workload": p.workload,
            "seed": variant.seed if variant is not None else p.seed,
            "scale": variant.scale if variant is not None else 1.0, "label": label,
            "output": variant.output if variant is not None else None,
            "settings": settings(question.run["settings"]),
            "versus_label": next(iter(versus.values()), None) if versus else None,
            "versus_settings": settings(versus) if versus else None}


def workload_of(spec: dict):
    """The workload a run_spec's runs draw their requests from: the preset, scaled, with its output length."""
    from engine.lab.workload import preset  # here: at the top it would lengthen every page's import chain
    workload = preset(spec["workload"]).scaled(spec["scale"])
    return workload.with_output(spec["output"]) if spec.get("output") else workload


def measure(question: Question, run: dict | None, versus: dict | None = None):
    """What a numeric question is graded against, from summarize() dicts of its run (and of its `versus` run):
    the run's figure; for a ratio (figure, run's figure, versus's figure); for max_class {class: figure}.
    None when a run or a figure is missing, or a ratio would divide by zero."""
    if run is None:
        return None
    if question.compare == "max_class":
        figures = {c: metric_value(run, question.metric.replace("{cls}", c)) for c in (run.get("by_class") or {})}
        figures = {c: v for c, v in figures.items() if v is not None}
        return figures or None
    a = metric_value(run, question.metric)
    if question.compare != "ratio":
        return a
    b = metric_value(versus, question.metric) if versus is not None else None
    if a is None or b is None or b == 0:
        return None
    return (a / b, a, b)


def measured_value(measured):
    """The single figure of what `measure` returned: a ratio's value, the longest-waiting class."""
    if isinstance(measured, (tuple, list)):
        return measured[0]
    if isinstance(measured, dict):
        return longest(measured)
    return measured


def metric_value(summary: dict, path: str) -> float | None:
    """A number out of summarize()'s dict by dotted path (`by_class.chat.ttft_steps.p95`); None if absent."""
    value = summary
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return None if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)
