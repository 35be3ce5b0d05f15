"""One quiz attempt: its seed (question order, option order), and per question up to two tries. A wrong
first try earns the hint and one more try; the explanation comes after the last try. The score keeps
first-try and second-try answers apart, so a lucky second guess does not look like understanding."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from lessons.grading import Grade, grade
from lessons.loader import Question

TRIES = 2


def option_order(question: Question, seed: int) -> list[int]:
    """The option indices of a single or multiple choice question in the attempt's seeded order."""
    order = list(range(len(question.options)))
    random.Random(f"{seed}:{question.id}:options").shuffle(order)
    return order


@dataclass
class Attempt:
    seed: int = 0
    results: dict[str, Grade] = field(default_factory=dict)  # question id -> the grade of its last try
    tries: dict[str, int] = field(default_factory=dict)  # question id -> tries used so far

    def submit(self, question: Question, answer, measured: float | None = None) -> str:
        """'correct', 'retry' (wrong, one try left: show the hint) or 'wrong' (no tries left). A question
        that could not be graded (a numeric one without a run) uses no try."""
        if self.done(question.id):
            return "correct" if self.results[question.id].correct else "wrong"
        g = grade(question, answer, measured)
        if not g.correct and g.expected is None:  # nothing measured yet: nothing to count
            self.results.pop(question.id, None)
            return "unmeasured"
        self.tries[question.id] = self.tries.get(question.id, 0) + 1
        self.results[question.id] = g
        if g.correct:
            return "correct"
        return "retry" if self.tries[question.id] < TRIES else "wrong"

    def done(self, qid: str) -> bool:
        g = self.results.get(qid)
        return g is not None and (g.correct or self.tries.get(qid, 0) >= TRIES)

    def awaiting_retry(self, qid: str) -> bool:
        return qid in self.results and not self.done(qid)

    def score(self) -> dict:
        """first: right at the first try; second: right at the second; answered: finished questions."""
        finished = [qid for qid in self.results if self.done(qid)]
        first = sum(1 for q in finished if self.results[q].correct and self.tries[q] == 1)
        second = sum(1 for q in finished if self.results[q].correct and self.tries[q] == 2)
        return {"first": first, "second": second, "answered": len(finished)}
