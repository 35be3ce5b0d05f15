"""Live polls: one open poll per class, one answer per student, and the measured value published once."""
import time

from sqlalchemy import func, insert, select, update

from . import checks
from .errors import StorageError, reconnecting
from .records import Poll, when
from .schema import in_current_attempt, poll_answers, polls, predictions, students


class Polls:
    def open_poll(self, class_code: str, prompt_id: str) -> int:
        """Open a poll for the class; any poll of the class still open is closed first (one at a time)."""
        code = checks.class_code(class_code, required=True)
        prompt_id = checks.item_id(prompt_id, "prompt_id")
        now = time.time()
        with self._write() as conn:
            conn.execute(update(polls).where(polls.c.class_code == code, polls.c.state == "open")
                         .values(state="closed", closed_at=now))
            return conn.execute(insert(polls).values(class_code=code, prompt_id=prompt_id, state="open",
                                                     opened_at=now).returning(polls.c.id)).scalar_one()

    def _poll(self, conn, where) -> Poll | None:
        row = conn.execute(select(polls).where(*where).order_by(polls.c.id.desc()).limit(1)).first()
        return None if row is None else Poll(row.id, row.class_code, row.prompt_id, row.state, row.measured,
                                             when(row.opened_at))

    def current_poll(self, class_code: str) -> Poll | None:
        code = checks.class_code(class_code, required=True)
        with self._read() as conn:
            return self._poll(conn, (polls.c.class_code == code, polls.c.state == "open"))

    def latest_poll(self, class_code: str) -> Poll | None:
        """The open poll, or else the one closed last (its measured value, or its failure, is what students see)."""
        code = checks.class_code(class_code, required=True)
        with self._read() as conn:
            return self._poll(conn, (polls.c.class_code == code,))

    @reconnecting
    def answer_poll(self, poll_id: int, token: str, value: float) -> None:
        """One answer per student and poll; answering again replaces it. Only students of the poll's class."""
        value, poll_id = checks.number(value, "value"), checks.row_id(poll_id, "poll_id")
        with self._write() as conn:
            token = self._known(conn, token)
            poll = conn.execute(select(polls.c.class_code, polls.c.state).where(polls.c.id == poll_id)).first()
            if poll is None:
                raise StorageError("unknown_poll")
            if poll.state != "open":
                raise StorageError("poll_closed")
            mine = conn.execute(select(students.c.class_code).where(students.c.token == token)).scalar_one()
            if mine != poll.class_code:
                raise StorageError("unknown_class")
            self._upsert(conn, poll_answers, ("poll_id", "token"),
                         {"poll_id": poll_id, "token": token, "value": value, "at": time.time()})

    def poll_values(self, poll_id: int) -> list[float]:
        poll_id = checks.row_id(poll_id, "poll_id")
        with self._read() as conn:
            return list(conn.execute(select(poll_answers.c.value).where(poll_answers.c.poll_id == poll_id)
                                     .order_by(poll_answers.c.at)).scalars())

    def close_poll(self, poll_id: int, measured: float | None = None) -> None:
        """No more answers. A poll closed already stays as it is: its measured value (or its failure) is kept, so a
        second "close and run" (a second press, a second instructor) changes nothing. With `measured`, also
        `reveal_poll`."""
        measured = None if measured is None else checks.number(measured, "measured")
        poll_id = checks.row_id(poll_id, "poll_id")
        with self._write() as conn:
            state = conn.execute(select(polls.c.state).where(polls.c.id == poll_id)).scalar()
            if state is None:
                raise StorageError("unknown_poll")
            if state == "open":
                conn.execute(update(polls).where(polls.c.id == poll_id).values(state="closed", closed_at=time.time()))
        if measured is not None:
            self.reveal_poll(poll_id, measured)

    def reveal_poll(self, poll_id: int, measured: float) -> bool:
        """Publish a poll's measured value, once: True for the call that published it, False when it had one
        already (the runs are deterministic: a second publisher has the same value). The poll is closed (a failure
        marked before is replaced by the value), and the students who answered it get the value beside their
        answer, as their prediction's measured value (the class view's predictions)."""
        measured = checks.number(measured, "measured")
        poll_id = checks.row_id(poll_id, "poll_id")
        now = time.time()
        with self._write() as conn:
            prompt_id = conn.execute(select(polls.c.prompt_id).where(polls.c.id == poll_id)).scalar()
            if prompt_id is None:
                raise StorageError("unknown_poll")
            done = conn.execute(update(polls).where(polls.c.id == poll_id, polls.c.measured.is_(None))
                                .values(state="closed", measured=measured,
                                        closed_at=func.coalesce(polls.c.closed_at, now)))
            if done.rowcount == 0:
                return False
            answered = select(poll_answers.c.token).where(poll_answers.c.poll_id == poll_id)
            conn.execute(update(predictions).values(measured=measured)
                         .where(predictions.c.prompt_id == prompt_id, predictions.c.token.in_(answered),
                                in_current_attempt(predictions, predictions.c.token)))
            return True

    def fail_poll(self, poll_id: int) -> bool:
        """The poll's runs failed (or stopped before their end): its state becomes "failed", which the students see
        instead of waiting. True when this call marked it; False when it has a measured value (or is failed)."""
        poll_id = checks.row_id(poll_id, "poll_id")
        with self._write() as conn:
            if conn.execute(select(polls.c.id).where(polls.c.id == poll_id)).first() is None:
                raise StorageError("unknown_poll")
            done = conn.execute(update(polls).where(polls.c.id == poll_id, polls.c.measured.is_(None),
                                                    polls.c.state != "failed")
                                .values(state="failed", closed_at=func.coalesce(polls.c.closed_at, time.time())))
            return done.rowcount == 1
