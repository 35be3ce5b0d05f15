"""AsyncEngine: the API server's side of the engine. The engine itself steps in its own process
(engine_core.py); this side hands it requests and aborts, and turns what each step sends back into
per-request token streams and vLLM's metrics.

Everything here runs on the server's event loop: the pipe from the core is read by an event-loop reader
(no thread), so a request joins the running batch at the core's next step (continuous batching over HTTP),
and an abort reaches the core before its next step and frees the request's blocks there.
"""
from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass

from engine.server.engine_core import CoreInfo, CoreOutput, CoreStats, start_engine_core
from engine.server.metrics import ServerMetrics

FINISHED_REASON = {"stop": "stop", "length": "length", "aborted": "abort"}  # vllm:request_success labels
STARTUP_TIMEOUT_S = 600  # loading SmolLM2 the first time dequantizes its GGUF file


class Overloaded(Exception):
    """The waiting queue is full: answer 503 with Retry-After."""


class EngineDead(RuntimeError):
    """The core process failed to start or is gone."""


@dataclass
class Delta:
    token_ids: list[int]
    num_prompt_tokens: int
    finish_reason: str | None = None  # set on the last delta
    error: str | None = None  # the engine refused the request (too long, cannot fit the cache)


class RequestStream:
    def __init__(self, request_id: str):
        self.request_id = request_id
        self.queue: asyncio.Queue[Delta] = asyncio.Queue()

    async def __aiter__(self):
        while True:
            delta = await self.queue.get()
            yield delta
            if delta.finish_reason or delta.error:
                return


class AsyncEngine:
    """Starts the core process at once and waits for it to load the model, so `info` (tokenizer,
    max_model_len) is known before the app is built; `start()` (on the event loop) begins reading it."""

    def __init__(self, model: str, config, model_name: str, max_waiting: int = 1024, loaded=None):
        self.model_name = model_name
        self.max_waiting = max_waiting
        self.metrics = ServerMetrics(model_name)
        self.unscheduled: set[str] = set()  # submitted, not yet given a first step: the waiting queue
        self.stats: CoreStats | None = None  # the core's latest report
        self._streams: dict[str, RequestStream] = {}
        self._ids = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.proc, self._conn = start_engine_core(model, loaded, config)
        if not self._conn.poll(STARTUP_TIMEOUT_S):
            self.proc.kill()
            raise EngineDead(f"the engine did not load {model} within {STARTUP_TIMEOUT_S} s")
        kind, payload = self._conn.recv()
        if kind == "failed":
            self.proc.join(timeout=10)
            raise EngineDead(payload)
        self.info: CoreInfo = payload

    @property
    def in_flight(self) -> int:
        """Requests submitted here and not yet finished."""
        return len(self._streams)

    @property
    def alive(self) -> bool:
        return self.proc.is_alive() and not self._conn.closed

    # --- on the event loop -------------------------------------------------------------
    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._conn.fileno(), self._on_readable)

    def stop(self) -> None:
        if self._loop is not None and not self._conn.closed:
            self._loop.remove_reader(self._conn.fileno())
        try:
            self._conn.send(("stop",))
        except (OSError, ValueError):
            pass
        self.proc.join(timeout=10)
        if self.proc.is_alive():
            self.proc.kill()
        self._conn.close()

    def submit(self, prompt_token_ids: list[int], params, priority: int = 0) -> RequestStream:
        if not self.alive:
            raise EngineDead("the engine process is not running")
        if len(self.unscheduled) >= self.max_waiting:
            raise Overloaded(f"{len(self.unscheduled)} requests are already waiting (--max-waiting "
                             f"{self.max_waiting}); retry shortly")
        stream = RequestStream(f"req-{next(self._ids)}")
        self._streams[stream.request_id] = stream
        self.unscheduled.add(stream.request_id)
        self._conn.send(("add", stream.request_id, prompt_token_ids, params, priority))
        return stream

    def abort(self, request_id: str) -> None:
        if request_id in self._streams and self.alive:
            self._conn.send(("abort", request_id))

    def _on_readable(self) -> None:
        try:
            while self._conn.poll():
                _, outputs, stats = self._conn.recv()
                self._on_step(outputs, stats)
        except (EOFError, OSError):  # the core died: fail what is in flight, answer no more
            self._loop.remove_reader(self._conn.fileno())
            self._conn.close()
            for stream in self._streams.values():
                stream.queue.put_nowait(Delta([], 0, error="the engine process stopped; see the server log"))
            self._streams.clear()
            self.unscheduled.clear()

    def _on_step(self, outputs: list[CoreOutput], stats: CoreStats) -> None:
        self.stats = stats
        self._count_step(stats)
        for out in outputs:
            self.unscheduled.discard(out.request_id)
            stream = self._streams.get(out.request_id)
            if stream is None:
                continue
            finished = out.finish_reason is not None or out.error is not None
            if out.error:
                delta = Delta([], out.num_prompt_tokens, error=out.error)
            else:
                self._count_tokens(out)
                delta = Delta(out.new_token_ids, out.num_prompt_tokens, FINISHED_REASON.get(out.finish_reason,
                                                                                             out.finish_reason))
            if out.new_token_ids or finished:
                stream.queue.put_nowait(delta)
            if finished:
                self._count_finished(out)
                del self._streams[out.request_id]

    # --- metrics -------------------------------------------------------------------------
    def _count_step(self, s: CoreStats) -> None:
        m = self.metrics
        m.running.set(s.running)
        m.waiting.set(s.waiting)
        m.kv_usage.set(s.kv_usage)
        m.preemptions.inc(s.preempted)
        m.prompt_tokens.inc(s.prompt_tokens)
        m.generation_tokens.inc(s.generation_tokens)
        if s.iteration_tokens:
            m.iteration_tokens.observe(s.iteration_tokens)

    def _count_tokens(self, out: CoreOutput) -> None:
        m, times = self.metrics, out.token_times
        first = out.new_token_ids and out.num_output_tokens == len(out.new_token_ids)
        if first:
            m.ttft.observe(out.first_token_time - out.arrival_time)
            m.queue.observe(out.first_scheduled_time - out.arrival_time)
            m.prefill.observe(out.first_token_time - out.first_scheduled_time)
            m.prefix_queries.inc(out.num_prompt_tokens)
            m.prefix_hits.inc(out.num_cached_tokens)
        for i in range(1, len(times)):  # times[0] is the previous token's, except for the first output
            m.itl.observe(times[i] - times[i - 1])

    def _count_finished(self, out: CoreOutput) -> None:
        if out.error or out.arrival_time is None:
            return
        m = self.metrics
        m.success(FINISHED_REASON.get(out.finish_reason, out.finish_reason))
        m.e2e.observe(out.finish_time - out.arrival_time)
        if out.first_token_time is not None and out.token_times:
            m.decode.observe(out.token_times[-1] - out.first_token_time)
            if out.num_output_tokens > 1:
                m.tpot.observe((out.token_times[-1] - out.first_token_time) / (out.num_output_tokens - 1))
