"""Wrong passcodes, bounded per browser session, per client address and in total, and logged.

Under `make class` the lab listens on every interface, so anyone in the room can script guesses, from many
sessions at once. Wrong passcodes are counted over a sliding WINDOW_S: past FREE_FAILURES from a session or from
an address, or past TOTAL_FAILURES across the whole server, an attempt is refused at once, without being checked
and without a thread waiting, and says when to try again. So however many sessions guess in parallel, at most
TOTAL_FAILURES wrong passcodes a minute are ever checked. A session that has not failed itself still gets its
check when only its address is over (the instructor behind the same router as a guessing student); the total
holds for everyone.

The counts live in the store (classroom.Store.claim_passcode_check), so every session of every replica on one
database shares them: an attempt is counted as a failure before its check, in one transaction with the count,
and a right passcode takes it back. Streamlit-free: the store and the clock can be a test's."""
from __future__ import annotations

import logging
import math
import time
from typing import NamedTuple

from classroom import get_store
from ui.instructor import passcode

FREE_FAILURES = 5  # per session and per address, within WINDOW_S
TOTAL_FAILURES = 20  # across the server, within WINDOW_S
WINDOW_S = 60.0
EVERYONE = "total"
log = logging.getLogger("serving_lab.passcode")


class Outcome(NamedTuple):
    ok: bool
    retry_after_s: int = 0  # > 0: refused without a check; try again after this long


def keys(session: str, address: str | None) -> list[str]:
    return [f"session:{session}", EVERYONE] + ([f"address:{address}"] if address else [])


def blocked_for(failures: dict[str, list[float]], session: str, address: str | None, now: float) -> float:
    """Seconds until this attempt may be checked (0: now), given each key's failures within the window."""
    mine = failures.get(f"session:{session}", [])
    limits = [(mine, FREE_FAILURES), (failures.get(EVERYONE, []), TOTAL_FAILURES)]
    if address and mine:  # a session with no failure of its own is not held by its address's
        limits.append((failures.get(f"address:{address}", []), FREE_FAILURES))
    waits = [times[-limit] + WINDOW_S - now for times, limit in limits if len(times) >= limit]
    return max(waits, default=0.0)


class Attempts:
    def __init__(self, store=None, clock=time.time):
        self._store = store  # None: the process's (classroom.get_store), opened at the first attempt
        self.clock = clock  # wall-clock seconds: replicas compare the times they stored

    @property
    def store(self):
        return self._store if self._store is not None else get_store()

    def check(self, given: str, session: str, address: str | None) -> Outcome:
        """Compare `given` with the passcode, unless the failures so far refuse the attempt outright.
        Raises classroom.StorageError when the store cannot count: nothing is checked uncounted."""
        db, now, ks = self.store, self.clock(), keys(session, address)
        wait, attempt = db.claim_passcode_check(ks, now - WINDOW_S, now,
                                                lambda failures: blocked_for(failures, session, address, now))
        if attempt is None:
            log.warning("instructor passcode attempt refused unchecked from address %s, session %s: try again "
                        "in %.0f s", address or "?", session[:8], wait)
            return Outcome(False, max(1, math.ceil(wait)))
        if passcode.matches(given):
            db.forget_passcode_failures(attempt, key=ks[0])
            return Outcome(True)
        n = len(db.passcode_failures(ks[-1:], now - WINDOW_S)[ks[-1]])
        log.warning("wrong instructor passcode from address %s, session %s: %d in the last %.0f s", address or "?",
                    session[:8], n, WINDOW_S)
        return Outcome(False)


ATTEMPTS = Attempts()  # the process's: every session's thread, on the process's store
