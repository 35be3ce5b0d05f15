"""The policy challenge's pace: how often a graded submission may be asked for, counted in the database so that
parallel sessions and replicas share one count. A mixin of Store (its connections).

The rule: one graded submission per student every SUBMIT_GAP_S seconds, and at most CLASS_PER_HOUR in any hour
for a class together (new tokens in the class add no graded submissions). A claim is taken before the grading, in
one transaction with the count, and stays whatever the grading gives: a second session cannot slip in between.
"""
import time

from sqlalchemy import delete, func, insert, select

from . import checks
from .schema import challenge_claims, students

SUBMIT_GAP_S = 180.0
CLASS_PER_HOUR = 120
HOUR_S = 3600.0
_CLAIMS_LOCK = 0x5E5A_0002  # PostgreSQL advisory lock: one claim is counted and taken at a time


class ChallengePace:
    def claim_submission(self, token: str, now: float | None = None) -> float:
        """Take a graded submission for the student if the pace allows: 0.0 when taken, else the seconds until
        one would be (nothing is taken then)."""
        now = time.time() if now is None else checks.number(now, "now")
        with self._write() as conn:  # SQLite: BEGIN IMMEDIATE, one writer at a time
            if self.dialect == "postgresql":
                conn.execute(select(func.pg_advisory_xact_lock(_CLAIMS_LOCK)))
            token = self._known(conn, token)
            code = conn.execute(select(students.c.class_code).where(students.c.token == token)).scalar_one()
            conn.execute(delete(challenge_claims).where(challenge_claims.c.at <= now - HOUR_S))
            last = conn.execute(select(func.max(challenge_claims.c.at))
                                .where(challenge_claims.c.token == token)).scalar()
            wait = 0.0 if last is None else last + SUBMIT_GAP_S - now
            in_class = conn.execute(select(challenge_claims.c.at).where(challenge_claims.c.class_code == code)
                                    .order_by(challenge_claims.c.at.desc()).limit(CLASS_PER_HOUR)).scalars().all()
            if len(in_class) >= CLASS_PER_HOUR:  # the oldest of the last CLASS_PER_HOUR must leave the hour first
                wait = max(wait, in_class[-1] + HOUR_S - now)
            if wait > 0:
                return wait
            conn.execute(insert(challenge_claims).values(token=token, class_code=code, at=now))
            return 0.0
