"""JSON from outside (an HTTP body, a trace's line), parsed so that no input can raise anything but JSONInputError.

Python's json module turns a 5,000-digit integer into a ValueError it does not document, JSON nested 10,000
deep into a RecursionError, takes NaN and Infinity (not JSON), and keeps a lone surrogate ("\\ud800") that
fails later, when the text is encoded. pydantic-core's parser (jiter) refuses all four with one ValueError
and a position: nesting beyond its recursion limit, integers beyond Python's digit limit, NaN, and escapes
that are not a Unicode character.
"""
from __future__ import annotations

import math
import re

import pydantic_core

MAX_JSON_DEPTH = 200  # jiter's recursion limit: deeper input is refused, not recursed into


class JSONInputError(ValueError):
    def __init__(self, detail: str, column: int | None):
        super().__init__(detail)
        self.detail, self.column = detail, column


def loads(data: str | bytes):
    """The decoded value; JSONInputError (with the column, when the parser gives one) for anything else."""
    try:
        value = pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError as e:
        found = re.search(r"column (\d+)", str(e))
        detail = re.sub(r" at line \d+ column \d+$", "", str(e))
        raise JSONInputError(detail, int(found.group(1)) if found else None) from None
    if isinstance(value, float) and not math.isfinite(value):  # 1e400 parses to inf
        raise JSONInputError("a number out of range", None)
    return value
