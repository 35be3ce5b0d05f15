"""AsyncEngine: the API server's side of the engine. The engine itself steps in its own process
(engine_core.py); this side hands it requests and aborts, and turns what each step sends back into
per-request token streams and vLLM's metrics.

Everything here runs on the server's event loop (supervisor.py hands it each message from the core as it
comes), so a request joins the running batch at the core's next step (continuous batching over HTTP), and
an abort reaches the core before its next step and frees the request's blocks there.
"""
from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass

from engine.server.engine_core import CoreInfo, CoreOutput, CoreStats
from engine.server.metrics import ServerMetrics
from engine.server.supervisor import HEARTBEAT_TIMEOUT_S, EngineDead, make_supervisor

FINISHED_REASON = {"stop": "stop", "length": "length", "aborted": "abort"}  # vllm:request_success labels
__all__ = ["AsyncEngine", "Delta", "EngineDead", "Overloaded", "RequestStream"]


class Overloaded(Exception):
    """The waiting queue is full: answer 503 with Retry-After."""


@dataclass
class Delta:
    token_ids: list[int]
    num_prompt_tokens: int
    finish_reason: str | None = None  # set on the last delta
    error: str | None = None  # why it ended without finishing (see `status`)
    status: int = 400  # with an error: 400 refused (too long, cannot fit), 500 failed in a step, 503 core gone


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
    max_model_len) is known before the app is built; `start()` (on the event loop) begins reading it and
    watching it (supervisor.py restarts a core that dies or stops answering)."""

    def __init__(self, model: str, config, model_name: str, max_waiting: int = 1024, loaded=None,
                 heartbeat_timeout_s: float = HEARTBEAT_TIMEOUT_S):
        self.model_name = model_name
        self.max_waiting = max_waiting
        self.max_num_seqs = config.max_num_seqs
        self.metrics = ServerMetrics(model_name)
        self.num_submitted = 0  # to this core: with its num_added, what it has not seen yet
        self._streams: dict[str, RequestStream] = {}
        self._ids = itertools.count()
        self.core = make_supervisor(model, loaded, config, heartbeat_timeout_s)
        self.core.on_message, self.core.on_down, self.core.on_up = self._on_message, self._on_down, self._on_up
        self.info: CoreInfo = self.core.info
        self.stats: CoreStats = self._idle_stats()  # the core's latest report

    @property
    def proc(self):
        return self.core.proc

    @property
    def in_flight(self) -> int:
        """Requests submitted here and not yet finished."""
        return len(self._streams)

    @property
    def alive(self) -> bool:
        return self.core.ready and self.core.proc.is_alive()

    @property
    def num_waiting(self) -> int:
        """Requests waiting for a slot, as of the core's last report plus what it has not seen yet: those fill
        free slots first, so an idle server never counts one as waiting."""
        s = self.stats
        unseen = self.num_submitted - s.num_added
        if s.waiting:  # some already wait (no free slot, or no room in the cache): the unseen wait too
            return s.waiting + unseen
        return max(0, unseen - (self.max_num_seqs - s.running))

    def _idle_stats(self) -> CoreStats:
        return CoreStats(0, 0, self.info.num_blocks, self.info.num_blocks, 0)

    # --- on the event loop -------------------------------------------------------------
    def start(self) -> None:
        self.core.attach()

    def stop(self) -> None:
        self.core.stop()

    def submit(self, prompt_token_ids: list[int], params, priority: int = 0) -> RequestStream:
        if not self.alive:
            raise EngineDead(self.core.unavailable() if self.core.last_failure else "the engine is not running")
        if self.num_waiting >= self.max_waiting:
            raise Overloaded(f"{self.num_waiting} requests are already waiting for a slot (--max-waiting "
                             f"{self.max_waiting}); retry shortly")
        stream = RequestStream(f"req-{next(self._ids)}")
        self.core.send(("add", stream.request_id, prompt_token_ids, params, priority))
        self._streams[stream.request_id] = stream
        self.num_submitted += 1
        return stream

    def abort(self, request_id: str) -> None:
        if request_id in self._streams and self.core.ready:
            try:
                self.core.send(("abort", request_id))
            except EngineDead:  # the supervisor has failed the request already
                pass

    def _on_message(self, msg: tuple) -> None:
        if msg[0] == "step":
            self._on_step(msg[1], msg[2])

    def _on_down(self, reason: str) -> None:
        """The core is gone: every request in flight (running or queued) gets 503, the gauges go to zero."""
        for stream in self._streams.values():
            stream.queue.put_nowait(Delta([], 0, error=f"{reason}; the engine core is restarting, retry shortly",
                                          status=503))
        self._streams.clear()
        self.num_submitted = 0
        self._set_gauges(self._idle_stats())

    def _on_up(self, info: CoreInfo) -> None:
        self.info = info
        self._set_gauges(self._idle_stats())

    def _on_step(self, outputs: list[CoreOutput], stats: CoreStats) -> None:
        self._set_gauges(stats)
        self._count_step(stats)
        for out in outputs:
            stream = self._streams.get(out.request_id)
            if stream is None:
                continue
            finished = out.finish_reason is not None or out.error is not None
            if out.error:
                delta = Delta([], out.num_prompt_tokens, error=out.error, status=500 if out.failed else 400)
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
    def _set_gauges(self, s: CoreStats) -> None:
        self.stats = s
        self.metrics.running.set(s.running)
        self.metrics.waiting.set(s.waiting)
        self.metrics.kv_usage.set(s.kv_usage)

    def _count_step(self, s: CoreStats) -> None:
        m = self.metrics
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
