"""The classroom: students' progress that survives a reload, and the class's results for the instructor.

Streamlit-free; `ui/` and `pages/` import it. SERVING_LAB_DB picks the database (any SQLAlchemy URL);
by default a SQLite file, data/serving-lab.db at the repository root.
"""
import os
from pathlib import Path

from .checks import MAX_TEXT, class_code, is_token
from .errors import StorageError
from .records import (Grading, InstructorSession, LeaderboardRow, Mark, PolicySubmission, Poll, Prediction, QuizAnswer,
                      Student)
from .store import Store, get_store, new_token

DEFAULT_DB = Path(__file__).resolve().parent.parent / "data" / "serving-lab.db"


def database_url() -> str:
    url = os.environ.get("SERVING_LAB_DB", "").strip()
    if url:
        return url if "://" in url else f"sqlite:///{Path(url).resolve()}"  # a bare path means a SQLite file
    DEFAULT_DB.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{DEFAULT_DB}"


__all__ = ["MAX_TEXT", "Grading", "InstructorSession", "LeaderboardRow", "Mark", "PolicySubmission", "Poll",
           "Prediction", "QuizAnswer", "StorageError", "Store", "Student", "class_code", "database_url", "get_store",
           "is_token", "new_token"]
