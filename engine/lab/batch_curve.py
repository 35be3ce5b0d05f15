"""Why batch?: decode speed against batch size, measured so that a busy machine cannot turn the curve over.

A shared server runs many sessions at once, and wall-clock time counts every moment the measuring thread
waited for a core. So the curve is measured the way a careful benchmark is:
- steps in turn: every round decodes every batch size at once, one step of each in turn (1, 2, 4 ... then
  again), so a burst of load slows every size alike instead of one size a lot;
- medians with their spread: each figure is the median over the rounds, shown with its min–max range;
- paired ratios: the speed-up at batch b is the median over rounds of (b's speed / batch 1's speed in the
  same round), so load that comes and goes between rounds cancels;
- CPU time beside wall time: time.thread_time counts only the moments the measuring thread ran on a core;
- one torch thread: an op split over two threads waits for the slower one, and on a shared machine the other
  core is someone else's (measured here: batch 2 took 4.3 ms a step on two threads from a worker thread,
  1.6 ms on one);
- one measurement at a time per process (`OneAtATime`): sessions asking for the same curve share one
  measurement instead of measuring against each other.
"""
from __future__ import annotations

import os
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Hashable

import torch

from engine.config import EngineConfig
from engine.core.llm_engine import LLMEngine, runtime_of
from engine.models.loaded import LoadedModel
from engine.sampling_params import SamplingParams

ROUNDS = 5  # each batch size measured this often, in turn
THREADS = 1  # torch threads while measuring (see above)


def _decoding_engine(loaded: LoadedModel, batch: int, new_tokens: int, prompt: str) -> LLMEngine:
    """An engine holding `batch` requests that will decode `new_tokens` tokens each."""
    engine = LLMEngine(loaded, EngineConfig(max_num_seqs=batch, max_model_len=256))
    for i in range(batch):
        engine.add_request(f"{i}: {prompt}", SamplingParams(temperature=0.0, max_tokens=new_tokens, ignore_eos=True))
    return engine


def measure_together(loaded: LoadedModel, sizes, new_tokens: int = 16, prompt: str = "Tell me a story.") -> dict:
    """Decode speed at each batch size, {batch: figures}: an engine per size, their steps taken in turn (one step of
    batch 1, one of batch 2, ... and again), so every size is timed through the same fraction of a second, under
    the same load from other processes. A size measured seconds after another meets other load: on a busy server
    that alone turned the curve over.

    Only steps that ran no prefill count, so a figure is the steady decode rate of that batch. Each step is timed
    in wall time and in the calling thread's CPU time, and the figures are the fastest step's: load can only make a
    step slower, never faster, so the fastest of a dozen steps is the one it disturbed least (as timeit takes the
    best of its repeats). `mean_ms_per_step` keeps the plain mean."""
    engines = {b: _decoding_engine(loaded, b, new_tokens, prompt) for b in sizes}
    timed = {b: ([], [], []) for b in sizes}  # wall, cpu, tokens of each decode-only step
    for _ in range(4 * (new_tokens + max(sizes)) + 16):  # far more than a run needs: a stuck engine ends here
        live = [b for b in sizes if engines[b].has_unfinished()]
        if not live:
            break
        for b in live:
            w0, c0 = time.perf_counter(), time.thread_time()
            snap = engines[b].step()
            c1, w1 = time.thread_time(), time.perf_counter()
            if snap.num_decode_tokens and not snap.num_prefill_tokens:
                for values, value in zip(timed[b], (w1 - w0, c1 - c0, snap.num_decode_tokens)):
                    values.append(value)
    figures = {}
    for b, (wall, cpu, tokens) in timed.items():
        per_step = statistics.median(tokens)  # every sequence decodes every step: `batch` tokens each
        figures[b] = {"batch": b, "steps": len(wall), "tok_per_step": per_step, "tok_per_s": per_step / min(wall),
                      "ms_per_step": 1000 * min(wall), "cpu_ms_per_step": 1000 * min(cpu),
                      "mean_ms_per_step": 1000 * sum(wall) / len(wall), "wall_s": sum(wall), "cpu_s": sum(cpu)}
    return figures


def measure_decode(loaded: LoadedModel, batch: int, new_tokens: int = 16, prompt: str = "Tell me a story.") -> dict:
    """Decode speed at one batch size, measured now (`measure_together` of that size alone)."""
    return measure_together(loaded, [batch], new_tokens, prompt)[batch]


def _spread(values: list[float]) -> tuple[float, float, float]:
    """(median, min, max)."""
    return statistics.median(values), min(values), max(values)


def curve_rows(samples: dict[int, list[dict]]) -> list[dict]:
    """One row per batch size from its samples (one per round, in round order): medians and min–max ranges
    of tokens/s, wall and CPU ms per step, and of the speed-up and step cost against the smallest size,
    taken round by round (a ratio of two figures measured in the same fraction of a second, not of two medians)."""
    sizes = sorted(samples)
    base = samples[sizes[0]]
    rows = []
    for b in sizes:
        mine = samples[b]
        row = {"batch": b, "reps": len(mine)}
        for key in ("tok_per_s", "ms_per_step", "cpu_ms_per_step"):
            row[key], row[f"{key}_min"], row[f"{key}_max"] = _spread([s[key] for s in mine])
        ratios = {"speedup": [s["tok_per_s"] / one["tok_per_s"] for s, one in zip(mine, base)],
                  "step_cost": [s["ms_per_step"] / one["ms_per_step"] for s, one in zip(mine, base)],
                  "cpu_step_cost": [s["cpu_ms_per_step"] / one["cpu_ms_per_step"] for s, one in zip(mine, base)
                                    if one["cpu_ms_per_step"] > 0]}
        for key, values in ratios.items():
            if values:
                row[key], row[f"{key}_min"], row[f"{key}_max"] = _spread(values)
        rows.append(row)
    return rows


@dataclass
class Curve:
    """A measured curve and where and when it was measured."""
    rows: list[dict]
    order: list[int]  # the batch sizes in the order they were measured
    rounds: int
    new_tokens: int
    device: str  # what the engine ran on: "cpu", "cuda:0"
    cores: int  # the cores this process may run on
    started: float  # time.time() when the measurement began
    wall_s: float  # how long it took
    cpu_s: float  # the measuring thread's CPU time over the whole measurement
    threads: int = 1  # torch's threads while measuring

    def only(self, sizes) -> "Curve":
        """The same measurement, showing only these batch sizes (which it must hold)."""
        keep = set(sizes)
        return Curve([r for r in self.rows if r["batch"] in keep], [b for b in self.order if b in keep],
                      self.rounds, self.new_tokens, self.device, self.cores, self.started, self.wall_s, self.cpu_s,
                      self.threads)


def cores() -> int:
    """The cores this process may run on (its affinity where the OS says, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def measure_batch_curve(loaded: LoadedModel, sizes, new_tokens: int = 16, rounds: int = ROUNDS,
                        on_progress: Callable[[float, int], None] | None = None) -> Curve:
    """Decode speed per batch size after a warm-up: `rounds` rounds, each measuring every size at once, their steps
    in turn (`measure_together`). on_progress(fraction done, batch size) for each size at the end of its round."""
    sizes = sorted(set(sizes))
    started, w0, c0 = time.time(), time.perf_counter(), time.thread_time()
    before = torch.get_num_threads()
    torch.set_num_threads(THREADS)  # this thread's, and the default of threads started meanwhile: restored below
    try:
        measure_decode(loaded, 1, 2)  # warm-up: first calls pay one-time costs
        samples: dict[int, list[dict]] = {b: [] for b in sizes}
        order = []
        for rnd in range(rounds):
            measured = measure_together(loaded, sizes, new_tokens)
            for i, b in enumerate(sizes):
                samples[b].append(measured[b])
                order.append(b)
                if on_progress:
                    on_progress((rnd * len(sizes) + i + 1) / (rounds * len(sizes)), b)
    finally:
        torch.set_num_threads(before)
    return Curve(curve_rows(samples), order, rounds, new_tokens, runtime_of(loaded.model)[0], cores(), started,
                 time.perf_counter() - w0, time.thread_time() - c0, THREADS)


@dataclass
class Job:
    """One measurement: computed by a thread of its own, waited for by any number of sessions."""
    key: Hashable
    done: threading.Event = field(default_factory=threading.Event)
    progress: float = 0.0  # fraction done, for the progress bars of everyone waiting
    last: int | None = None  # the batch size measured last
    queued: bool = True  # waiting for another measurement to finish before it starts
    result: object = None
    error: BaseException | None = None

    def wait(self, on_wait: Callable[["Job"], None] | None = None, poll_s: float = 0.25):
        """The result, once computed (its error raised here if it failed); on_wait(self) every poll_s meanwhile."""
        while not self.done.wait(poll_s):
            if on_wait:
                on_wait(self)
        if self.error is not None:
            raise self.error
        return self.result


class OneAtATime:
    """Measurements made one at a time in this process and kept, so sessions never measure against each other.

    `request(key, compute)` returns the job computing `key`: a new one only when none is kept or running for
    that key (or `again`, once the kept one is done), else the same one, so concurrent requests share one
    measurement. A job waits for the one before it to end before it starts (a lock), even for another key.
    compute(job) runs in the job's own thread (so its CPU time is the measurement's alone, and a session
    that reloads its page meanwhile does not stop it), may update job.progress, and returns the result."""

    def __init__(self):
        self._measuring = threading.Lock()  # held while a measurement runs
        self._state = threading.Lock()  # guards the dicts below
        self._jobs: dict[Hashable, Job] = {}  # the latest job per key
        self._kept: dict[Hashable, object] = {}  # the latest result per key
        self.computed = 0  # measurements made by this process

    def kept(self, key: Hashable):
        """The latest result for `key`, or None."""
        with self._state:
            return self._kept.get(key)

    def find(self, fits: Callable[[Hashable], bool]) -> tuple[Hashable, object] | None:
        """A kept (key, result) whose key fits, the latest first; or None."""
        with self._state:
            for key in reversed(list(self._kept)):
                if fits(key):
                    return key, self._kept[key]
        return None

    def running(self, key: Hashable) -> Job | None:
        """The job measuring `key` now (or queued to), if any."""
        with self._state:
            job = self._jobs.get(key)
        return job if job and not job.done.is_set() else None

    def request(self, key: Hashable, compute: Callable[[Job], object], again: bool = False) -> Job:
        with self._state:
            job = self._jobs.get(key)
            if job and not job.done.is_set():
                return job  # being measured: share it
            if job and job.error is None and key in self._kept and not again:
                return job
            job = self._jobs[key] = Job(key)
        threading.Thread(target=self._run, args=(job, compute), name=f"measure:{key}", daemon=True).start()
        return job

    def _run(self, job: Job, compute: Callable[[Job], object]) -> None:
        with self._measuring:
            job.queued = False
            try:
                job.result = compute(job)
                with self._state:
                    self._kept.pop(job.key, None)  # re-inserted last: `find` prefers the newest
                    self._kept[job.key] = job.result
                    self.computed += 1
            except BaseException as e:  # handed to every session waiting: this thread has nobody to tell
                job.error = e
            finally:
                job.done.set()

    def forget(self) -> None:
        """Drop every kept result (running jobs still finish and keep theirs)."""
        with self._state:
            self._kept.clear()
            self._jobs = {k: j for k, j in self._jobs.items() if not j.done.is_set()}
