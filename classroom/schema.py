"""The tables, in SQLAlchemy Core. Bump SCHEMA_VERSION with every change and add its migration to store.py."""
from sqlalchemy import (Boolean, Column, Float, ForeignKey, Index, Integer, MetaData, String, Table, Text,
                        UniqueConstraint, select)

SCHEMA_VERSION = 6  # 2: self_assessments and marks (explanations judged by people); 3: policy_submissions;
# 4: instructor_sessions, passcode_failures, server_secrets; 5: attempts (classroom/migrate.py);
# 6: challenge_targets, challenge_claims
TOKEN_LEN = 22  # secrets.token_urlsafe(16)
ID_LEN = 200

metadata = MetaData()

schema_meta = Table(
    "schema_meta", metadata,
    Column("id", Integer, primary_key=True),  # a single row, id 1
    Column("version", Integer, nullable=False),
)

students = Table(
    "students", metadata,
    Column("token", String(TOKEN_LEN), primary_key=True),
    Column("name", Text, nullable=False, default=""),
    Column("class_code", String(ID_LEN), nullable=False, default="", index=True),
    Column("created", Float, nullable=False),
    # the attempt the student's pages show: "start over" opens the next one, and every earlier one is kept
    Column("attempt", Integer, nullable=False, server_default="1"),
    # the quiz's own attempt: a new quiz attempt opens the next one, and so does "start over"
    Column("quiz_attempt", Integer, nullable=False, server_default="1"),
)


def _owned(name: str, *columns, key: tuple[str, ...], attempt: str = "attempt") -> Table:
    """A table of one student's records, one row per (token, attempt, *key): each attempt keeps its own rows.
    `attempt` names the column that says which attempt (students.attempt, or quiz_attempt for the quiz)."""
    return Table(
        name, metadata,
        Column("token", String(TOKEN_LEN), ForeignKey("students.token", ondelete="CASCADE"), nullable=False),
        Column(attempt, Integer, nullable=False, server_default="1"),
        *columns,
        Column("at", Float, nullable=False),
        UniqueConstraint("token", attempt, *key, name=f"uq_{name}"),
    )


quiz_answers = _owned(
    "quiz_answers",
    Column("question_id", String(ID_LEN), nullable=False),
    Column("try_no", Integer, nullable=False),
    Column("answer", Text, nullable=False),  # JSON
    Column("correct", Boolean, nullable=False),
    key=("question_id", "try_no"),
    attempt="quiz_attempt",
)

drafts = _owned(
    "drafts",
    Column("task_id", String(ID_LEN), nullable=False),
    Column("field_id", String(ID_LEN), nullable=False),
    Column("text", Text, nullable=False),
    key=("task_id", "field_id"),
)

gradings = _owned(
    "gradings",
    Column("task_id", String(ID_LEN), nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("criteria", Text, nullable=False),  # JSON {criterion: bool}
    key=("task_id",),
)

predictions = _owned(
    "predictions",
    Column("prompt_id", String(ID_LEN), nullable=False),
    Column("value", Float, nullable=False),
    Column("measured", Float, nullable=True),
    key=("prompt_id",),
)

milestones = _owned(
    "milestones",
    Column("milestone_id", String(ID_LEN), nullable=False),
    key=("milestone_id",),
)

self_assessments = _owned(  # the student's own judgement of an explanation against its rubric
    "self_assessments",
    Column("task_id", String(ID_LEN), nullable=False),
    Column("field_id", String(ID_LEN), nullable=False),
    Column("value", String(16), nullable=False),  # met | partly | not_yet
    key=("task_id", "field_id"),
)

marks = _owned(  # the instructor's mark on an explanation
    "marks",
    Column("task_id", String(ID_LEN), nullable=False),
    Column("field_id", String(ID_LEN), nullable=False),
    Column("mark", String(16), nullable=False),  # ok | needs_work
    Column("comment", Text, nullable=False, default=""),
    Column("text", Text, nullable=False),  # the explanation as marked: an edit after the mark needs a new one
    key=("task_id", "field_id"),
)

polls = Table(
    "polls", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_code", String(ID_LEN), nullable=False),
    Column("prompt_id", String(ID_LEN), nullable=False),
    Column("state", String(8), nullable=False),  # open | closed | failed
    Column("measured", Float, nullable=True),
    Column("opened_at", Float, nullable=False),
    Column("closed_at", Float, nullable=True),
    Index("ix_polls_class", "class_code", "id"),
)

poll_answers = Table(
    "poll_answers", metadata,
    Column("poll_id", Integer, ForeignKey("polls.id", ondelete="CASCADE"), nullable=False),
    Column("token", String(TOKEN_LEN), ForeignKey("students.token", ondelete="CASCADE"), nullable=False),
    Column("value", Float, nullable=False),
    Column("at", Float, nullable=False),
    UniqueConstraint("poll_id", "token", name="uq_poll_answers"),
)

policy_submissions = Table(  # the policy challenge: every graded submission; the leaderboard takes each one's best
    "policy_submissions", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("token", String(TOKEN_LEN), ForeignKey("students.token", ondelete="CASCADE"), nullable=False),
    Column("policy_key", Text, nullable=False),
    Column("victim_key", Text, nullable=False, default=""),
    Column("preemptive", Boolean, nullable=False),
    Column("anonymous", Boolean, nullable=False),
    Column("figures", Text, nullable=False),  # JSON: the grade's per-axis figures
    Column("targets_met", Integer, nullable=False),
    Column("slo_attainment", Float, nullable=False),
    Column("throughput_vs_fcfs", Float, nullable=False),
    Column("worst_class_slowdown", Float, nullable=False),
    Column("at", Float, nullable=False),
    Index("ix_policy_submissions_token", "token"),
)

challenge_targets = Table(  # the policy challenge's targets an instructor set for a class (none: the defaults)
    "challenge_targets", metadata,
    Column("class_code", String(ID_LEN), primary_key=True),
    Column("targets", Text, nullable=False),  # JSON {axis: target}, every axis of engine/lab/challenge_score.py
    Column("at", Float, nullable=False),
)

challenge_claims = Table(  # one row per graded submission asked for, taken before its grading: the pace counts these
    "challenge_claims", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("token", String(TOKEN_LEN), ForeignKey("students.token", ondelete="CASCADE"), nullable=False),
    Column("class_code", String(ID_LEN), nullable=False),  # the student's class when they asked
    Column("at", Float, nullable=False),
    Index("ix_challenge_claims_token", "token", "at"),
    Index("ix_challenge_claims_class", "class_code", "at"),
)

server_secrets = Table(  # random values made once and shared by every replica on this database
    "server_secrets", metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(128), nullable=False),
)

instructor_sessions = Table(  # one row per browser the instructor entered the passcode in; the cookie holds the token
    "instructor_sessions", metadata,
    Column("token_hash", String(64), primary_key=True),  # sha256 of the token, hex: the token itself is never kept
    Column("class_code", String(ID_LEN), nullable=False, default=""),
    Column("fingerprint", String(128), nullable=False),  # of the passcode it was opened with: a new passcode ends it
    Column("created", Float, nullable=False),
    Column("expires", Float, nullable=False, index=True),
    Column("revoked", Boolean, nullable=False, default=False),
)

passcode_failures = Table(  # one row per key (session, address, the total) of every passcode checked and not right
    "passcode_failures", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("attempt", String(32), nullable=False, index=True),
    Column("key", String(ID_LEN), nullable=False),
    Column("at", Float, nullable=False, index=True),
    Index("ix_passcode_failures_key", "key", "at"),
)

ATTEMPT_TABLES = (quiz_answers, drafts, gradings, predictions, milestones, self_assessments, marks)
"""The records that belong to one of the student's attempts (quiz_answers: to a quiz attempt)."""


def attempt_column(table: Table) -> Column:
    """The column of `table` that says which attempt a record belongs to."""
    return table.c.quiz_attempt if table is quiz_answers else table.c.attempt


def current_attempt(table: Table) -> Column:
    """The column of `students` that holds the attempt the student is in now, for the records of `table`."""
    return students.c.quiz_attempt if table is quiz_answers else students.c.attempt


def in_current_attempt(table: Table, token: str):
    """Where-clause: the records of `token` in `table` that belong to the attempt the student is in now."""
    now = select(current_attempt(table)).where(students.c.token == token).scalar_subquery()
    return (table.c.token == token) & (attempt_column(table) == now)
