"""A worksheet task's evidence, checked: the runs it names measured (for real, shared between sessions), the
task's check in lessons/evidence run on them, and every finding shown in the student's language.

The last result is kept in the session, and in the student's progress as a fingerprint of the inputs it
checked: after a reload the task still counts as verified while those inputs are unchanged (an import
cannot set it: it is not a worksheet field)."""
from __future__ import annotations

import hashlib
import json

import streamlit as st

from engine.lab.workload import PRESETS
from lessons.evidence.checks import (Verdict, check_batching, check_effects, check_goal, check_paging, effect_specs,
                                     goal_specs, parse_goal)
from lessons.evidence.messages import say
from lessons.evidence.metrics import EFFECT_METRICS
from lessons.evidence.runs import CHANGES
from lessons.evidence.tries import Tries
from ui.practice import evidence_runs
from ui.progress import keys, worksheet_state
from ui.shell.i18n import class_name, lang, run_name, t

VERDICTS = keys.EVIDENCE_VERDICTS
CHECKED_FIELD = "evidence_checked"  # the stored fingerprint: {"inputs": hash, "verified": bool}
TRIES_FIELD = "evidence_tries"  # the task's checks so far (lessons/evidence/tries.py), JSON
COLUMNS = {"batching": ("fixed", "continuous"), "paging": ("contiguous", "paged")}


def _inputs(task) -> str:
    answers = worksheet_state.answers().get(task.id, {})
    relevant = {f.id: answers.get(f.id, "") for f in task.fields if f.kind != "long"}
    return hashlib.sha1(json.dumps(relevant, sort_keys=True).encode()).hexdigest()


def _measured(specs: dict) -> dict:
    out = {}
    for name, spec in specs.items():
        summary = evidence_runs.summary(spec)
        if summary is not None:
            out[name] = summary
    return out


def check(task) -> Verdict:
    answers = worksheet_state.answers().get(task.id, {})
    seed = evidence_runs.seed(task)
    if task.evidence in COLUMNS:
        runs = evidence_runs.stored_runs(task)
        named = {(answers.get(f"{c}_run") or "").strip() for c in COLUMNS[task.evidence]}
        measured = _measured({k: runs[k] for k in named if k in runs})
        verdict = (check_batching if task.evidence == "batching" else check_paging)(answers, runs, measured, seed)
    elif task.evidence == "effects":
        verdict = check_effects(answers, _measured(effect_specs(answers, seed)), seed)
    else:
        verdict = check_goal(answers, _measured(goal_specs(seed=seed)))
    so_far = tries(task)
    goal = parse_goal(answers)[0] if task.evidence == "goal" else None
    so_far.checked(verdict, answers, [f for f in task.fields if f.kind == "choice" and f.answer],
                   goal.terms() if goal else None)
    worksheet_state.keep(task.id, TRIES_FIELD, so_far.to_json())
    st.session_state.setdefault(VERDICTS, {})[task.id] = verdict
    worksheet_state.keep(task.id, CHECKED_FIELD, json.dumps({"inputs": _inputs(task), "verified": verdict.verified}))
    return verdict


def tries(task) -> Tries:
    """The task's checks so far, as stored with the student's answers (an import cannot set them)."""
    return Tries.from_json(worksheet_state.answers().get(task.id, {}).get(TRIES_FIELD))


def verified(task) -> bool | None:
    """Whether the task's evidence holds: this session's last check, or a stored one for the same inputs.
    None: not checked yet (or the inputs changed since)."""
    verdict = st.session_state.get(VERDICTS, {}).get(task.id)
    stored = worksheet_state.answers().get(task.id, {}).get(CHECKED_FIELD)
    try:
        kept = json.loads(stored) if stored else {}
    except ValueError:
        kept = {}
    if not isinstance(kept, dict) or kept.get("inputs") != _inputs(task):
        return None
    return verdict.verified if verdict is not None else bool(kept.get("verified"))


def labels(task) -> dict[str, str]:
    """Field ids, columns, metrics, changes and run settings as the page names them."""
    out = {f.id: f.label for f in task.fields}
    out.update({value: label for f in task.fields for value, label in f.options})
    out.update({c: t(f"ev.column.{c}") for cols in COLUMNS.values() for c in cols})
    out.update({m: t(f"ev.metric.{m}") for m in (*EFFECT_METRICS, *evidence_runs.SHOWN["paging"])})
    out.update({c: t(f"ev.change.{c}") for c in CHANGES})
    out.update({v: run_name(v) for v in ("static", "continuous", "contiguous", "paged", "fcfs", "sjf", "priority",
                                         "edf")})
    out.update({c.name: class_name(c.name) for w in PRESETS.values() for c in w.classes})
    out["all"] = t("ev.who_all")
    return out


def findings(task) -> None:
    verdict = st.session_state.get(VERDICTS, {}).get(task.id)
    if verdict is None:
        return
    names = labels(task)
    lines = [("✅ " if f.ok else "❌ ") + say(f, lang(), names) for f in verdict.findings]
    (st.success if verdict.verified else st.error)(t("ev.verified" if verdict.verified else "ev.not_verified"))
    st.markdown("\n\n".join(lines))
