"""AsyncEngine: one background thread steps LLMEngine; HTTP handlers talk to it through queues.

Handlers never touch the engine: they post "add" and "abort" to an inbox that the engine thread
drains between steps, so a request joins the running batch at the next step (continuous batching
over HTTP) and an abort frees its blocks before the next step runs. After each step the thread
hands every request its new tokens through its own asyncio queue.
"""
from __future__ import annotations

import asyncio
import itertools
import queue
import sys
import threading
import traceback
from dataclasses import dataclass

from engine import LLMEngine, SamplingParams
from engine.server.metrics import ServerMetrics

FINISHED_REASON = {"stop": "stop", "length": "length", "aborted": "abort"}  # vllm:request_success labels


class Overloaded(Exception):
    """The waiting queue is full: answer 503 with Retry-After."""


@dataclass
class Delta:
    token_ids: list[int]
    num_prompt_tokens: int
    finish_reason: str | None = None  # set on the last delta
    error: str | None = None  # the engine refused the request (too long, cannot fit the cache)


class RequestStream:
    def __init__(self, request_id: str, loop: asyncio.AbstractEventLoop):
        self.request_id = request_id
        self.loop = loop
        self.queue: asyncio.Queue[Delta] = asyncio.Queue()
        self.sent = 0  # engine thread only: output tokens already handed over

    def put(self, delta: Delta) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, delta)

    async def __aiter__(self):
        while True:
            delta = await self.queue.get()
            yield delta
            if delta.finish_reason or delta.error:
                return


def _deliver(items: list[tuple[RequestStream, Delta]]) -> None:
    for stream, delta in items:
        stream.queue.put_nowait(delta)


class AsyncEngine:
    def __init__(self, engine: LLMEngine, model_name: str, max_waiting: int = 1024):
        self.engine = engine
        self.model_name = model_name
        self.max_waiting = max_waiting
        self.metrics = ServerMetrics(model_name)
        self.unscheduled: set[str] = set()  # submitted, not yet given a first step: the waiting queue
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._streams: dict[str, RequestStream] = {}
        self._ids = itertools.count()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="engine-loop", daemon=True)

    # --- called from the event loop ------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=10)

    def submit(self, prompt_token_ids: list[int], params: SamplingParams, priority: int = 0) -> RequestStream:
        if len(self.unscheduled) >= self.max_waiting:
            raise Overloaded(f"{len(self.unscheduled)} requests are already waiting (--max-waiting "
                             f"{self.max_waiting}); retry shortly")
        stream = RequestStream(f"req-{next(self._ids)}", asyncio.get_running_loop())
        self.unscheduled.add(stream.request_id)
        self._inbox.put(("add", stream, prompt_token_ids, params, priority))
        self._wake.set()
        return stream

    def abort(self, request_id: str) -> None:
        self._inbox.put(("abort", request_id))
        self._wake.set()

    # --- the engine thread -----------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop.is_set():
            self._drain_inbox()
            if not self.engine.has_unfinished():
                self._update_gauges()
                self._wake.wait(0.05)
                self._wake.clear()
                continue
            try:
                snapshot = self.engine.step()
            except Exception:  # an engine bug must not kill the server: fail the requests in flight
                traceback.print_exc(file=sys.stderr)
                self._fail_all("the engine failed on this step; see the server log")
                continue
            self._count_step(snapshot)
            self._publish()

    def _drain_inbox(self) -> None:
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                break
            if item[0] == "add":
                _, stream, token_ids, params, priority = item
                self.engine.add_request(token_ids, params, request_id=stream.request_id, priority=priority)
                self._streams[stream.request_id] = stream
            else:
                request_id = item[1]
                if request_id in self.engine.requests:
                    self.engine.abort(request_id)
        self._publish()

    def _publish(self) -> None:
        """Hand each request its new tokens: one wake-up of the event loop per step, not one per request."""
        done, out = [], {}
        for request_id, stream in self._streams.items():
            r = self.engine.requests[request_id]
            if r.first_scheduled_time is not None or r.is_finished:
                self.unscheduled.discard(request_id)
            new = r.output_token_ids[stream.sent:]
            if not new and not r.is_finished:
                continue
            self._count_tokens(r, stream.sent, len(new))
            stream.sent += len(new)
            reason = r.finish_reason.value if r.finish_reason else None
            delta = (Delta([], r.num_prompt_tokens, error=r.error) if r.error else
                     Delta(new, r.num_prompt_tokens, FINISHED_REASON.get(reason) if r.is_finished else None))
            out.setdefault(stream.loop, []).append((stream, delta))
            if r.is_finished:
                self._count_finished(r)
                done.append(request_id)
        for loop, items in out.items():
            loop.call_soon_threadsafe(_deliver, items)
        for request_id in done:
            del self._streams[request_id]
            del self.engine.requests[request_id]  # a long-running server must not keep every request

    def _fail_all(self, message: str) -> None:
        for request_id, stream in list(self._streams.items()):
            stream.put(Delta([], 0, error=message))
            try:
                self.engine.abort(request_id)
            except Exception:
                pass
            self.engine.requests.pop(request_id, None)
            self.unscheduled.discard(request_id)
        self._streams.clear()

    # --- metrics (engine thread) -----------------------------------------------------
    def _update_gauges(self) -> None:
        m, e = self.metrics, self.engine
        m.running.set(len(e.scheduler.running))
        m.waiting.set(len(e.scheduler.waiting) + len(e.pending))
        m.kv_usage.set(1 - e.block_manager.num_free_blocks / e.block_manager.num_blocks)

    def _count_step(self, snapshot) -> None:
        m = self.metrics
        self._update_gauges()
        m.preemptions.inc(len(snapshot.preempted))
        prefill = sum(b.num_prefill_tokens for b in snapshot.batch)
        m.prompt_tokens.inc(prefill)
        m.generation_tokens.inc(len(snapshot.emitted))
        if snapshot.batch:
            m.iteration_tokens.observe(prefill + sum(b.num_decode_tokens for b in snapshot.batch))

    def _count_tokens(self, r, sent: int, new: int) -> None:
        m = self.metrics
        if sent == 0 and new:
            m.ttft.observe(r.first_token_time - r.arrival_time)
            m.queue.observe(r.first_scheduled_time - r.arrival_time)
            m.prefill.observe(r.first_token_time - r.first_scheduled_time)
            m.prefix_queries.inc(r.num_prompt_tokens)
            m.prefix_hits.inc(r.num_cached_tokens)
        times = r.token_times
        for i in range(max(sent, 1), sent + new):
            m.itl.observe(times[i] - times[i - 1])

    def _count_finished(self, r) -> None:
        if r.error or r.arrival_time is None:
            return
        m = self.metrics
        m.success(FINISHED_REASON.get(r.finish_reason.value, r.finish_reason.value))
        m.e2e.observe(r.finish_time - r.arrival_time)
        if r.first_token_time is not None:
            m.decode.observe(r.token_times[-1] - r.first_token_time)
            if r.num_output_tokens > 1:
                m.tpot.observe((r.token_times[-1] - r.first_token_time) / (r.num_output_tokens - 1))
