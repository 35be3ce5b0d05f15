"""The classroom's storage: students, their progress, live polls. SQLAlchemy Core, so one URL picks the database:
SQLite by default (one file, WAL, many sessions of one server), PostgreSQL for several replicas behind a balancer.

Thread-safe: the Engine's pool hands each call its own connection, and every write is one transaction.

Losing the database under a running app is noticed, never written past:
- a SQLite file deleted or replaced (another inode at the path) is seen before each read and write; the store
  opens whatever is at the path now (a new empty database if nothing is), exactly as a restart would, and the
  write that saw it raises StorageError("replaced"). `epoch` changes with every such reopening: a session holding
  progress compares it and writes its progress again (classroom/outbox.py), so the new file gets the students
  who are still working, and a restart finds them.
- a dropped connection (PostgreSQL restarted or stopped): the pool pings each connection before use, an idempotent
  write whose connection died under it is tried once more on a fresh one, and an unreachable server is
  StorageError("unavailable"), which the session's outbox retries later.
"""
import json
import os
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, event, insert, make_url, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from . import checks, migrate
from .attempts import Attempts
from .challenge_pace import ChallengePace
from .class_results import ClassResults
from .errors import StorageError, reconnecting
from .instructors import InstructorSessions
from .polls import Polls
from .reviews import Reviews
from .submissions import Submissions
from .records import Grading, Prediction, QuizAnswer, Student, when
from .schema import (SCHEMA_VERSION, drafts, gradings, in_current_attempt, metadata, milestones, predictions,
                     quiz_answers, schema_meta, students)

BUSY_TIMEOUT_MS = 10_000
CONNECT_TIMEOUT_S = 3  # a server that does not answer: every page that writes would wait this long
CLOSE_WAIT_S = 5  # how long a reopening waits for the old file's connections to finish their transaction


def new_token() -> str:
    """A new student's token: random, URL-safe, TOKEN_LEN characters."""
    return secrets.token_urlsafe(16)


def _identity(path: str | None) -> tuple[int, int] | None:
    """Which file is at `path` (device, inode); None when there is none."""
    try:
        st = os.stat(path)
    except (OSError, TypeError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _set_aside(path: str) -> None:
    """The old file's "-wal" and "-shm", which SQLite leaves at the path when the database file moved (it neither
    checkpoints nor deletes them then): the next connection would read the old file's pages from that WAL into
    the new file. The index goes; the WAL, the old file's last commits, is kept beside it under another name."""
    wal, shm = f"{path}-wal", f"{path}-shm"
    try:
        if os.path.getsize(wal):
            os.replace(wal, f"{wal}.orphaned-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}")
        else:
            os.remove(wal)
    except FileNotFoundError:
        pass
    try:
        os.remove(shm)
    except FileNotFoundError:
        pass


def _unavailable(exc: SQLAlchemyError) -> StorageError:
    err = StorageError("unavailable", detail=str(getattr(exc, "orig", None) or exc))
    err.reconnect = isinstance(exc, DBAPIError) and exc.connection_invalidated
    return err


def _sqlite_pragmas(engine) -> None:
    """WAL lets readers run beside a writer; the busy timeout makes a second writer wait instead of failing.
    BEGIN IMMEDIATE for writes: a deferred transaction that reads, then writes, can hit SQLITE_BUSY at once
    (a lock upgrade is never retried), so writers take the write lock before their first read."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None  # SQLAlchemy's begin event below issues BEGIN itself
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")  # in WAL mode still safe from corruption; no fsync per commit
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("write") else "BEGIN")


class Store(Attempts, ClassResults, Reviews, Submissions, ChallengePace, InstructorSessions, Polls):
    """One per process (see classroom.get_store). Every refused input raises StorageError(code, **params)."""

    schema_version = SCHEMA_VERSION

    def __init__(self, url: str):
        self.url = url
        self._path: str | None = None  # the SQLite file; None for a server database
        self._reopen_lock = threading.Lock()
        try:
            parsed = make_url(url)
            if parsed.get_backend_name() == "sqlite":
                if parsed.database in (None, "", ":memory:"):
                    # each pooled connection would get a database of its own: sessions would not share progress
                    raise StorageError("unavailable", detail="an in-memory SQLite database; name a file")
                self._path = os.path.abspath(parsed.database)
            self._engine = self._new_engine(parsed)
        except (SQLAlchemyError, ImportError, ValueError) as exc:
            raise StorageError("unavailable", detail=str(exc)) from None
        self.dialect = self._engine.dialect.name
        self._open()
        self._file = _identity(self._path)
        self.epoch = secrets.token_hex(8)  # changes when the SQLite file is opened anew (see check)

    # -- plumbing ---------------------------------------------------------------------------------------------

    def _new_engine(self, url):
        connect_args = {"connect_timeout": CONNECT_TIMEOUT_S} if url.get_backend_name() == "postgresql" else {}
        engine = create_engine(url, pool_pre_ping=True, pool_size=8, max_overflow=32, connect_args=connect_args)
        if engine.dialect.name == "sqlite":
            _sqlite_pragmas(engine)
        return engine

    def check(self) -> bool:
        """Is the SQLite file the one opened? If it was deleted or replaced, open what is at the path now (a new,
        empty database where nothing is) and return False: this is what a restart would open, so writes from now
        on are where a restart finds them. Raises StorageError when the new file cannot be opened."""
        if self._path is None or _identity(self._path) == self._file:
            return True
        with self._reopen_lock:
            if _identity(self._path) == self._file:  # another thread reopened it meanwhile
                return False
            old = self._engine
            # the old file's connections finish their transaction first, so that dispose closes them all and the
            # old WAL is complete when it is set aside (a transaction is short; one that hangs is not waited for)
            deadline = time.monotonic() + CLOSE_WAIT_S
            while old.pool.checkedout() and time.monotonic() < deadline:
                time.sleep(0.01)
            old.dispose()
            _set_aside(self._path)
            self._engine = self._new_engine(make_url(self.url))
            self._open()
            self._file = _identity(self._path)
            self.epoch = secrets.token_hex(8)
        return False

    @contextmanager
    def _write(self, checked: bool = True) -> Iterator:
        if checked and not self.check():  # never into a deleted file: the caller writes its progress again
            raise StorageError("replaced", path=self._path)
        try:
            with self._engine.connect() as conn:
                conn.execution_options(write=True)
                with conn.begin():
                    yield conn
        except SQLAlchemyError as exc:  # a value the checks let through but the driver refuses: never a bare error
            raise _unavailable(exc) from None

    @contextmanager
    def _read(self) -> Iterator:
        self.check()  # a replaced file is read from the new one
        try:
            with self._engine.connect() as conn:
                yield conn
        except SQLAlchemyError as exc:  # a value the checks let through but the driver refuses: never a bare error
            raise _unavailable(exc) from None

    def _insert(self, table):
        return (postgresql.insert if self.dialect == "postgresql" else sqlite.insert)(table)

    def _upsert(self, conn, table, key: tuple[str, ...], values: dict) -> None:
        stmt = self._insert(table).values(**values)
        changed = {k: stmt.excluded[k] for k in values if k not in key}
        conn.execute(stmt.on_conflict_do_update(index_elements=list(key), set_=changed))

    def _open(self) -> None:
        with self._write(checked=False) as conn:
            metadata.create_all(conn)
            # the row locked (PostgreSQL): a second replica opening an old database waits for this one's upgrade
            found = conn.execute(select(schema_meta.c.version).where(schema_meta.c.id == 1).with_for_update()).scalar()
            if found is None:
                conn.execute(self._insert(schema_meta).values(id=1, version=SCHEMA_VERSION)
                             .on_conflict_do_nothing(index_elements=["id"]))
            elif found > SCHEMA_VERSION:
                raise StorageError("newer_schema", found=found, supported=SCHEMA_VERSION)
            elif found < SCHEMA_VERSION:  # 2, 3, 4 and 6 only added tables, which create_all has just made
                if found < 5:
                    migrate.to_v5(conn)
                conn.execute(update(schema_meta).where(schema_meta.c.id == 1).values(version=SCHEMA_VERSION))

    def _known(self, conn, token: str) -> str:
        token = checks.token(token)
        if conn.execute(select(students.c.token).where(students.c.token == token)).first() is None:
            raise StorageError("unknown_student")
        return token

    def close(self) -> None:
        self._engine.dispose()

    # -- students ---------------------------------------------------------------------------------------------

    def new_student(self, name: str = "", class_code: str = "") -> str:
        row = {"name": checks.name(name), "class_code": checks.class_code(class_code), "created": time.time()}
        token = new_token()
        with self._write() as conn:
            conn.execute(insert(students).values(token=token, **row))
        return token

    @reconnecting
    def ensure_student(self, token: str, name: str = "", class_code: str = "", created: float | None = None) -> None:
        """The student `token` (made by new_token), with this name and class code; a student who exists already
        stays as they are. A session's first write, and the first again when the database lost its students."""
        row = {"name": checks.name(name), "class_code": checks.class_code(class_code),
               "created": time.time() if created is None else checks.number(created, "created")}
        token = checks.token(token)
        with self._write() as conn:
            conn.execute(self._insert(students).values(token=token, **row)
                         .on_conflict_do_nothing(index_elements=["token"]))

    def student(self, token: str) -> Student | None:
        token = checks.token(token)
        with self._read() as conn:
            row = conn.execute(select(students).where(students.c.token == token)).first()
        return None if row is None else Student(row.token, row.name, row.class_code, when(row.created), row.attempt,
                                                row.quiz_attempt)

    @reconnecting
    def update_student(self, token: str, name: str, class_code: str) -> None:
        values = {"name": checks.name(name), "class_code": checks.class_code(class_code)}
        with self._write() as conn:
            token = self._known(conn, token)
            conn.execute(update(students).where(students.c.token == token).values(**values))

    # -- quiz -------------------------------------------------------------------------------------------------

    @reconnecting
    def record_answer(self, token: str, question_id: str, answer, try_no: int, correct: bool,
                      quiz_attempt: int | None = None) -> None:
        """One row per (student, quiz attempt, question, try): submitting the same try again changes nothing."""
        values = {"question_id": checks.item_id(question_id, "question_id"), "try_no": checks.try_no(try_no),
                  "answer": checks.answer_json(answer), "correct": checks.flag(correct, "correct"), "at": time.time()}
        with self._write() as conn:
            token, quiz_attempt = self._in_attempt(conn, token, quiz_attempt, quiz=True)
            conn.execute(self._insert(quiz_answers).values(token=token, quiz_attempt=quiz_attempt, **values)
                         .on_conflict_do_nothing(index_elements=["token", "quiz_attempt", "question_id", "try_no"]))

    def quiz_answers(self, token: str) -> list[QuizAnswer]:
        """The tries of the student's current quiz attempt."""
        token = checks.token(token)
        with self._read() as conn:
            rows = conn.execute(select(quiz_answers).where(in_current_attempt(quiz_answers, token))
                                .order_by(quiz_answers.c.at, quiz_answers.c.question_id, quiz_answers.c.try_no)).all()
        return [QuizAnswer(r.question_id, json.loads(r.answer), r.try_no, bool(r.correct), when(r.at)) for r in rows]

    # -- worksheets -------------------------------------------------------------------------------------------

    @reconnecting
    def save_draft(self, token: str, task_id: str, field_id: str, text: str, attempt: int | None = None) -> None:
        values = {"task_id": checks.item_id(task_id, "task_id"), "field_id": checks.item_id(field_id, "field_id"),
                  "text": checks.text(text, "text"), "at": time.time()}
        with self._write() as conn:
            token, attempt = self._in_attempt(conn, token, attempt)
            self._upsert(conn, drafts, ("token", "attempt", "task_id", "field_id"),
                         {"token": token, "attempt": attempt, **values})

    def drafts(self, token: str) -> dict[str, dict[str, str]]:
        """The current attempt's worksheet answers: task id -> field id -> text."""
        token = checks.token(token)
        with self._read() as conn:
            rows = conn.execute(select(drafts.c.task_id, drafts.c.field_id, drafts.c.text)
                                .where(in_current_attempt(drafts, token))).all()
        out: dict[str, dict[str, str]] = {}
        for task_id, field_id, text in rows:
            out.setdefault(task_id, {})[field_id] = text
        return out

    @reconnecting
    def record_grading(self, token: str, task_id: str, passed: bool, criteria: dict[str, bool],
                       attempt: int | None = None) -> None:
        values = {"task_id": checks.item_id(task_id, "task_id"), "passed": checks.flag(passed, "passed"),
                  "criteria": checks.criteria_json(criteria), "at": time.time()}
        with self._write() as conn:
            token, attempt = self._in_attempt(conn, token, attempt)
            self._upsert(conn, gradings, ("token", "attempt", "task_id"),
                         {"token": token, "attempt": attempt, **values})

    def gradings(self, token: str) -> dict[str, Grading]:
        """The current attempt's worksheet gradings, by task id."""
        token = checks.token(token)
        with self._read() as conn:
            rows = conn.execute(select(gradings).where(in_current_attempt(gradings, token))).all()
        return {r.task_id: Grading(r.task_id, bool(r.passed), json.loads(r.criteria), when(r.at)) for r in rows}

    # -- predictions ------------------------------------------------------------------------------------------

    @reconnecting
    def record_prediction(self, token: str, prompt_id: str, value: float, measured: float | None = None,
                          attempt: int | None = None) -> None:
        values = {"prompt_id": checks.item_id(prompt_id, "prompt_id"), "value": checks.number(value, "value"),
                  "measured": None if measured is None else checks.number(measured, "measured"), "at": time.time()}
        with self._write() as conn:
            token, attempt = self._in_attempt(conn, token, attempt)
            self._upsert(conn, predictions, ("token", "attempt", "prompt_id"),
                         {"token": token, "attempt": attempt, **values})

    @reconnecting
    def set_measured(self, token: str, prompt_id: str, measured: float, attempt: int | None = None) -> None:
        prompt_id = checks.item_id(prompt_id, "prompt_id")
        measured = checks.number(measured, "measured")
        with self._write() as conn:
            token, attempt = self._in_attempt(conn, token, attempt)
            conn.execute(update(predictions).values(measured=measured)
                         .where(predictions.c.token == token, predictions.c.attempt == attempt,
                                predictions.c.prompt_id == prompt_id))

    def predictions(self, token: str) -> dict[str, Prediction]:
        """The current attempt's predictions, by prompt id."""
        token = checks.token(token)
        with self._read() as conn:
            rows = conn.execute(select(predictions).where(in_current_attempt(predictions, token))).all()
        return {r.prompt_id: Prediction(r.prompt_id, r.value, r.measured, when(r.at)) for r in rows}

    # -- milestones -------------------------------------------------------------------------------------------

    @reconnecting
    def reach_milestone(self, token: str, milestone_id: str, attempt: int | None = None) -> None:
        milestone_id = checks.item_id(milestone_id, "milestone_id")
        with self._write() as conn:
            token, attempt = self._in_attempt(conn, token, attempt)
            conn.execute(self._insert(milestones).values(token=token, attempt=attempt, milestone_id=milestone_id,
                                                         at=time.time())
                         .on_conflict_do_nothing(index_elements=["token", "attempt", "milestone_id"]))

    def milestones(self, token: str) -> set[str]:
        """The milestones reached in the current attempt."""
        token = checks.token(token)
        with self._read() as conn:
            return set(conn.execute(select(milestones.c.milestone_id)
                                    .where(in_current_attempt(milestones, token))).scalars())


_lock = threading.Lock()
_stores: dict[str, Store] = {}


def get_store(url: str | None = None) -> Store:
    """The process's Store for SERVING_LAB_DB (or the default file), opened once and shared by every session."""
    from . import database_url
    url = url or database_url()
    with _lock:
        if url not in _stores:
            _stores[url] = Store(url)
        return _stores[url]
