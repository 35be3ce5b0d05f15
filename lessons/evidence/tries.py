"""A student's tries at one worksheet task's check, kept from check to check (as JSON in the student's progress).

A figure that misses is named with its run, never with the value measured; after MISSES_BEFORE_POINTER misses of
the same field the check also says where the page shows that figure (the runs table: its row and column).
A choice of fact is judged only when checked: its first checked answer is its free try (FREE_CHOICE_TRIES), and
a choice right only after a wrong checked answer is guessed-through, which the instructor sees.
A goal (chat-slo-goal) changed after a check has shown its results is a new attempt at it (`goal_attempts`)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from lessons.evidence.checks import Verdict

MISSES_BEFORE_POINTER = 3
FREE_CHOICE_TRIES = 1  # every choice of fact on the worksheets has two options: a second try would be a sure pass


@dataclass
class Tries:
    checks: int = 0
    misses: dict[str, int] = field(default_factory=dict)  # figure field -> checks it missed at
    choices: dict[str, list[str]] = field(default_factory=dict)  # choice field -> its answers as checked, in order
    goal: str = ""  # the goal last checked (its fields as JSON): the one whose results the student has seen
    goal_attempts: int = 0  # goals checked, counting one per change after results were shown

    @classmethod
    def from_json(cls, text: str | None) -> Tries:
        """The stored tries; nothing, or anything unreadable, is no tries yet."""
        try:
            d = json.loads(text) if text else {}
        except ValueError:
            d = {}
        if not isinstance(d, dict):
            return cls()

        def count(v) -> int:
            return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0
        misses = d.get("misses") if isinstance(d.get("misses"), dict) else {}
        choices = d.get("choices") if isinstance(d.get("choices"), dict) else {}
        return cls(count(d.get("checks")), {str(k): count(v) for k, v in misses.items()},
                   {str(k): [str(x) for x in v] for k, v in choices.items() if isinstance(v, list)},
                   d.get("goal") if isinstance(d.get("goal"), str) else "", count(d.get("goal_attempts")))

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True, ensure_ascii=False)

    def checked(self, verdict: Verdict, answers: dict, choice_fields=(), goal: str | None = None) -> None:
        """One more check: `verdict` gains a pointer for each figure that has missed often enough; the choices of
        fact (loader fields with an answer) are tried with their current answers; `goal` is the goal checked."""
        self.checks += 1
        for finding in list(verdict.findings):
            if finding.code != "figure_off":
                continue
            name = finding.params["field"]
            self.misses[name] = self.misses.get(name, 0) + 1
            if self.misses[name] >= MISSES_BEFORE_POINTER:
                verdict.add(False, "figure_where", field=name, run=finding.params["run"],
                            metric=finding.params["metric"])
        for f in choice_fields:
            value = (answers.get(f.id) or "").strip()
            tried = self.choices.setdefault(f.id, [])
            if value and value not in tried:
                tried.append(value)
        if goal is not None and goal != self.goal:
            self.goal, self.goal_attempts = goal, self.goal_attempts + 1

    def choice_right(self, f, answers: dict) -> bool:
        """The choice is right, and was checked (a choice changed to an answer not checked yet waits for a check)."""
        value = (answers.get(f.id) or "").strip()
        return value == f.answer and value in (self.choices.get(f.id) or [])

    def guessed(self, f) -> bool:
        """Right only after its free tries were spent on wrong answers."""
        tried = self.choices.get(f.id) or []
        return f.answer in tried and tried.index(f.answer) >= FREE_CHOICE_TRIES
