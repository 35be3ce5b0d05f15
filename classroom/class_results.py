"""The class's results, summed (classroom/aggregates.py): no tokens, names only when asked. A mixin of the Store."""
from sqlalchemy import func, select

from . import aggregates, checks
from .schema import students


class ClassResults:
    def _summed(self, figures, class_code: str, flag: bool, flag_name: str):
        """`figures(conn, class_code, flag)` over the class, the code and the flag checked first."""
        code, flag = checks.class_code(class_code, required=True), checks.flag(flag, flag_name)
        with self._read() as conn:
            return figures(conn, code, flag)

    def class_quiz(self, class_code: str, latest: bool = False) -> dict:
        """aggregates.class_quiz: over each student's first attempt, or (`latest`) the one they are in now."""
        return self._summed(aggregates.class_quiz, class_code, latest, "latest")

    def class_worksheets(self, class_code: str, latest: bool = False) -> dict:
        """aggregates.class_worksheets: over each student's first attempt, or (`latest`) the one they are in now."""
        return self._summed(aggregates.class_worksheets, class_code, latest, "latest")

    def class_predictions(self, class_code: str, latest: bool = False) -> dict:
        """aggregates.class_predictions: over each student's first attempt, or (`latest`) the one they are in now."""
        return self._summed(aggregates.class_predictions, class_code, latest, "latest")

    def class_attempts(self, class_code: str, show_names: bool = False) -> dict[str, tuple[int, int]]:
        return self._summed(aggregates.class_attempts, class_code, show_names, "show_names")

    def class_csv(self, class_code: str, show_names: bool = False) -> str:
        return self._summed(aggregates.class_csv, class_code, show_names, "show_names")

    def class_size(self, class_code: str) -> int:
        code = checks.class_code(class_code, required=True)
        with self._read() as conn:
            return conn.execute(select(func.count()).select_from(students)
                                .where(students.c.class_code == code)).scalar_one()
