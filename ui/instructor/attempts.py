"""Failed passcode attempts, slowed per browser session and per client address, and logged.

Under `make class` the lab listens on every interface, so anyone in the room can script guesses: after
FREE_FAILURES wrong passcodes within WINDOW_S, each further attempt from that session or that address waits
BASE_DELAY_S, doubled with every failure (at most MAX_DELAY_S), before it is even checked. The count is the
process's (every session's script runs in a thread of one process), so a new session from the same address
starts no fresh count. Streamlit-free: the clock and the sleep can be a test's."""
from __future__ import annotations

import logging
import threading
import time
from collections import deque

from ui.instructor import passcode

FREE_FAILURES = 5
WINDOW_S = 60.0
BASE_DELAY_S = 1.0
MAX_DELAY_S = 30.0
log = logging.getLogger("serving_lab.passcode")


class Attempts:
    def __init__(self, clock=time.monotonic, sleep=time.sleep):
        self.clock, self.sleep = clock, sleep
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> int:
        times = self._failures.get(key)
        while times and now - times[0] > WINDOW_S:
            times.popleft()
        return len(times or ())

    def delay(self, keys: list[str]) -> float:
        """How long the next attempt under these keys waits: 0 for the first FREE_FAILURES failures."""
        with self._lock:
            now = self.clock()
            over = max(self._recent(k, now) for k in keys) - FREE_FAILURES
        return 0.0 if over < 0 else min(BASE_DELAY_S * 2 ** over, MAX_DELAY_S)

    def failed(self, keys: list[str]) -> int:
        with self._lock:
            now = self.clock()
            for k in keys:
                self._failures.setdefault(k, deque()).append(now)
            return max(self._recent(k, now) for k in keys)

    def succeeded(self, keys: list[str]) -> None:
        with self._lock:
            for k in keys:
                self._failures.pop(k, None)

    def check(self, given: str, session: str, address: str | None) -> bool:
        """Wait as the failures so far ask, then compare `given` with the passcode; a failure is counted and
        logged with who made it."""
        keys = [f"session:{session}"] + ([f"address:{address}"] if address else [])
        wait = self.delay(keys)
        if wait:
            self.sleep(wait)
        if passcode.matches(given):
            self.succeeded(keys)
            return True
        n = self.failed(keys)
        log.warning("wrong instructor passcode from address %s, session %s: %d in the last %.0f s%s", address or "?",
                    session[:8], n, WINDOW_S, f" (this one waited {wait:.0f} s)" if wait else "")
        return False


ATTEMPTS = Attempts()  # the process's: shared by every session's thread
