"""Recorded runs computed once per server process and shared, read-only, by every session.

A run is deterministic in steps for (model, requests, engine settings), so when forty students press
the same lecture moment the server computes it once: the first press computes, the others wait for
that computation (and see its progress) instead of queueing identical runs, and later presses get
it at once. The cache holds finished runs up to a byte budget (SERVING_LAB_RUN_CACHE_MB, default
512) and forgets the least recently used first; a session that still shows an evicted run keeps it.
Live runs are never shared: each session steps its own engines.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from engine import EngineConfig, LiveRun, TraceRequest

DEFAULT_MB = 512


class _Flight:
    """One computation in progress that other sessions wait on."""

    def __init__(self):
        self.finished = threading.Event()
        self.value = None
        self.failed = False
        self.progress = 0.0


class RunCache:
    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._done: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._flights: dict[Hashable, _Flight] = {}
        self.computed = 0  # computations started (a test counts them)
        self.bytes = 0

    def get(self, key: Hashable, compute: Callable[[Callable[[float], None]], object], size: Callable[[object], int],
            on_wait: Callable[[float], None] | None = None):
        """The value for `key`: cached, or computed by this call (`compute(report_progress)`), or, when
        another thread is computing it, that thread's result (`on_wait(progress)` while waiting).
        If that computation fails or is interrupted (its session moved on), a waiter computes it itself."""
        while True:
            with self._lock:
                if key in self._done:
                    self._done.move_to_end(key)
                    return self._done[key][0]
                flight = self._flights.get(key)
                mine = flight is None
                if mine:
                    flight = self._flights[key] = _Flight()
                    self.computed += 1
            if mine:
                return self._compute(key, flight, compute, size)
            while not flight.finished.wait(0.25):
                if on_wait:
                    on_wait(flight.progress)
            if not flight.failed:
                return flight.value

    def _compute(self, key, flight: _Flight, compute, size):
        try:
            value = compute(lambda frac: setattr(flight, "progress", frac))
        except BaseException:  # Streamlit stops a script run with an exception: let a waiter take over
            with self._lock:
                del self._flights[key]
            flight.failed = True
            flight.finished.set()
            raise
        nbytes = size(value)
        with self._lock:
            del self._flights[key]
            self._done[key] = (value, nbytes)
            self.bytes += nbytes
            while self.bytes > self.max_bytes and len(self._done) > 1:
                _, (_, freed) = self._done.popitem(last=False)
                self.bytes -= freed
        flight.value = value
        flight.finished.set()
        return value

    def __len__(self) -> int:
        return len(self._done)

    def clear(self) -> None:
        with self._lock:
            self._done.clear()
            self.bytes = 0


RUNS = RunCache(int(float(os.environ.get("SERVING_LAB_RUN_CACHE_MB", DEFAULT_MB)) * 2**20))


def run_key(model: str, device: str, requests: list[TraceRequest], config: EngineConfig, label: str) -> tuple:
    """What decides a recorded run: the model, the exact requests and the engine settings (and its name)."""
    digest = hashlib.sha256(json.dumps([r.to_dict() for r in requests], sort_keys=True).encode()).hexdigest()
    return model, device, digest, json.dumps(config.to_dict(), sort_keys=True), label


def run_bytes(run: LiveRun) -> int:
    """A finished run's memory, estimated: its snapshot columns, its requests and their tokens, and as
    much again for what the views derive from it (timeline columns, memory split rows)."""
    tokens = sum(r.num_prompt_tokens + r.num_output_tokens for r in run.recorder.requests.values())
    own = run.snapshots.nbytes + 1_500 * len(run.recorder.requests) + 40 * tokens
    return 2 * own
