"""One session's writes of one student's progress, kept until the store has them, and kept after that too.

The outbox is a journal: `ops` are the store calls that make the student's progress as this session holds it
(the student's row first), in order; `ops[:sent]` are known to be in the database of the store's `epoch`.
- A write the store cannot take now ("unavailable": the server is down, the file cannot be opened) stays,
  and `flush` tries the rest in order later (on the next page run): nothing is written out of order.
- When the store opened a new database (a deleted or replaced SQLite file: a new `epoch`), or the database no
  longer knows the student, `sent` goes back to 0 and the whole journal is written again: the progress the
  session loaded and everything since, so the new database has the student as a restart will need them.
- A refused write (too long, a bad value: retrying cannot help) is dropped and returned, for the page to say.

Every call in the journal is idempotent (an upsert, an insert that ignores a duplicate, an attempt opened by its
number), so sending it twice, or again after the database lost it, ends in the same rows. Each write names the
attempt it was made in (its last argument), so a write that waited lands there even when the student started over
before it went out; "start over" and a new quiz attempt come after it in the journal, and open the next attempt by
its number. The journal stays as small as the progress: a later write of the same row replaces the earlier one.

Streamlit-free: the UI keeps one Outbox per session (ui/progress/saved.py) and calls `add` and `flush`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .errors import StorageError

RETRY_LATER = ("unavailable", "newer_schema")  # the database, not the write: try again later
MAX_RESENDS = 2  # whole-journal resends in one flush (a file replaced twice while it runs); then: later


@dataclass(frozen=True)
class Op:
    """`Store.<method>(*args)`; `args[0]` is the student's token."""

    method: str
    args: tuple

    @property
    def key(self) -> tuple:
        """The row this op writes: a later op with the same key supersedes it (see _RULES). An attempt not given
        (the store's current one) is None."""
        rule = _RULES[self.method]
        return (rule.kind, *(self.args[i] if i < len(self.args) else None for i in rule.key))


@dataclass(frozen=True)
class _Rule:
    kind: str  # the row's kind (keys compare kind first)
    key: tuple[int, ...] = ()  # the args (by index) that name the row within its kind
    first_wins: bool = False  # an insert that ignores a duplicate: a second op of the same row changes nothing
    overwrites: tuple[str, ...] = ()  # kinds whose earlier op of the same row this op makes moot
    opens: bool = False  # opens an attempt: only by its number, so that sending it again opens nothing more


_RULES = {  # each key ends with the attempt (the call's last argument)
    "ensure_student": _Rule("student", first_wins=True),
    "update_student": _Rule("profile"),
    "record_answer": _Rule("answer", (1, 3, 5), first_wins=True),  # (question, try): the first try stored stays
    "clear_quiz": _Rule("quiz_attempt", (1,), first_wins=True, opens=True),
    "save_draft": _Rule("draft", (1, 2, 4)),
    "record_grading": _Rule("grading", (1, 4)),
    "self_assess": _Rule("self", (1, 2, 4)),
    "record_prediction": _Rule("prediction", (1, 4), overwrites=("measured",)),  # it sets `measured` too
    "set_measured": _Rule("measured", (1, 3)),
    "reach_milestone": _Rule("milestone", (1, 2), first_wins=True),
    "start_over": _Rule("attempt", (1, 2), first_wins=True, opens=True),
}


@dataclass
class Outbox:
    ops: list[Op] = field(default_factory=list)
    sent: int = 0  # ops[:sent] are in the database of `epoch`
    epoch: str | None = None
    error: StorageError | None = None  # why the last flush stopped short; None once everything is sent

    @property
    def pending(self) -> int:
        return len(self.ops) - self.sent

    @property
    def student_in_journal(self) -> bool:
        """The journal starts with the student's row: it can make the student again in a database without them."""
        return bool(self.ops) and self.ops[0].method == "ensure_student"

    def loaded(self, ops: list[Op], epoch: str) -> None:
        """The progress just read from the store of `epoch`: already there, kept to be written again if needed."""
        self.ops, self.sent, self.epoch, self.error = [], 0, epoch, None
        for op in ops:
            self.add(op.method, *op.args)
        self.sent = len(self.ops)

    def add(self, method: str, *args) -> None:
        """A write to make, after every write added before it."""
        if method not in _RULES:
            raise ValueError(f"not an idempotent progress write: {method}")
        op, rule = Op(method, tuple(args)), _RULES[method]
        if rule.opens and None in op.key[1:]:
            raise ValueError(f"{method} opens an attempt only by its number")
        if rule.first_wins and any(o.key == op.key for o in self.ops):
            return
        rows = {op.key} | {(kind, *op.key[1:]) for kind in rule.overwrites}
        self.sent -= sum(1 for o in self.ops[:self.sent] if o.key in rows)
        self.ops = [*(o for o in self.ops if o.key not in rows), op]

    def flush(self, store) -> list[StorageError]:
        """Send what is not sent yet, in order, to `store`; stop at the first write the database cannot take now
        (`error` says why). Returns the writes refused for their content, which are dropped."""
        refused: list[StorageError] = []
        resends = 0
        try:
            store.check()  # a replaced file: its new epoch, before anything is written
        except StorageError as err:
            self.error = err
            return refused
        while self.sent < len(self.ops) or self.epoch != store.epoch:
            if self.epoch != store.epoch:  # a new database: it has none of this, the student's row first
                self.sent, self.epoch = 0, store.epoch
                continue
            op = self.ops[self.sent]
            try:
                getattr(store, op.method)(*op.args)
            except StorageError as err:
                lost = err.code == "replaced" or (err.code == "unknown_student" and self.student_in_journal)
                if lost and resends < MAX_RESENDS:
                    resends += 1
                    self.sent, self.epoch = 0, store.epoch
                    continue
                if err.code in RETRY_LATER or lost:
                    self.error = err
                    return refused
                refused.append(err)
                del self.ops[self.sent]
                continue
            self.sent += 1
        self.error = None
        return refused


class Progress(NamedTuple):
    """A student's progress as the store reads it."""

    student: object  # records.Student
    answers: list
    drafts: dict
    gradings: dict
    assessed: dict  # self-assessments
    predictions: dict
    milestones: set

    @classmethod
    def read(cls, store, token: str) -> Progress:
        """The current attempt's progress (and the student, whose record says which attempt that is)."""
        return cls(store.student(token), store.quiz_answers(token), store.drafts(token), store.gradings(token),
                   store.self_assessments(token), store.predictions(token), store.milestones(token))


def progress_ops(saved: Progress) -> list[Op]:
    """The writes that make this progress, in the attempts it belongs to (opened first). The instructor's marks
    are not the student's to write, and are not among them."""
    tok, student = saved.student.token, saved.student
    n, quiz_n = student.attempt, student.quiz_attempt
    opened = ([Op("start_over", (tok, n, quiz_n))] if n > 1
              else [Op("clear_quiz", (tok, quiz_n))] if quiz_n > 1 else [])
    return [
        Op("ensure_student", (tok, student.name, student.class_code, student.created.timestamp())),
        *opened,
        *(Op("record_answer", (tok, a.question_id, a.answer, a.try_no, a.correct, quiz_n))
          for a in sorted(saved.answers, key=lambda a: a.try_no)),
        *(Op("save_draft", (tok, task, fid, text, n))
          for task, fields in saved.drafts.items() for fid, text in fields.items()),
        *(Op("record_grading", (tok, g.task_id, g.passed, g.criteria, n)) for g in saved.gradings.values()),
        *(Op("self_assess", (tok, task, fid, v, n))
          for task, fields in saved.assessed.items() for fid, v in fields.items()),
        *(Op("record_prediction", (tok, p.prompt_id, p.value, p.measured, n)) for p in saved.predictions.values()),
        *(Op("reach_milestone", (tok, mid, n)) for mid in sorted(saved.milestones)),
    ]
