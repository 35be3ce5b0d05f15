"""The instructor's sessions and the wrong passcodes, kept in the database so every replica behind a balancer
shares them. A mixin of Store (its connections). The passcode itself is never given to the store: a session
row holds a caller's fingerprint of it, and the failures only keys and times."""
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable, Iterable

from sqlalchemy import delete, func, insert, select, update

from . import checks
from .records import InstructorSession, when
from .schema import ID_LEN, instructor_sessions, passcode_failures, server_secrets

INSTRUCTOR_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)
FAILURES_KEPT_S = 3600.0  # longer than any window a caller counts over; older failures are deleted
_ATTEMPTS_LOCK = 0x5E5A_0001  # PostgreSQL advisory lock: one passcode attempt is claimed at a time


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


class InstructorSessions:
    # -- server secrets -----------------------------------------------------------------------------------------

    def server_secret(self, name: str) -> str:
        """A random value made by the first replica that asks, the same for all after (kept in the database)."""
        cached = self.__dict__.setdefault("_secrets", {})
        if name not in cached:
            with self._write() as conn:
                conn.execute(self._insert(server_secrets).values(name=name, value=secrets.token_urlsafe(32))
                             .on_conflict_do_nothing(index_elements=["name"]))
                cached[name] = conn.execute(select(server_secrets.c.value)
                                            .where(server_secrets.c.name == name)).scalar_one()
        return cached[name]

    # -- instructor sessions ------------------------------------------------------------------------------------

    def new_instructor_session(self, class_code: str, fingerprint: str, max_age_s: float,
                               now: float | None = None) -> str:
        """A new random token for a browser; only its hash is stored. Expired sessions are deleted here."""
        now = time.time() if now is None else now
        code = checks.class_code(class_code)
        token = secrets.token_urlsafe(32)
        with self._write() as conn:
            conn.execute(delete(instructor_sessions).where(instructor_sessions.c.expires <= now))
            conn.execute(insert(instructor_sessions).values(
                token_hash=token_hash(token), class_code=code, fingerprint=checks.text(fingerprint, "fingerprint", 128),
                created=now, expires=now + max_age_s, revoked=False))
        return token

    def instructor_session(self, token, fingerprint: str, now: float | None = None) -> InstructorSession | None:
        """The session of this token, or None: unknown (any altered byte), revoked, expired, or opened with
        another passcode than the one `fingerprint` is of."""
        if not isinstance(token, str) or not INSTRUCTOR_TOKEN.fullmatch(token):
            return None
        now = time.time() if now is None else now
        with self._read() as conn:
            row = conn.execute(select(instructor_sessions)
                               .where(instructor_sessions.c.token_hash == token_hash(token))).first()
        if row is None or row.revoked or row.expires <= now or not hmac.compare_digest(row.fingerprint, fingerprint):
            return None
        return InstructorSession(row.class_code, when(row.created), when(row.expires))

    def set_instructor_class(self, token: str, class_code: str) -> None:
        """The class this session looks at (a browser's next session opens on it)."""
        code = checks.class_code(class_code)
        if isinstance(token, str) and INSTRUCTOR_TOKEN.fullmatch(token):
            with self._write() as conn:
                conn.execute(update(instructor_sessions).values(class_code=code)
                             .where(instructor_sessions.c.token_hash == token_hash(token)))

    def revoke_instructor_session(self, token: str) -> None:
        if isinstance(token, str) and INSTRUCTOR_TOKEN.fullmatch(token):
            with self._write() as conn:
                conn.execute(update(instructor_sessions).values(revoked=True)
                             .where(instructor_sessions.c.token_hash == token_hash(token)))

    def revoke_instructor_sessions(self) -> int:
        """Every instructor session, in every browser; how many were still open."""
        with self._write() as conn:
            return conn.execute(update(instructor_sessions).values(revoked=True)
                                .where(instructor_sessions.c.revoked.is_(False))).rowcount

    # -- wrong passcodes ----------------------------------------------------------------------------------------

    def _keys(self, keys: Iterable[str]) -> list[str]:
        return [checks.text(k, "key", ID_LEN) for k in keys]

    def _failures(self, conn, keys: list[str], since: float) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {k: [] for k in keys}
        rows = conn.execute(select(passcode_failures.c.key, passcode_failures.c.at)
                            .where(passcode_failures.c.key.in_(keys), passcode_failures.c.at > since)
                            .order_by(passcode_failures.c.at, passcode_failures.c.id)).all()
        for key, at in rows:
            out[key].append(at)
        return out

    def passcode_failures(self, keys: Iterable[str], since: float) -> dict[str, list[float]]:
        """key -> the times of its failures after `since`, oldest first (every key asked for is there)."""
        keys = self._keys(keys)
        with self._read() as conn:
            return self._failures(conn, keys, since)

    def record_passcode_failure(self, keys: Iterable[str], at: float) -> str:
        """One failure for each key at `at`; the attempt's id (see forget_passcode_failures)."""
        keys = self._keys(keys)
        with self._write() as conn:
            return self._record(conn, keys, at)

    def _record(self, conn, keys: list[str], at: float) -> str:
        attempt = secrets.token_hex(8)
        conn.execute(delete(passcode_failures).where(passcode_failures.c.at < at - FAILURES_KEPT_S))
        conn.execute(insert(passcode_failures), [{"attempt": attempt, "key": k, "at": at} for k in keys])
        return attempt

    def claim_passcode_check(self, keys: Iterable[str], since: float, at: float,
                             wait_for: Callable[[dict[str, list[float]]], float]) -> tuple[float, str | None]:
        """Atomically, across every replica: the failures of `keys` after `since`; when `wait_for(failures)` is 0 the
        attempt is recorded as a failure at `at` (before its check, so that parallel attempts already count it) and
        its id returned, else (the seconds to wait, None). A right passcode takes its record back afterwards."""
        keys = self._keys(keys)
        with self._write() as conn:  # SQLite: BEGIN IMMEDIATE, one writer at a time
            if self.dialect == "postgresql":
                conn.execute(select(func.pg_advisory_xact_lock(_ATTEMPTS_LOCK)))
            wait = wait_for(self._failures(conn, keys, since))
            if wait > 0:
                return wait, None
            return 0.0, self._record(conn, keys, at)

    def forget_passcode_failures(self, attempt: str | None = None, key: str | None = None) -> None:
        """Delete the failures of one attempt, and every failure of `key` (a session that got the passcode right)."""
        with self._write() as conn:
            if attempt is not None:
                conn.execute(delete(passcode_failures).where(passcode_failures.c.attempt == attempt))
            if key is not None:
                conn.execute(delete(passcode_failures).where(passcode_failures.c.key == key))
