"""What the store hands back: frozen records, no tokens of other students in any of them."""
from dataclasses import dataclass
from datetime import datetime, timezone


def when(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=timezone.utc)


@dataclass(frozen=True)
class Student:
    token: str
    name: str
    class_code: str
    created: datetime
    attempt: int = 1  # the attempt the student's pages show (start over opens the next)
    quiz_attempt: int = 1  # the quiz's attempt (a new quiz attempt, or start over, opens the next)


@dataclass(frozen=True)
class QuizAnswer:
    question_id: str
    answer: object
    try_no: int
    correct: bool
    at: datetime


@dataclass(frozen=True)
class Grading:
    task_id: str
    passed: bool
    criteria: dict[str, bool]
    at: datetime


@dataclass(frozen=True)
class Prediction:
    prompt_id: str
    value: float
    measured: float | None
    at: datetime


@dataclass(frozen=True)
class Poll:
    id: int
    class_code: str
    prompt_id: str
    state: str  # "open" | "closed" | "failed" (its runs failed: no measured value will come)
    measured: float | None
    opened_at: datetime


@dataclass(frozen=True)
class Mark:
    mark: str  # "ok" | "needs_work"
    comment: str
    text: str  # the explanation as it was when marked
    at: datetime


@dataclass(frozen=True)
class PolicySubmission:
    """A graded policy as the challenge page hands it to the store: the grade's figures on the class's hidden
    seeds (every axis of engine/lab/challenge_score.py). No targets: the class's are the store's."""
    policy_key: str
    victim_key: str
    preemptive: bool
    anonymous: bool
    figures: dict


@dataclass(frozen=True)
class LeaderboardRow:
    """One student's best policy submission. `name` is None when they chose to be anonymous; `policy_key` is
    None unless the reader may see it (the instructor, or the student it belongs to). Of the hidden seeds' figures
    only the score: the per-axis detail stays in the store."""
    rank: int
    name: str | None
    score: float  # 0..100 against the class's targets now
    policy_key: str | None
    victim_key: str | None
    preemptive: bool | None  # with the text: None where the text is hidden
    mine: bool
    at: datetime


@dataclass(frozen=True)
class InstructorSession:
    class_code: str
    created: datetime
    expires: datetime
