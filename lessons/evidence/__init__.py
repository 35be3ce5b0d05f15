"""Worksheet evidence: runs the student configures (runs.py), the figures they name (metrics.py), checked
against what the engine measured (checks.py), said in the student's language (messages.py).

    spec = RunSpec("chat-and-reports", {"batcher": "static"})      # the student's run
    summary = ...  # the run's summary: ui/practice/evidence_runs.py measures it through the shared run cache
    check_batching(claims, {spec.key: spec, ...}, {spec.key: summary, ...}).verified
"""
from lessons.evidence.checks import (FEATURES, Finding, Goal, Verdict, check_batching, check_effects, check_goal,
                                     check_paging, effect_specs, goal_specs, parse_goal, run_name)
from lessons.evidence.messages import say
from lessons.evidence.metrics import EFFECT_METRICS, METRICS, Metric
from lessons.evidence.runs import CHANGES, SETTINGS, RunSpec, SpecError


__all__ = ["RunSpec", "SpecError", "CHANGES", "SETTINGS", "METRICS", "EFFECT_METRICS", "Metric", "Finding",
           "Verdict", "Goal", "FEATURES", "check_batching", "check_paging", "check_effects", "check_goal",
           "effect_specs", "goal_specs", "parse_goal", "run_name", "say"]
