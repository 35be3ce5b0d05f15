"""Every input is checked here before it reaches SQL; a refusal is a StorageError with a code, never a half write."""
import json
import math
import re
import unicodedata

from .errors import StorageError
from .schema import ID_LEN, TOKEN_LEN

MAX_TEXT = 5_000  # characters of free text (worksheet answers, quiz answers as JSON)
MAX_NAME = 80
MAX_CLASS_CODE = 40
MAX_TRY = 9
MAX_ATTEMPT = 10_000  # a student's attempts (start over, a new quiz attempt): far more than anyone makes
MAX_JSON_DEPTH = 16  # a quiz answer is a value, a list or a dict of values: deeper is not an answer
MAX_ROW_ID = 2 ** 63 - 1  # a poll id is a 64-bit integer in both databases

_TOKEN = re.compile(rf"[A-Za-z0-9_-]{{{TOKEN_LEN}}}")
_ID = re.compile(r"[\w.:/-]+")  # lesson ids: q-static-01, task.paged:2, ...


def is_token(value) -> bool:
    return isinstance(value, str) and _TOKEN.fullmatch(value) is not None


def token(value) -> str:
    if not is_token(value):
        raise StorageError("bad_token")
    return value


def text(value, field: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise StorageError("bad_value", field=field)
    if len(value) > limit:
        raise StorageError("too_long", field=field, limit=limit, length=len(value))
    if "\x00" in value:  # PostgreSQL refuses NUL in text; SQLite would keep it: refuse it on both
        raise StorageError("bad_value", field=field)
    try:  # a lone surrogate ("\ud800") is a str but not UTF-8: the driver would fail on it mid-write
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise StorageError("bad_value", field=field) from None
    return value


def name(value) -> str:
    value = text(value, "name", MAX_NAME).strip()
    if any(unicodedata.category(ch).startswith("C") for ch in value):
        raise StorageError("bad_value", field="name")
    return value


def class_code(value, *, required: bool = False) -> str:
    value = text(value, "class_code", MAX_CLASS_CODE).strip()
    if (required or value) and not re.fullmatch(r"[\w-]+", value):
        raise StorageError("bad_value", field="class_code")
    return value


def item_id(value, field: str) -> str:
    if not isinstance(value, str) or not _ID.fullmatch(value) or len(value) > ID_LEN:
        raise StorageError("bad_value", field=field)
    return value


def number(value, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise StorageError("bad_value", field=field)
    try:  # an int of 400 digits is no float
        value = float(value)
    except OverflowError:
        raise StorageError("bad_value", field=field) from None
    if not math.isfinite(value):
        raise StorageError("bad_value", field=field)
    return value


def row_id(value, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ROW_ID:
        raise StorageError("bad_value", field=field)
    return value


def _depth(value, limit: int) -> bool:
    """True when `value` nests no deeper than `limit` (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            if depth > limit:
                return False
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return True


def flag(value, field: str) -> bool:
    if not isinstance(value, bool):
        raise StorageError("bad_value", field=field)
    return value


def try_no(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TRY:
        raise StorageError("bad_value", field="try_no")
    return value


def attempt(value, field: str = "attempt") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ATTEMPT:
        raise StorageError("bad_value", field=field)
    return value


def answer_json(value) -> str:
    if not _depth(value, MAX_JSON_DEPTH):
        raise StorageError("bad_value", field="answer")
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        raise StorageError("bad_value", field="answer") from None
    return text(encoded, "answer")


def criteria_json(value) -> str:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, bool) for k, v in value.items()):
        raise StorageError("bad_value", field="criteria")
    return text(json.dumps(value, ensure_ascii=False, sort_keys=True), "criteria")
