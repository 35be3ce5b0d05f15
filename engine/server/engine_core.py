"""EngineCore: the engine's step loop in a process of its own, as vLLM v1 runs it behind its API server.

The API server process parses HTTP, tokenizes, detokenizes and streams; this process only takes requests,
steps the engine and sends back each step's new tokens. Two processes, not two threads: Python runs one
thread at a time, so in one process every SSE chunk the server writes is a pause in the engine's steps
(measured here: the server kept 61 % of the offline throughput in one process).

The two talk through a multiprocessing pipe:
    API server -> core:  ("add", request_id, prompt_token_ids, SamplingParams, priority) | ("abort", id) | ("stop",)
    core -> API server:  ("ready", CoreInfo) | ("failed", message) once, then ("step", [CoreOutput], CoreStats),
                         and ("beat",) when nothing else was sent for BEAT_S: the API server's supervisor
                         restarts a silent core
Each message is framed by `encode` and read by `decode`: a step's news, sent on every step, goes as plain tuples
through marshal (a third of pickle's time for the same tuples); anything else through pickle.

No request can end this process: one that cannot be added, or fails in a step (its sampling, say), is
finished with an error on its own and the batch goes on (LLMEngine.step isolates per-request failures);
a step that fails as a whole fails the requests in flight, and the loop goes on.
"""
from __future__ import annotations

import marshal
import os
import pickle
import select
import sys
import threading
import time
import traceback
import types
from dataclasses import dataclass
from typing import NamedTuple

from engine.policy_key import PolicyKeyError

IDLE_POLL_S = 0.05  # how long an idle core waits for a request before it looks again
BEAT_S = 0.2  # the core says it is alive this often (supervisor.py's heartbeat)


@dataclass
class CoreInfo:
    """What the API server needs to know about the engine: sent once the model is loaded."""
    tokenizer: object
    max_model_len: int
    source: str
    num_blocks: int
    pid: int


class CoreOutput(NamedTuple):
    """One request's news from one step: new tokens, its first schedule, or its end. A tuple, not a
    dataclass: one is sent for every running request on every step, as a plain tuple (`encode`)."""
    request_id: str
    new_token_ids: list[int]
    num_prompt_tokens: int
    scheduled: bool  # has had its first step: no longer in the waiting queue
    finish_reason: str | None = None  # stop / length / aborted, on its last output
    error: str | None = None  # the engine refused it (too long, can never fit the cache), or it failed
    # engine clock (perf_counter, shared by both processes on one machine) for the latency metrics
    arrival_time: float | None = None
    first_scheduled_time: float | None = None
    first_token_time: float | None = None
    finish_time: float | None = None
    token_times: list[float] | tuple = ()  # of the new tokens, after the previous token's time
    num_cached_tokens: int = 0
    num_output_tokens: int = 0
    failed: bool = False  # with an error: it failed in the engine (a bug), rather than being refused


class CoreStats(NamedTuple):
    """The engine after a step: the gauges, the step's counters, and whether its blocks balance."""
    running: int
    waiting: int
    num_free_blocks: int
    num_blocks: int
    num_requests: int  # requests the engine still holds
    preempted: int = 0
    prompt_tokens: int = 0
    generation_tokens: int = 0
    iteration_tokens: int = 0
    invariant_error: str | None = None  # checked whenever the engine falls idle
    num_added: int = 0  # "add" messages taken so far: the API server counts the ones not seen yet as waiting

    @property
    def kv_usage(self) -> float:
        return 1 - self.num_free_blocks / self.num_blocks


_MARSHALLED, _PICKLED = b"m", b"p"


def encode(msg: tuple) -> bytes:
    """One message as bytes for the pipe (see the module's docstring)."""
    try:
        if msg[0] == "step":
            _, outputs, stats = msg
            return _MARSHALLED + marshal.dumps(("step", [tuple(o) for o in outputs], tuple(stats)))
        if msg[0] == "beat":
            return _MARSHALLED + marshal.dumps(msg)
    except ValueError:  # a value marshal does not take (a numpy integer, say): pickle takes anything
        pass
    return _PICKLED + pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)


def decode(data: bytes) -> tuple:
    if data[:1] == _PICKLED:
        return pickle.loads(data[1:])
    msg = marshal.loads(data[1:])
    if msg[0] == "step":
        return "step", [CoreOutput._make(o) for o in msg[1]], CoreStats._make(msg[2])
    return msg


_MAIN_SWAP = threading.Lock()


def start_engine_core(model: str, loaded, config):
    """Spawn the core process; returns (process, connection). Spawned, not forked: a fork of a process
    that already runs torch's thread pool (or uvicorn's threads) can hang in the child. The core uses as
    many torch threads as this process does (one, in tests and benchmarks on a shared 2-core machine)."""
    import multiprocessing as mp

    import torch

    ctx = mp.get_context("spawn")
    ours, theirs = ctx.Pipe()
    proc = ctx.Process(target=run_engine_core, args=(theirs, model, loaded, config, torch.get_num_threads()),
                       name="engine-core", daemon=True)
    with _MAIN_SWAP:
        # A spawned child first re-runs the parent's __main__ file. Under Streamlit (the Real server page)
        # that is the lab's app.py, which cannot run outside `streamlit run`: the child gets a bare __main__.
        main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            proc.start()
        finally:
            sys.modules["__main__"] = main
    theirs.close()
    return proc, ours


def run_engine_core(conn, model: str, loaded, config, num_threads: int) -> None:
    """The core process: load the model, say ready, then step until told to stop or the server is gone."""
    try:
        import torch

        from engine import LLMEngine, load_model
        torch.set_num_threads(num_threads)
        loaded = loaded or load_model(model, dtype=config.dtype, device=config.device)
        engine = LLMEngine(loaded, config, snapshots=False)  # a server reads counters, not the cache's picture
    except Exception as e:  # reported to the API server, which prints it and exits
        from engine.messages import ConfigError
        conn.send_bytes(encode(("failed", str(e) if isinstance(e, ConfigError) else f"{type(e).__name__}: {e}")))
        return
    conn.send_bytes(encode(("ready", CoreInfo(loaded.tokenizer, engine.config.max_model_len, loaded.source,
                                              engine.config.num_blocks, os.getpid()))))
    try:
        EngineCore(engine, conn).run()
    except (EOFError, OSError, KeyboardInterrupt):  # the API server went away: nothing to answer
        pass


class EngineCore:
    def __init__(self, engine, conn):
        self.engine, self.conn = engine, conn
        self.sent: dict[str, int] = {}  # request id -> output tokens already sent
        self.scheduled: set[str] = set()  # requests whose first schedule was reported
        self.num_added = 0
        self._poller = select.poll()  # one poll object: Connection.poll builds a selector on every call
        self._poller.register(conn.fileno(), select.POLLIN)
        # The loop writes each step's news itself: a sender thread woken on every step passed the interpreter lock
        # back and forth with the loop (two servers taking turns in one run: its median throughput was 5 points lower).
        # A full pipe makes the loop wait for the API server to read: backpressure. A thread beats when nothing was
        # sent for BEAT_S, so a long step (a 2,048-token prefill of SmolLM2 on a CPU) is no silence, while a killed
        # or stopped (SIGSTOP) process, all of its threads with it, is.
        self._write_lock = threading.Lock()  # one message at a time on the pipe, from the loop or the beat
        self._last_sent = time.monotonic()
        threading.Thread(target=self._beat, name="engine-core-beat", daemon=True).start()

    def _beat(self) -> None:
        while True:
            wait = self._last_sent + BEAT_S - time.monotonic()
            if wait > 0:
                time.sleep(wait)
                continue
            try:
                self._write(("beat",))
            except (OSError, ValueError):  # the API server went away: the loop notices and ends
                return

    def _write(self, msg: tuple) -> None:
        data = encode(msg)
        with self._write_lock:
            self.conn.send_bytes(data)
            self._last_sent = time.monotonic()

    def run(self) -> None:
        was_busy = True
        while True:
            busy = self.engine.has_unfinished()
            if not self._drain(timeout=0 if busy else IDLE_POLL_S):
                return
            if not self.engine.has_unfinished():
                if was_busy:  # just fell idle: report the gauges, with the block accounting checked
                    self._send([], self._stats(idle=True))
                was_busy = False
                continue
            was_busy = True
            try:
                stats = self.engine.step()
            except PolicyKeyError as e:  # the served policy key failed on a request: those in flight end with why
                print(f"policy key: {e}", file=sys.stderr)
                self._fail_all(str(e))
                continue
            except Exception:  # an engine bug must not kill the server: fail the requests in flight
                traceback.print_exc(file=sys.stderr)
                self._fail_all("the engine failed on this step; see the server log")
                continue
            self._send(self._outputs(), self._stats(stats))

    def _drain(self, timeout: float) -> bool:
        """Take every message waiting (after up to `timeout` s for the first); False on stop."""
        while self._poller.poll(timeout * 1000):
            timeout = 0
            msg = decode(self.conn.recv_bytes())
            if msg[0] == "add":
                self._add(*msg[1:])
            elif msg[0] == "abort":
                if msg[1] in self.engine.requests:
                    self.engine.abort(msg[1])
            elif msg[0] == "stop":
                return False
        return True

    def _add(self, request_id: str, token_ids: list[int], params, priority: int) -> None:
        """Queue a request; one that cannot even be queued is answered at once, on its own."""
        self.num_added += 1
        try:
            self.engine.add_request(token_ids, params, request_id=request_id, priority=priority)
        except Exception as e:
            from engine.messages import EngineError

            refused = isinstance(e, EngineError)
            if not refused:
                traceback.print_exc(file=sys.stderr)
            self.engine.requests.pop(request_id, None)
            message = str(e) if refused else f"the engine could not take this request ({type(e).__name__}: {e})"
            self._send([CoreOutput(request_id, [], len(token_ids), True, error=message, failed=not refused)],
                       self._stats())
            return
        self.sent[request_id] = 0

    def _outputs(self) -> list[CoreOutput]:
        outputs = []
        for request_id, sent in list(self.sent.items()):
            r = self.engine.requests[request_id]
            new = r.output_token_ids[sent:]
            newly_scheduled = request_id not in self.scheduled and (r.first_scheduled_time is not None
                                                                    or r.is_finished)
            if not new and not r.is_finished and not newly_scheduled:
                continue
            self.scheduled.add(request_id)
            self.sent[request_id] = sent + len(new)
            outputs.append(CoreOutput(
                request_id, list(new), r.num_prompt_tokens, True,
                r.finish_reason.value if r.is_finished and r.finish_reason else None, r.error,
                r.arrival_time, r.first_scheduled_time, r.first_token_time, r.finish_time,
                r.token_times[max(sent - 1, 0):sent + len(new)], r.num_cached_tokens, r.num_output_tokens,
                failed=r.error is not None and r.finish_reason == "aborted"))
            if r.is_finished:
                del self.sent[request_id], self.engine.requests[request_id]  # a long-running server keeps none
                self.scheduled.discard(request_id)
        return outputs

    def _stats(self, step=None, idle: bool = False) -> CoreStats:
        e, bm = self.engine, self.engine.block_manager
        counts = {}
        if step is not None:
            counts = {"preempted": len(step.preempted), "prompt_tokens": step.num_prefill_tokens,
                      "generation_tokens": len(step.emitted),
                      "iteration_tokens": step.num_prefill_tokens + step.num_decode_tokens}
        if idle:
            try:
                bm.check_invariants()
            except AssertionError as err:
                counts["invariant_error"] = str(err) or "block accounting does not balance"
        return CoreStats(len(e.scheduler.running), len(e.scheduler.waiting) + len(e.pending), bm.num_free_blocks,
                         bm.num_blocks, len(e.requests), num_added=self.num_added, **counts)

    def _send(self, outputs: list[CoreOutput], stats: CoreStats) -> None:
        self._write(("step", outputs, stats))

    def _fail_all(self, message: str) -> None:
        outputs = [CoreOutput(request_id, [], 0, True, error=message, failed=True) for request_id in self.sent]
        for request_id in self.sent:
            try:
                self.engine.abort(request_id)
            except Exception:  # the engine is already in a bad state; the request goes anyway
                pass
            self.engine.requests.pop(request_id, None)
        self.sent.clear()
        self.scheduled.clear()
        self._send(outputs, self._stats())
