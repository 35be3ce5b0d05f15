"""Recorded runs computed once per server process and shared, read-only, by every session.

A run is deterministic in steps for (model, requests, engine settings), so when forty students press
the same lecture moment the server computes it once. The first press starts the run in a background
thread and every press gets the same run at once: the steps already taken can be shown and played
while the rest is computed (sessions never step it themselves: the player holds at the newest step,
and a session that needs a later frame waits for the thread, LiveRun.ensure). The cache holds ended runs up to a byte
budget (SERVING_LAB_RUN_CACHE_MB, default 512) and forgets the least recently used first; a session
that still shows an evicted run keeps it. Live runs are never shared: each session steps its own engines.

With SERVING_LAB_RUN_STORE set to a folder, ended runs are also written there and read back by any process
that asks for the same run, and a process asking for a run another is computing waits for it (a lock file per
run): the test session's servers and workers share one folder, so a lecture moment is computed once per test
session. Unset, as in the lab, nothing is written.
"""
from __future__ import annotations

import atexit
import fcntl
import hashlib
import json
import logging
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.config import EngineConfig
    from engine.lab.experiment import LiveRun
    from engine.lab.trace import TraceRequest


DEFAULT_MB = 512
STORE_ENV = "SERVING_LAB_RUN_STORE"
log = logging.getLogger(__name__)


class RunStore:
    """Ended runs in a folder, one file per run key, written whole or not at all (write, then rename), so
    processes sharing the folder read either nothing or a complete run. A run being computed is claimed with
    an exclusive lock on its lock file (flock: released when this process releases it, ends or dies)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._claims: dict[Hashable, int] = {}  # key -> the open lock file of a run this process computes

    def _path(self, key: Hashable) -> Path:
        return self.folder / (hashlib.sha256(repr(key).encode()).hexdigest() + ".pkl")

    def load_or_claim(self, key: Hashable) -> LiveRun | None:
        """The stored run, waiting first if another process is computing it; or None, and this process now
        holds the claim to compute it (`save` or `release` ends it)."""
        run = self.load(key)
        if run is not None:
            return run
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._path(key).with_suffix(".lock"), os.O_CREAT | os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)  # blocks while another process (or thread) computes this run
        run = self.load(key)
        if run is not None:
            os.close(fd)
            return run
        self._claims[key] = fd
        return None

    def release(self, key: Hashable) -> None:
        fd = self._claims.pop(key, None)
        if fd is not None:
            os.close(fd)  # closing the file drops its lock

    def load(self, key: Hashable) -> LiveRun | None:
        try:
            blob = self._path(key).read_bytes()
        except FileNotFoundError:
            return None
        from engine.lab.experiment import LiveRun  # only where a store is set: the tests' (no chain at start)

        requests, snapshots, config, label, stop_reason = pickle.loads(blob)
        run = LiveRun.replay(requests, snapshots, config, label)
        run.stop_reason = stop_reason
        return run

    def save(self, key: Hashable, run: LiveRun) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(key)
        part = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.part")
        try:
            part.write_bytes(pickle.dumps((run.trace_requests, list(run.snapshots), run.config, run.label,
                                           run.stop_reason)))
            os.replace(part, path)
        finally:  # stored or not, nobody waits for it any longer
            self.release(key)


class RunCache:
    def __init__(self, max_bytes: int, store: RunStore | None = None):
        self.max_bytes = max_bytes
        self.store = store
        self._lock = threading.Lock()
        self._runs: OrderedDict[Hashable, LiveRun] = OrderedDict()  # least recently asked for first
        self._sizes: dict[Hashable, int] = {}  # of the runs that have ended
        self._threads: list[threading.Thread] = []
        self._closing = threading.Event()
        self.computed = 0  # computations started (a test counts them)
        self.bytes = 0

    def get(self, key: Hashable, make: Callable[[], LiveRun], size: Callable[[LiveRun], int]) -> LiveRun:
        """The run for `key`: the one already here (ended or still being computed), or `make()`'s, which a
        background thread now steps to its end."""
        with self._lock:
            run = self._runs.get(key)
            if run is not None:
                self._runs.move_to_end(key)
                return run
        stored = self.store.load_or_claim(key) if self.store else None  # may wait: outside the lock
        with self._lock:
            run = self._runs.get(key)
            if run is not None:  # another thread of this process got it meanwhile
                self._runs.move_to_end(key)
                if self.store:
                    self.store.release(key)
                return run
            if stored is not None:
                self._runs[key] = stored
                self._account(key, size(stored))
                return stored
            try:
                run = self._runs[key] = make()  # builds the engine only (quick): the steps come in the background
            except BaseException:
                if self.store:
                    self.store.release(key)
                raise
            self.computed += 1
            thread = run.compute_in_background(self._closing, lambda error: self._ended(key, run, size, error))
            self._threads = [th for th in self._threads if th.is_alive()] + [thread]
        return run

    def join(self, timeout: float | None = None) -> None:
        """Until every computation started so far has ended and been accounted for."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)

    def _ended(self, key: Hashable, run: LiveRun, size: Callable[[LiveRun], int], error: BaseException | None) -> None:
        if error is not None:  # the next press computes it afresh; sessions showing it step it themselves
            log.error("computing the shared run %s failed", run.label, exc_info=error)
            if self.store:
                self.store.release(key)
            with self._lock:
                if self._runs.get(key) is run:
                    del self._runs[key]
            return
        if not run.done:  # the process is exiting
            if self.store:
                self.store.release(key)
            return
        nbytes = size(run)
        if self.store:
            self.store.save(key, run)
        with self._lock:
            if self._runs.get(key) is not run:  # cleared meanwhile
                return
            self._account(key, nbytes)

    def _account(self, key: Hashable, nbytes: int) -> None:
        """An ended run's size is counted (the lock held); the least recently asked for go while over budget."""
        self._sizes[key] = nbytes
        self.bytes += nbytes
        while self.bytes > self.max_bytes and len(self._sizes) > 1:
            oldest = next(k for k in self._runs if k in self._sizes)  # runs still computing stay
            self.bytes -= self._sizes.pop(oldest)
            del self._runs[oldest]

    def close(self) -> None:
        """The process is exiting: stop every computation after its current step (a thread still inside
        torch while the interpreter shuts down aborts the process)."""
        self._closing.set()
        self.join(timeout=30)

    def __len__(self) -> int:
        return len(self._runs)

    def clear(self) -> None:
        with self._lock:
            self._runs.clear()
            self._sizes.clear()
            self.bytes = 0


RUNS = RunCache(int(float(os.environ.get("SERVING_LAB_RUN_CACHE_MB", DEFAULT_MB)) * 2**20),
                RunStore(Path(os.environ[STORE_ENV])) if os.environ.get(STORE_ENV) else None)
atexit.register(RUNS.close)


def cache_key(model: str, device: str, requests: list[TraceRequest], config: EngineConfig, label: str) -> tuple:
    """What decides a recorded run: the model, the exact requests and the engine settings (and its name)."""
    digest = hashlib.sha256(json.dumps([r.to_dict() for r in requests], sort_keys=True).encode()).hexdigest()
    return model, device, digest, json.dumps(config.to_dict(), sort_keys=True), label


def run_bytes(run: LiveRun) -> int:
    """A finished run's memory, estimated: its snapshot columns, its requests and their tokens, and as
    much again for what the views derive from it (timeline columns, memory split rows)."""
    tokens = sum(r.num_prompt_tokens + r.num_output_tokens for r in run.recorder.requests.values())
    own = run.snapshots.nbytes + 1_500 * len(run.recorder.requests) + 40 * tokens
    return 2 * own
