"""The instructor passcode: from the environment (SERVING_LAB_PASSCODE) or .streamlit/secrets.toml
(`instructor_passcode`). Streamlit-free, so `python -m ui.serve --class` can check it before the server starts.

The file is read directly rather than through st.secrets: st.secrets also reads the user's home folder and
needs a running script, and the server must decide before any script runs."""
from __future__ import annotations

import hmac
import os
import tomllib
from pathlib import Path

ENV = "SERVING_LAB_PASSCODE"
SECRETS = Path(__file__).resolve().parents[2] / ".streamlit" / "secrets.toml"
SECRETS_KEY = "instructor_passcode"


def configured() -> str | None:
    """The passcode, or None when none is set (an empty value counts as none)."""
    value = os.environ.get(ENV, "").strip()
    if not value and SECRETS.is_file():
        try:
            value = str(tomllib.loads(SECRETS.read_text(encoding="utf-8")).get(SECRETS_KEY, "")).strip()
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
            value = ""
    return value or None


def matches(given: str) -> bool:
    """True when a passcode is configured and `given` is it; compared in constant time."""
    expected = configured()
    if expected is None or not isinstance(given, str):
        return False
    return hmac.compare_digest(given.strip().encode("utf-8"), expected.encode("utf-8"))
