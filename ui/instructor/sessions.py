"""The instructor's sessions: a random token per browser, kept in the store as a hash, with the class and a
fingerprint of the passcode it was opened with. Streamlit-free (ui.instructor.access keeps the token in the
session and the browser's cookie).

The cookie is the bare token, unsigned: 256 random bits that are valid only while the store has their hash, so an
altered or made-up value finds no row, and there is no key to keep or leak. Nothing in it is derived from the
passcode. The fingerprint is PBKDF2 with a salt the store makes once for every replica: a new passcode no longer
matches the fingerprint of any open session, which ends them all, and a copy of the database does not hand out the
passcode at the speed of a plain hash."""
from __future__ import annotations

import hashlib

from classroom import InstructorSession, Store
from ui.instructor import passcode

MAX_AGE_S = 12 * 3600  # a day's teaching at most, however long the browser stays open
SALT = "passcode-fingerprint"
ITERATIONS = 200_000  # about 0.1 s, once per process and passcode
_fingerprints: dict[tuple[str, str], str] = {}


def fingerprint(db: Store, code: str) -> str:
    key = (db.url, code)
    if key not in _fingerprints:
        salt = db.server_secret(SALT).encode()
        _fingerprints[key] = hashlib.pbkdf2_hmac("sha256", code.encode("utf-8"), salt, ITERATIONS).hex()
    return _fingerprints[key]


def issue(db: Store, class_code: str = "", now: float | None = None) -> str | None:
    """A new session's token (for the cookie), or None when no passcode is configured."""
    code = passcode.configured()
    if code is None:
        return None
    return db.new_instructor_session(class_code, fingerprint(db, code), MAX_AGE_S, now=now)


def valid(db: Store, token, now: float | None = None) -> InstructorSession | None:
    """The session of `token` when the store has it open, unexpired, and opened with today's passcode."""
    code = passcode.configured()
    if code is None or not token:
        return None
    return db.instructor_session(token, fingerprint(db, code), now=now)
