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
    """A graded policy as the challenge page hands it to the store."""
    policy_key: str
    victim_key: str
    preemptive: bool
    anonymous: bool
    figures: dict  # the grade's per-axis figures
    targets_met: int
    slo_attainment: float
    throughput_vs_fcfs: float
    worst_class_slowdown: float


@dataclass(frozen=True)
class LeaderboardRow:
    """One student's best policy submission. `name` is None when they chose to be anonymous; `policy_key` is
    None unless the reader may see it (the instructor, or the student it belongs to)."""
    rank: int
    name: str | None
    figures: dict
    targets_met: int
    slo_attainment: float
    throughput_vs_fcfs: float
    worst_class_slowdown: float
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
