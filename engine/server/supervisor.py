"""The API server's watch over the engine core process: a heartbeat, and a restart when the core is gone.

"The process exists" is not enough: a core stopped by SIGSTOP (or stuck) exists and answers nothing. The
core sends a message after every step, and a thread of it beats every BEAT_S (engine_core.py); a core silent
for `heartbeat_timeout_s`, or whose process ended, or whose pipe closed, is killed (SIGKILL stops a stopped
process too) and started again in a worker thread while the event loop goes on answering: requests in
flight and new ones get 503 with Retry-After until the new core says ready. `health()` says what happened.

The pipe is read and written by two threads of this process with blocking calls, never by the event loop:
a full pipe (a burst of requests while the core is inside a step) makes the writer wait until the core reads
again, which is backpressure, not a broken peer. (An fd watched by the event loop would be made non-blocking
by uvloop, and a send into a full pipe would fail with EAGAIN.)
"""
from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable

from engine.server.engine_core import decode, encode, start_engine_core

STARTUP_TIMEOUT_S = 600  # loading SmolLM2 the first time dequantizes its GGUF file
HEARTBEAT_TIMEOUT_S = 5.0  # 25 missed beats: the core's process is stopped, or gone without closing its pipe
SILENT_S = 1.0  # 5 missed beats: /health says the core is silent (503) before it is judged gone
MAX_RESTART_DELAY_S = 30.0
log = logging.getLogger("engine.server")


class EngineDead(RuntimeError):
    """The core process failed to start, or is gone and not back yet."""


def launch(model: str, loaded, config):
    """Start a core and wait for its model to load: (process, connection, CoreInfo), or EngineDead."""
    proc, conn = start_engine_core(model, loaded, config)
    if not conn.poll(STARTUP_TIMEOUT_S):
        proc.kill()
        raise EngineDead(f"the engine did not load {model} within {STARTUP_TIMEOUT_S} s")
    try:
        kind, payload = decode(conn.recv_bytes())
    except (EOFError, OSError):
        kind, payload = "failed", f"the engine process exited while loading {model} (exit code {proc.exitcode})"
    if kind == "failed":
        proc.join(timeout=10)
        raise EngineDead(payload)
    return proc, conn, payload


class CoreSupervisor:
    """Owns the core process and its pipe. `on_message(msg)` gets what the core sends; `on_down(reason)` is
    called once when it is found gone (fail what is in flight, reset the gauges); `on_up(info)` when a new
    core is ready."""

    def __init__(self, start: Callable[[], tuple], heartbeat_timeout_s: float = HEARTBEAT_TIMEOUT_S):
        self._start, self.heartbeat_timeout_s = start, heartbeat_timeout_s
        self.proc, self.conn, self.info = start()  # the first start is synchronous: EngineDead reaches the CLI
        self.state = "ready"  # ready | restarting | stopped
        self.restarts = 0
        self.last_failure: str | None = None
        self.last_restart_s: float | None = None  # from finding the core gone to the new one ready
        self._down_since = 0.0
        self._last_heard = time.monotonic()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task] = []
        self.on_message = self.on_down = self.on_up = lambda *a: None

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    # --- on the event loop -------------------------------------------------------------
    def attach(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._listen()
        self._tasks.append(self._loop.create_task(self._watch()))

    def _listen(self) -> None:
        """A reader and a writer thread for the current core's pipe (they end with it)."""
        self._last_heard = time.monotonic()
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._read, args=(self.conn,), name="engine-core-reader", daemon=True).start()
        threading.Thread(target=self._write, args=(self.conn, self._outbox), name="engine-core-writer",
                         daemon=True).start()

    def send(self, msg: tuple) -> None:
        if not self.ready:
            raise EngineDead(self.unavailable())
        self._outbox.put(msg)  # in order; the writer thread sends it as soon as the pipe has room

    def unavailable(self) -> str:
        return f"the engine core is restarting ({self.last_failure}); retry shortly"

    def _read(self, conn) -> None:
        """Each message, as it comes, handed to the event loop; the pipe's end (the core gone, or killed by a
        restart) too. The time heard is kept here: a busy loop's backlog is not the core's silence."""
        try:
            while True:
                msg = decode(conn.recv_bytes())
                if conn is self.conn:
                    self._last_heard = time.monotonic()
                if not self._to_loop(self._deliver, conn, msg):
                    return
        except (EOFError, OSError, ValueError, TypeError):  # TypeError: the writer closed this end mid-read
            self._to_loop(self._closed, conn)

    def _to_loop(self, callback, *args) -> bool:
        """`callback(*args)` run on the event loop; False once the loop has closed (the server is exiting)."""
        try:
            self._loop.call_soon_threadsafe(callback, *args)
            return True
        except RuntimeError:
            return False

    def _write(self, conn, outbox: queue.SimpleQueue) -> None:
        """Blocking sends: a full pipe waits here until the core reads. Ends (closing the pipe) at None."""
        while (msg := outbox.get()) is not None:
            try:
                conn.send_bytes(encode(msg))
            except (OSError, ValueError):  # the core is gone: the reader or the watch finds it
                break
        conn.close()

    def _deliver(self, conn, msg: tuple) -> None:
        if conn is self.conn and self.ready:
            self.on_message(msg)

    def _closed(self, conn) -> None:
        if conn is self.conn and self.ready:
            self._down(f"the engine core (pid {self.info.pid}) closed its pipe: exit code {self._exitcode()}")

    async def _watch(self) -> None:
        period = min(0.25, self.heartbeat_timeout_s / 4)
        while True:
            await asyncio.sleep(period)
            if not self.ready:
                continue
            silent = time.monotonic() - self._last_heard
            if not self.ready:
                continue
            if not self.proc.is_alive():
                self._down(f"the engine core (pid {self.info.pid}) exited: exit code {self._exitcode()}")
            elif silent > self.heartbeat_timeout_s:
                self._down(f"the engine core (pid {self.info.pid}) sent nothing for {silent:.1f} s "
                           f"(heartbeat timeout {self.heartbeat_timeout_s:g} s): stopped or stuck")

    def _exitcode(self):
        self.proc.join(timeout=0.5)
        return self.proc.exitcode

    def _down(self, reason: str) -> None:
        if not self.ready:
            return
        log.error("%s; restarting it", reason)
        self.state, self.last_failure, self._down_since = "restarting", reason, time.monotonic()
        self.proc.kill()  # its end of the pipe closes: the reader thread ends
        self._outbox.put(None)  # the writer thread closes this end
        self.on_down(reason)
        self._tasks.append(self._loop.create_task(self._restart()))

    async def _restart(self) -> None:
        delay = 0.0
        while self.state == "restarting":
            await asyncio.sleep(delay)
            old = self.proc
            try:
                proc, conn, info = await self._loop.run_in_executor(None, self._start)
            except Exception as e:  # EngineDead, or spawning failed: try again, more slowly
                log.error("restarting the engine core failed: %s", e)
                delay = min(max(1.0, 2 * delay), MAX_RESTART_DELAY_S)
                continue
            await self._loop.run_in_executor(None, old.join, 5)  # reap the killed one
            if self.state != "restarting":  # stopped meanwhile
                proc.kill()
                return
            self.proc, self.conn, self.info = proc, conn, info
            self.restarts += 1
            self.last_restart_s = time.monotonic() - self._down_since
            self.state = "ready"
            log.warning("engine core restarted in %.2f s (pid %s)", self.last_restart_s, info.pid)
            self._listen()
            self.on_up(info)

    @property
    def silent(self) -> bool:
        """Ready, but nothing heard (not even a beat) for SILENT_S: stopped or stuck, not yet judged gone."""
        return self.ready and time.monotonic() - self._last_heard > SILENT_S

    def health(self) -> dict:
        status = ("silent" if self.silent else "ok") if self.ready else self.state
        return {"status": status, "restarts": self.restarts,
                "last_failure": self.last_failure,
                "last_restart_s": None if self.last_restart_s is None else round(self.last_restart_s, 3),
                "core_pid": self.info.pid if self.ready else None}

    def stop(self) -> None:
        was_ready, self.state = self.ready, "stopped"
        for task in self._tasks:
            task.cancel()
        if was_ready and self._loop is not None:  # the writer sends what is queued, then stop, then closes
            self._outbox.put(("stop",))
            self._outbox.put(None)
        elif not self.conn.closed:  # never attached to a loop (or restarting): no writer thread to ask
            try:
                self.conn.send_bytes(encode(("stop",)))
            except (OSError, ValueError):
                pass
            self.conn.close()
        self.proc.join(timeout=10)
        if self.proc.is_alive():
            self.proc.kill()


def make_supervisor(model: str, loaded, config, heartbeat_timeout_s: float) -> CoreSupervisor:
    return CoreSupervisor(lambda: launch(model, loaded, config), heartbeat_timeout_s)

