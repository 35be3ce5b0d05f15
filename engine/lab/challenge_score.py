"""The policy challenge's axes, targets and score: plain arithmetic on a grade's figures, no torch, so the store
ranks stored submissions with the same rule the page shows.

    score(figures, targets) -> 0..100       points(figures, targets) -> {axis: 0..1}

Each axis earns a point at its target and none at its floor, linearly between: a rule that buys one axis with
another loses on the second what it gained on the first (a figure beyond its target earns nothing more). The
score is the mean point, as a percentage. Targets are the instructor's, per class (DEFAULT_TARGETS where unset);
the floors are fixed.
"""
from __future__ import annotations

import math

# axis -> True where higher is better
AXES = {"slo_attainment": True, "throughput_vs_fcfs": True, "worst_class_slowdown": False, "jain": True,
        "preemptions": False}
# Reached together by a rule that weighs the SLOs against memory (preempting rarely, evicting what is cheapest to
# compute again); a rule serving one axis alone misses another (tests/test_policy_challenge.py measures both)
DEFAULT_TARGETS = {"slo_attainment": 0.7, "throughput_vs_fcfs": 0.9, "worst_class_slowdown": 3.5, "jain": 0.7,
                   "preemptions": 5.0}
# where an axis earns nothing: about FCFS's figure on the challenge's workload, or a rule that starves a class
FLOORS = {"slo_attainment": 0.45, "throughput_vs_fcfs": 0.8, "worst_class_slowdown": 8.0, "jain": 0.45,
          "preemptions": 12.0}
# what an instructor may set: (lowest, highest)
TARGET_RANGES = {"slo_attainment": (0.0, 1.0), "throughput_vs_fcfs": (0.5, 1.5), "worst_class_slowdown": (1.0, 50.0),
                 "jain": (0.0, 1.0), "preemptions": (0.0, 200.0)}


def targets_or_default(targets: dict | None) -> dict[str, float]:
    """The targets given, each axis left out taken from DEFAULT_TARGETS; anything else is dropped."""
    given = targets or {}
    return {axis: float(given.get(axis, DEFAULT_TARGETS[axis])) for axis in AXES}


def target_refused(axis: str, value) -> bool:
    """Is this not a target an instructor may set for this axis?"""
    if axis not in AXES or isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    low, high = TARGET_RANGES[axis]
    return not (math.isfinite(value) and low <= value <= high)


def met(figures: dict, targets: dict) -> dict[str, bool]:
    """Axis -> is its figure at or beyond its target (an axis the figures lack is not met)."""
    out = {}
    for axis, higher in AXES.items():
        value, target = figures.get(axis), targets[axis]
        out[axis] = value is not None and (value >= target if higher else value <= target)
    return out


def points(figures: dict, targets: dict) -> dict[str, float]:
    """Axis -> 1 at or beyond its target, 0 at or beyond its floor, linear between."""
    reached, out = met(figures, targets), {}
    for axis, higher in AXES.items():
        value, target, floor = figures.get(axis), targets[axis], FLOORS[axis]
        if reached[axis]:
            out[axis] = 1.0
        elif value is None or (target <= floor if higher else target >= floor):
            out[axis] = 0.0
        else:
            out[axis] = min(1.0, max(0.0, (value - floor) / (target - floor)))
    return out


def score(figures: dict, targets: dict) -> float:
    """The mean of the axes' points, 0..100."""
    p = points(figures, targets)
    return 100 * sum(p.values()) / len(p)
