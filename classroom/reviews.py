"""Explanations judged by people: the student's self-assessment against the rubric, the instructor's mark.
A mixin of Store (it uses the store's connections and checks)."""
import time

from sqlalchemy import select

from . import checks
from .errors import StorageError, reconnecting
from .records import Mark, when
from .schema import attempt_column, current_attempt, drafts, in_current_attempt, marks, self_assessments, students

SELF_ASSESSMENTS = ("met", "partly", "not_yet")
MARKS = ("ok", "needs_work")
MAX_COMMENT = 500


def _ids(task_id: str, field_id: str) -> dict:
    return {"task_id": checks.item_id(task_id, "task_id"), "field_id": checks.item_id(field_id, "field_id")}


class Reviews:
    @reconnecting
    def self_assess(self, token: str, task_id: str, field_id: str, value: str, attempt: int | None = None) -> None:
        if value not in SELF_ASSESSMENTS:
            raise StorageError("bad_value", field="self_assessment")
        values = {**_ids(task_id, field_id), "value": value, "at": time.time()}
        with self._write() as conn:
            token, attempt = self._in_attempt(conn, token, attempt)
            self._upsert(conn, self_assessments, ("token", "attempt", "task_id", "field_id"),
                         {"token": token, "attempt": attempt, **values})

    def self_assessments(self, token: str) -> dict[str, dict[str, str]]:
        """The current attempt's: task id -> field id -> met | partly | not_yet."""
        token = checks.token(token)
        with self._read() as conn:
            rows = conn.execute(select(self_assessments.c.task_id, self_assessments.c.field_id,
                                       self_assessments.c.value)
                                .where(in_current_attempt(self_assessments, token))).all()
        out: dict = {}
        for task_id, field_id, value in rows:
            out.setdefault(task_id, {})[field_id] = value
        return out

    def mark(self, class_code: str, token: str, task_id: str, field_id: str, mark: str, comment: str = "") -> None:
        """The instructor of `class_code` marks a student's explanation as it stands now (in the student's current
        attempt). A student of another class (or none) is refused: an instructor marks only their own class."""
        if mark not in MARKS:
            raise StorageError("bad_value", field="mark")
        code, ids = checks.class_code(class_code, required=True), _ids(task_id, field_id)
        comment = checks.text(comment, "comment", MAX_COMMENT).strip()
        with self._write() as conn:
            token, attempt = self._in_attempt(conn, token, None)
            if conn.execute(select(students.c.class_code).where(students.c.token == token)).scalar() != code:
                raise StorageError("unknown_student")
            text = conn.execute(select(drafts.c.text).where(
                (drafts.c.token == token) & (drafts.c.attempt == attempt) & (drafts.c.task_id == ids["task_id"])
                & (drafts.c.field_id == ids["field_id"]))).scalar()
            if not (text or "").strip():
                raise StorageError("nothing_to_mark")
            self._upsert(conn, marks, ("token", "attempt", "task_id", "field_id"),
                         {"token": token, "attempt": attempt, **ids, "mark": mark, "comment": comment, "text": text,
                          "at": time.time()})

    def marks(self, token: str) -> dict[str, dict[str, Mark]]:
        """The current attempt's: task id -> field id -> the instructor's Mark."""
        token = checks.token(token)
        with self._read() as conn:
            rows = conn.execute(select(marks).where(in_current_attempt(marks, token))).all()
        out: dict = {}
        for r in rows:
            out.setdefault(r.task_id, {})[r.field_id] = Mark(r.mark, r.comment, r.text, when(r.at))
        return out

    def class_explanations(self, class_code: str) -> list[dict]:
        """Every student of the class, in order of joining: "n" (their number in the class view), token,
        name, and per task and field their text, self-assessment and current mark, in their current attempt."""
        code = checks.class_code(class_code, required=True)
        member = students.c.class_code == code
        # four queries for the whole class, in one connection (a query per student was 3n + 1 connections)
        with self._read() as conn:
            people = conn.execute(select(students.c.token, students.c.name).where(member)
                                  .order_by(students.c.created, students.c.token)).all()
            found = {part: conn.execute(select(table).join(students, students.c.token == table.c.token)
                                        .where(member, attempt_column(table) == current_attempt(table))).all()
                     for part, table in (("texts", drafts), ("self", self_assessments), ("marks", marks))}
        out = {token: {"n": n, "token": token, "name": name, "texts": {}, "self": {}, "marks": {}}
               for n, (token, name) in enumerate(people, 1)}
        for r in found["texts"]:
            out[r.token]["texts"].setdefault(r.task_id, {})[r.field_id] = r.text
        for r in found["self"]:
            out[r.token]["self"].setdefault(r.task_id, {})[r.field_id] = r.value
        for r in found["marks"]:
            out[r.token]["marks"].setdefault(r.task_id, {})[r.field_id] = Mark(r.mark, r.comment, r.text, when(r.at))
        return list(out.values())
