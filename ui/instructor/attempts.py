"""Wrong passcodes, bounded per browser session, per client address and in total, and logged.

Under `make class` the lab listens on every interface, so anyone in the room can script guesses, from many
sessions at once. Wrong passcodes are counted over a sliding WINDOW_S: past FREE_FAILURES from a session or from
an address, or past TOTAL_FAILURES across the whole server, an attempt is refused at once, without being checked
and without a thread waiting, and says when to try again. So however many sessions guess in parallel, at most
TOTAL_FAILURES wrong passcodes a minute are ever checked. A session that has not failed itself still gets its
check when only its address is over (the instructor behind the same router as a guessing student); the total
holds for everyone. The counts are the process's (every session's script runs in a thread of one process).
Streamlit-free: the clock can be a test's."""
from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from typing import NamedTuple

from ui.instructor import passcode

FREE_FAILURES = 5  # per session and per address, within WINDOW_S
TOTAL_FAILURES = 20  # across the server, within WINDOW_S
WINDOW_S = 60.0
EVERYONE = "total"
log = logging.getLogger("serving_lab.passcode")


class Outcome(NamedTuple):
    ok: bool
    retry_after_s: int = 0  # > 0: refused without a check; try again after this long


class Attempts:
    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        times = self._failures.setdefault(key, deque())
        while times and now - times[0] > WINDOW_S:
            times.popleft()
        return times

    def _blocked_for(self, session: str, address: str | None, now: float) -> float:
        """Seconds until this attempt may be checked (0: now), the lock held."""
        limits = [(self._recent(f"session:{session}", now), FREE_FAILURES),
                  (self._recent(EVERYONE, now), TOTAL_FAILURES)]
        if address and limits[0][0]:  # a session with no failure of its own is not held by its address's
            limits.append((self._recent(f"address:{address}", now), FREE_FAILURES))
        waits = [times[-limit] + WINDOW_S - now for times, limit in limits if len(times) >= limit]
        return max(waits, default=0.0)

    def check(self, given: str, session: str, address: str | None) -> Outcome:
        """Compare `given` with the passcode, unless the failures so far refuse the attempt outright."""
        keys = [f"session:{session}", EVERYONE] + ([f"address:{address}"] if address else [])
        with self._lock:
            now = self.clock()
            wait = self._blocked_for(session, address, now)
            if wait > 0:
                log.warning("instructor passcode attempt refused unchecked from address %s, session %s: try again "
                            "in %.0f s", address or "?", session[:8], wait)
                return Outcome(False, max(1, math.ceil(wait)))
            if passcode.matches(given):
                self._failures.pop(f"session:{session}", None)
                return Outcome(True)
            for k in keys:
                self._recent(k, now).append(now)
            n = len(self._failures[keys[-1]])
        log.warning("wrong instructor passcode from address %s, session %s: %d in the last %.0f s", address or "?",
                    session[:8], n, WINDOW_S)
        return Outcome(False)


ATTEMPTS = Attempts()  # the process's: shared by every session's thread
