"""One quiz attempt: its seed (question order, option order), and per question up to two tries (a prediction:
one, since the run shows the answer). A wrong first try earns the hint and one more try; the explanation comes
after the last try. The score keeps first-try and second-try answers apart, so a lucky second guess does not look
like understanding, and keeps "exactly right" apart from the per-option credit of a multiple-select."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from lessons.grading import QuizGrade, grade, incomplete
from lessons.loader import Question

TRIES = 2


def _shuffled(n: int, key: str) -> list[int]:
    order = list(range(n))
    random.Random(key).shuffle(order)
    return order


def option_order(question: Question, seed: int) -> list[int]:
    """The option indices of a single, multiple or two-tier question in the attempt's seeded order."""
    return _shuffled(len(question.options), f"{seed}:{question.id}:options")


def reason_order(question: Question, seed: int) -> list[int]:
    """A two-tier question's reasons in the attempt's seeded order (shuffled apart from the options)."""
    return _shuffled(len(question.reasons), f"{seed}:{question.id}:reasons")


def tries_for(question: Question) -> int:
    return 1 if question.predict else TRIES


@dataclass
class Attempt:
    seed: int = 0
    results: dict[str, QuizGrade] = field(default_factory=dict)  # question id -> the grade of its last try
    tries: dict[str, int] = field(default_factory=dict)  # question id -> tries used so far
    limits: dict[str, int] = field(default_factory=dict)  # question id -> tries it allows (a prediction: 1)

    def submit(self, question: Question, answer, measured=None) -> str:
        """'correct', 'retry' (wrong, one try left: show the hint) or 'wrong' (no tries left). An answer that
        cannot be graded yet uses no try: 'incomplete' (nothing picked, a two-tier reason missing, not a number;
        lessons.grading.incomplete says what) or 'unmeasured' (a numeric question without its run)."""
        if self.done(question.id):
            return "correct" if self.results[question.id].correct else "wrong"
        if incomplete(question, answer) is not None:
            return "incomplete"
        g = grade(question, answer, measured)
        if not g.correct and g.expected is None:  # nothing measured yet: nothing to count
            self.results.pop(question.id, None)
            return "unmeasured"
        self.limits[question.id] = tries_for(question)
        self.tries[question.id] = self.tries.get(question.id, 0) + 1
        self.results[question.id] = g
        if g.correct:
            return "correct"
        return "retry" if self.tries[question.id] < self.limits[question.id] else "wrong"

    def done(self, qid: str) -> bool:
        g = self.results.get(qid)
        return g is not None and (g.correct or self.tries.get(qid, 0) >= self.limits.get(qid, TRIES))

    def awaiting_retry(self, qid: str) -> bool:
        return qid in self.results and not self.done(qid)

    def score(self) -> dict:
        """first: exactly right at the first try; second: at the second; answered: finished questions. A
        multiple-select's per-option credit is feedback on that question, never part of the score."""
        finished = [qid for qid in self.results if self.done(qid)]
        first = sum(1 for q in finished if self.results[q].correct and self.tries[q] == 1)
        second = sum(1 for q in finished if self.results[q].correct and self.tries[q] == 2)
        return {"first": first, "second": second, "answered": len(finished)}
