"""The policy challenge's submissions, the class's targets and the class leaderboard. A mixin of Store (its
connections and checks).

Every submission is kept with its figures on the class's hidden seeds. The leaderboard scores them against the
class's targets as they are now (engine/lab/challenge_score.py: the instructor's, the defaults where unset; a
student's own goal never enters), and shows each student's best: the highest score, the earlier on a tie. Of the
hidden seeds' figures it gives the score alone. A student reads the scores of everyone in their class but the
policy text of no one else; the instructor reads it all.
"""
import json
import math
import time

from sqlalchemy import insert, select

from engine.lab import challenge_score

from . import checks
from .errors import StorageError
from .records import LeaderboardRow, PolicySubmission, when
from .schema import challenge_targets, policy_submissions, students

MAX_KEY = 500  # engine/policy_key.py's MAX_KEY_CHARS: a key the engine graded always fits
MAX_FIGURES = 20_000


def _figure(figures: dict, axis: str) -> float:
    value = figures.get(axis)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise StorageError("bad_value", field=axis)
    return float(value)


def _targets(conn, code: str) -> dict[str, float]:
    text = conn.execute(select(challenge_targets.c.targets).where(challenge_targets.c.class_code == code)).scalar()
    return challenge_score.targets_or_default(None if text is None else json.loads(text))


class Submissions:
    # -- the class's targets --------------------------------------------------------------------------------------

    def challenge_targets(self, class_code: str) -> dict[str, float]:
        """The class's targets, axis by axis: the instructor's, the defaults where none were set."""
        code = checks.class_code(class_code)
        with self._read() as conn:
            return _targets(conn, code)

    def set_challenge_targets(self, class_code: str, targets: dict) -> None:
        """The instructor's targets for the class: every axis, each within challenge_score.TARGET_RANGES."""
        code = checks.class_code(class_code, required=True)
        if not isinstance(targets, dict) or set(targets) != set(challenge_score.AXES):
            raise StorageError("bad_value", field="targets")
        for axis, value in targets.items():
            if challenge_score.target_refused(axis, value):
                raise StorageError("bad_value", field=axis)
        values = {"targets": json.dumps({axis: float(targets[axis]) for axis in challenge_score.AXES}),
                  "at": time.time()}
        with self._write() as conn:
            self._upsert(conn, challenge_targets, ("class_code",), {"class_code": code, **values})

    # -- submissions ----------------------------------------------------------------------------------------------

    def submit_policy(self, token: str, sub: PolicySubmission) -> int:
        """Store one graded submission (its figures must hold every axis, finite); returns its id."""
        if not isinstance(sub.figures, dict):
            raise StorageError("bad_value", field="figures")
        axes = {axis: _figure(sub.figures, axis) for axis in challenge_score.AXES}
        try:
            figures_json = json.dumps(sub.figures, allow_nan=False)
        except (TypeError, ValueError):
            raise StorageError("bad_value", field="figures") from None
        values = {"policy_key": checks.text(sub.policy_key, "policy_key", MAX_KEY),
                  "victim_key": checks.text(sub.victim_key or "", "victim_key", MAX_KEY),
                  "preemptive": checks.flag(sub.preemptive, "preemptive"),
                  "anonymous": checks.flag(sub.anonymous, "anonymous"),
                  "figures": checks.text(figures_json, "figures", MAX_FIGURES),
                  "slo_attainment": axes["slo_attainment"], "throughput_vs_fcfs": axes["throughput_vs_fcfs"],
                  "worst_class_slowdown": axes["worst_class_slowdown"], "at": time.time()}
        with self._write() as conn:
            token = self._known(conn, token)
            code = conn.execute(select(students.c.class_code).where(students.c.token == token)).scalar_one()
            # the count against the class's targets when submitted (the leaderboard scores against today's)
            values["targets_met"] = sum(challenge_score.met(axes, _targets(conn, code)).values())
            return conn.execute(insert(policy_submissions).values(token=token, **values)
                                .returning(policy_submissions.c.id)).scalar_one()

    def my_submissions(self, token: str) -> list[dict]:
        """The student's own submissions, newest first: their text and score against their class's targets now."""
        token = checks.token(token)
        with self._read() as conn:
            code = conn.execute(select(students.c.class_code).where(students.c.token == token)).scalar() or ""
            targets = _targets(conn, code)
            rows = conn.execute(select(policy_submissions).where(policy_submissions.c.token == token)
                                .order_by(policy_submissions.c.id.desc())).all()
        return [{"policy_key": r.policy_key, "victim_key": r.victim_key, "preemptive": bool(r.preemptive),
                 "score": challenge_score.score(json.loads(r.figures), targets), "at": when(r.at)} for r in rows]

    def leaderboard(self, class_code: str, viewer_token: str | None = None, instructor: bool = False,
                    limit: int = 100) -> list[LeaderboardRow]:
        """Each student's best submission in the class, best first."""
        code = checks.class_code(class_code, required=True)
        viewer = checks.token(viewer_token) if viewer_token is not None else None
        flag = checks.flag(instructor, "instructor")
        with self._read() as conn:
            targets = _targets(conn, code)
            rows = conn.execute(select(policy_submissions, students.c.name)
                                .join(students, students.c.token == policy_submissions.c.token)
                                .where(students.c.class_code == code)).all()
        best: dict[str, tuple] = {}
        for row in rows:
            ranked = (-challenge_score.score(json.loads(row.figures), targets), row.at, row.id, row)
            if row.token not in best or ranked[:3] < best[row.token][:3]:
                best[row.token] = ranked
        out = []
        for i, (neg_score, _, _, row) in enumerate(sorted(best.values(), key=lambda b: b[:3])[:limit], start=1):
            mine = viewer is not None and row.token == viewer
            visible = flag or mine
            out.append(LeaderboardRow(
                rank=i, name=None if row.anonymous else (row.name or None), score=-neg_score,
                policy_key=row.policy_key if visible else None,
                victim_key=(row.victim_key or None) if visible else None,
                preemptive=bool(row.preemptive) if visible else None, mine=mine, at=when(row.at)))
        return out
