"""A student's attempts: "start over" and a new quiz attempt open the next one, and every earlier one is kept as it
was (the class view's first attempts never change). A mixin of Store (it uses the store's connections and checks).

Each write of the student's progress goes into one attempt: the one it names (a write that waited in the session's
outbox lands in the attempt it was made in), or the current one. Reads give the current attempt's records."""
from sqlalchemy import select, update

from . import checks
from .errors import StorageError, reconnecting
from .schema import students


class Attempts:
    @reconnecting
    def start_over(self, token: str, attempt: int | None = None, quiz_attempt: int | None = None) -> None:
        """Open a new attempt: the student's pages show its records (none yet), and every earlier attempt is kept
        as it was. `attempt` and `quiz_attempt` name the attempts to open; an attempt opened already stays, so
        sending the same call again changes nothing (the session's outbox always names them). None: the next one."""
        self._open_attempts(token, attempt=attempt, quiz_attempt=quiz_attempt)

    def _open_attempts(self, token: str, **wanted: int | None) -> None:
        """students.<column> = max(now, wanted) for each column named; None: the one after now."""
        with self._write() as conn:
            token = self._known(conn, token)
            now = conn.execute(select(*(students.c[c] for c in wanted)).where(students.c.token == token)).one()
            values = {c: now[i] + 1 if n is None else max(now[i], checks.attempt(n, c))
                      for i, (c, n) in enumerate(wanted.items())}
            conn.execute(update(students).where(students.c.token == token).values(**values))

    @reconnecting
    def clear_quiz(self, token: str, quiz_attempt: int | None = None) -> None:
        """A new quiz attempt (`quiz_attempt`, the next one when None): the quiz shows its tries (none yet); the
        tries of every earlier one are kept, and the rest of the progress stays as it is."""
        self._open_attempts(token, quiz_attempt=quiz_attempt)

    def _in_attempt(self, conn, token: str, attempt: int | None, quiz: bool = False) -> tuple[str, int]:
        """The student's token and the attempt a write of theirs goes into: `attempt` as given (a queued write
        lands in the attempt it was made in, whatever came since), or the current one when None. An attempt not
        opened yet is refused: start_over or clear_quiz opens it first."""
        token = checks.token(token)
        column = students.c.quiz_attempt if quiz else students.c.attempt
        current = conn.execute(select(column).where(students.c.token == token)).scalar()
        if current is None:
            raise StorageError("unknown_student")
        if attempt is None:
            return token, current
        if checks.attempt(attempt) > current:
            raise StorageError("bad_value", field="attempt")
        return token, attempt
