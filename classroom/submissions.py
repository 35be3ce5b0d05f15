"""The policy challenge's submissions and the class leaderboard. A mixin of Store (its connections and checks).

Every submission is kept; the leaderboard shows each student's best (most targets met, then SLO attainment,
then throughput against FCFS, then the lowest worst-class slowdown; the earlier one on a tie). A student reads
the figures of everyone in their class but the policy text of no one else; the instructor reads it all.
"""
import json
import math
import time

from sqlalchemy import insert, select

from . import checks
from .errors import StorageError
from .records import LeaderboardRow, PolicySubmission, when
from .schema import policy_submissions, students

MAX_KEY = 500  # engine/policy_key.py's MAX_KEY_CHARS: a key the engine graded always fits
MAX_FIGURES = 20_000


def _rank(row) -> tuple:
    return (-row.targets_met, -row.slo_attainment, -row.throughput_vs_fcfs, row.worst_class_slowdown, row.at)


def _finite(value, field: str) -> float:
    value = checks.number(value, field)
    if not math.isfinite(value):
        raise StorageError("bad_value", field=field)
    return value


class Submissions:
    def submit_policy(self, token: str, sub: PolicySubmission) -> int:
        """Store one graded submission; returns its id."""
        targets_met = sub.targets_met
        try:
            figures_json = json.dumps(sub.figures, allow_nan=False)
        except (TypeError, ValueError):
            raise StorageError("bad_value", field="figures") from None
        if not isinstance(targets_met, int) or isinstance(targets_met, bool) or not 0 <= targets_met <= 16:
            raise StorageError("bad_value", field="targets_met")
        values = {"policy_key": checks.text(sub.policy_key, "policy_key", MAX_KEY),
                  "victim_key": checks.text(sub.victim_key or "", "victim_key", MAX_KEY),
                  "preemptive": checks.flag(sub.preemptive, "preemptive"),
                  "anonymous": checks.flag(sub.anonymous, "anonymous"),
                  "figures": checks.text(figures_json, "figures", MAX_FIGURES), "targets_met": targets_met,
                  "slo_attainment": _finite(sub.slo_attainment, "slo_attainment"),
                  "throughput_vs_fcfs": _finite(sub.throughput_vs_fcfs, "throughput_vs_fcfs"),
                  "worst_class_slowdown": _finite(sub.worst_class_slowdown, "worst_class_slowdown"), "at": time.time()}
        with self._write() as conn:
            token = self._known(conn, token)
            return conn.execute(insert(policy_submissions).values(token=token, **values)
                                .returning(policy_submissions.c.id)).scalar_one()

    def my_submissions(self, token: str) -> list[dict]:
        """The student's own submissions, newest first, with their text."""
        token = checks.token(token)
        with self._read() as conn:
            rows = conn.execute(select(policy_submissions).where(policy_submissions.c.token == token)
                                .order_by(policy_submissions.c.id.desc())).all()
        return [{"policy_key": r.policy_key, "victim_key": r.victim_key, "preemptive": bool(r.preemptive),
                 "figures": json.loads(r.figures), "targets_met": r.targets_met, "at": when(r.at)} for r in rows]

    def leaderboard(self, class_code: str, viewer_token: str | None = None, instructor: bool = False,
                    limit: int = 100) -> list[LeaderboardRow]:
        """Each student's best submission in the class, best first."""
        code = checks.class_code(class_code, required=True)
        viewer = checks.token(viewer_token) if viewer_token is not None else None
        flag = checks.flag(instructor, "instructor")
        with self._read() as conn:
            rows = conn.execute(select(policy_submissions, students.c.name)
                                .join(students, students.c.token == policy_submissions.c.token)
                                .where(students.c.class_code == code)).all()
        best: dict[str, object] = {}
        for row in rows:
            if row.token not in best or _rank(row) < _rank(best[row.token]):
                best[row.token] = row
        ranked = sorted(best.values(), key=_rank)[:limit]
        out = []
        for i, row in enumerate(ranked, start=1):
            mine = viewer is not None and row.token == viewer
            visible = flag or mine
            out.append(LeaderboardRow(
                rank=i, name=None if row.anonymous else (row.name or None), figures=json.loads(row.figures),
                targets_met=row.targets_met, slo_attainment=row.slo_attainment,
                throughput_vs_fcfs=row.throughput_vs_fcfs, worst_class_slowdown=row.worst_class_slowdown,
                policy_key=row.policy_key if visible else None,
                victim_key=(row.victim_key or None) if visible else None,
                preemptive=bool(row.preemptive) if visible else None, mine=mine, at=when(row.at)))
        return out
