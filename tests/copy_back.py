"""A lazy student, scripted: every figure typed as 0, then retyped from whatever number the check's messages show
about it; every choice tried in order until its messages stop naming it. How many checks until the evidence is
verified (None: not within the limit) says whether the check gives the answers away."""
from __future__ import annotations

import re
from typing import Callable

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
RUN_NAME = re.compile(r"#\d+")  # "#2" names a run, it is not a figure

# answers -> (verified, the check's messages in the student's words)
Check = Callable[[dict], tuple[bool, list[str]]]


def numbers_in(text: str, typed: str) -> list[str]:
    """The numbers a message shows, less run names and the student's own typed value."""
    return [n for n in NUMBER.findall(RUN_NAME.sub(" ", text)) if n != typed]


def copy_back(check: Check, figures: dict[str, str], choices: dict[str, tuple[list[str], list[str]]],
              limit: int) -> int | None:
    """figures: field id -> how messages name it; choices: field id -> (its options in order, the names messages
    use for it). The checks the script needed to get the evidence verified, or None within `limit`."""
    answers = {fid: "0" for fid in figures}
    place = {fid: 0 for fid in choices}
    answers.update({fid: options[0] for fid, (options, _) in choices.items() if options})
    for n in range(1, limit + 1):
        verified, messages = check(dict(answers))
        if verified:
            return n
        for fid, name in figures.items():
            about = [m for m in messages if name in m]
            found = [x for m in about for x in numbers_in(m, answers[fid])]
            if found:
                answers[fid] = found[-1]
        for fid, (options, names) in choices.items():
            if any(any(name in m for name in names) for m in messages) and place[fid] + 1 < len(options):
                place[fid] += 1
                answers[fid] = options[place[fid]]
    return None
