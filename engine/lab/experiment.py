"""Run a workload through a real engine and keep everything it did: requests, snapshots, metrics."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

from engine.config import EngineConfig
from engine.core.llm_engine import LLMEngine
from engine.models.loaded import LoadedModel
from engine.models.tokenizer import bos_prefix
from engine.lab.metrics import summarize
from engine.lab.recorder import RunRecorder
from engine.core.request import Request
from engine.core.snapshot import StepSnapshot
from engine.lab.trace import TraceRequest
from engine.lab.workload import Workload, generate


@dataclass
class RunResult:
    config: EngineConfig
    requests: list[Request]
    trace_requests: list[TraceRequest]
    snapshots: list[StepSnapshot]
    summary: dict


def workload_requests(loaded: LoadedModel, workload: Workload, seed: int) -> list[TraceRequest]:
    """The workload's requests drawn with this seed, in the model's tokens (BOS first where it expects one)."""
    bos = bos_prefix(loaded.tokenizer)
    return generate(workload, loaded.tokenizer.encode, seed, bos[0] if bos else None)


def run_requests(loaded: LoadedModel, trace_requests: list[TraceRequest], config: EngineConfig,
                 on_step: Callable[[StepSnapshot], None] | None = None, max_steps: int = 100_000) -> RunResult:
    engine = LLMEngine(loaded, config)
    requests = [r.add_to(engine) for r in trace_requests]
    snapshots = engine.run_until_done(on_step, max_steps)
    stopped = None
    if engine.has_unfinished():
        stopped = stop_at_limit(engine, max_steps)
        snapshots.append(engine.step())  # records the aborts
    summary = summarize(requests, snapshots, engine.config.max_num_seqs, engine.config.max_num_batched_tokens)
    summary["stopped"] = stopped
    return RunResult(engine.config, requests, trace_requests, snapshots, summary)


def stop_at_limit(engine: LLMEngine, max_steps: int) -> str:
    """Cut a run off at its step limit, loudly: the unfinished requests are aborted with the reason."""
    unfinished = sum(1 for r in engine.requests.values() if not r.is_finished)
    reason = (f"stopped at the limit of {max_steps} steps with {unfinished} requests unfinished "
              f"(counted as aborted): shorten the workload or raise the limit")
    engine.abort_unfinished(reason)
    return reason


class LiveRun:
    """A run the UI can play: stepped on demand ("live"), run to the end, or replayed from a trace
    with no model at all. Every snapshot is kept, so stepping back and replay cost no compute."""

    MAX_STEPS = 20_000  # a run that needs more is stopped, its unfinished requests aborted with the reason

    def __init__(self, loaded: LoadedModel | None, trace_requests: list[TraceRequest], config: EngineConfig,
                 label: str = ""):
        self.label = label
        self.trace_requests = trace_requests
        self.engine = LLMEngine(loaded, config) if loaded is not None else None
        self.config = self.engine.config if self.engine else config
        self.recorder = RunRecorder(trace_requests, self.config.max_num_seqs, self.config.max_num_batched_tokens)
        # One engine, possibly stepped by several threads (a shared run computed in the background while
        # sessions play the steps already done): a step, and the frame it records, happen under this lock.
        self._stepping = threading.RLock()
        self._stepped = threading.Condition()  # notified after every step, for those waiting on a frame
        self._background = False  # a thread of its own steps it to the end (compute_in_background)
        self._summary: dict | None = None
        self.stop_reason: str | None = None  # set when the run was cut off before every request ended
        self._ended = self.engine is None
        if self.engine:
            for r in trace_requests:
                r.add_to(self.engine)
            self._ended = not self.engine.has_unfinished()

    @classmethod
    def replay(cls, trace_requests: list[TraceRequest], snapshots: list[StepSnapshot], config: EngineConfig,
               label: str = "") -> "LiveRun":
        run = cls(None, trace_requests, config, label)
        for snap in snapshots:
            run.recorder.add(snap)
        run.recorder.snapshots.freeze()
        return run

    @property
    def snapshots(self) -> list[StepSnapshot]:
        return self.recorder.snapshots

    @property
    def frames(self) -> int:
        return len(self.recorder.snapshots)

    @property
    def done(self) -> bool:
        # a flag set once the last frame is recorded: the engine's own state is mid-step while another
        # thread steps it (its last request may be finished before the frame that shows it exists)
        return self._ended

    def _step(self) -> None:
        if self.frames >= self.MAX_STEPS and self.stop_reason is None:
            self.stop_reason = stop_at_limit(self.engine, self.MAX_STEPS)
        self.recorder.add(self.engine.step())  # past the limit: the step that records the aborts
        if not self.engine.has_unfinished():
            self._finish()

    def _finish(self) -> None:
        """The run has ended: what is left is a recording. The engine (its KV cache tensors, its
        request objects) is let go, and the snapshots are packed tighter."""
        self.engine = None
        self.recorder.snapshots.freeze()
        self._ended = True

    def ensure(self, frame: int) -> None:
        """Until frame `frame` exists (or the run ends): stepped here, or waited for while a background
        thread steps the run. (Not stepped in turn with it: a lock let go and taken again at once by the
        stepping thread can keep a waiting session out for many steps.)"""
        while self.frames <= frame and not self.done:
            if self._background:
                with self._stepped:
                    self._stepped.wait_for(lambda: self.frames > frame or self.done or not self._background, 1.0)
            else:
                self._step_once()

    @property
    def in_background(self) -> bool:
        """A thread of its own is stepping the run to its end: readers wait for frames rather than step it."""
        return self._background

    def compute_in_background(self, stop: threading.Event | None = None,
                              on_end: Callable[[BaseException | None], None] | None = None) -> threading.Thread:
        """Step the run to its end in a new thread. `stop`: set by another thread, the run stops after its
        current step. `on_end(error)` is called in that thread when it stops (error: what a step raised).
        If the run stops before its end, whoever needs a frame steps it again."""
        self._background = True

        def compute() -> None:
            error = None
            try:
                self.run_to_end(stop=stop)
            except Exception as e:  # handed to on_end: the thread itself has nobody to tell
                error = e
            if not self.done:
                self._background = False
                with self._stepped:
                    self._stepped.notify_all()
            if on_end:
                on_end(error)
        thread = threading.Thread(target=compute, name=f"run:{self.label}", daemon=True)
        thread.start()
        return thread

    def _step_once(self) -> None:
        with self._stepping:
            if not self.done:  # another thread may have taken the last step while this one waited
                self._step()
        with self._stepped:
            self._stepped.notify_all()

    def run_to_end(self, on_progress: Callable[[float], None] | None = None,
                   stop: threading.Event | None = None) -> None:
        """`stop`: set by another thread, the run stops after the step it is taking (and is not done)."""
        total = max(1, len(self.trace_requests))
        while not self.done and not (stop and stop.is_set()):
            self._step_once()  # the lock is let go between steps: a session can read meanwhile
            if on_progress and self.frames % 16 == 0:
                finished = sum(1 for r in self.recorder.requests.values() if r.finish_step is not None)
                on_progress(finished / total)

    def summary(self) -> dict:
        if self._summary is None or not self.done:
            summary = self.recorder.summary()
            summary["stopped"] = self.stop_reason
            if not self.done:
                return summary
            self._summary = summary
        return self._summary
