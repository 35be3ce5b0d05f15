"""A request's life: WAITING -> RUNNING (prefill, maybe in chunks, then decode) -> FINISHED.

Preemption sends a RUNNING request back to the queue as PREEMPTED; it is waiting again and
runs on when rescheduled (its cache recomputed, or swapped back in).
Every transition is stamped in wall seconds and in engine steps, which is all the metrics need.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.messages import EngineMessage
    from engine.sampling_params import SamplingParams


class RequestStatus(str, enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    PREEMPTED = "preempted"  # back in the waiting queue, cache taken away
    FINISHED = "finished"


class FinishReason(str, enum.Enum):
    STOP = "stop"  # an end-of-sequence or stop token
    LENGTH = "length"  # max_tokens or the model's context
    ABORTED = "aborted"
    REJECTED = "rejected"  # could never run: too long, or bigger than the whole cache


ALLOWED = {
    RequestStatus.WAITING: {RequestStatus.RUNNING, RequestStatus.FINISHED},
    RequestStatus.RUNNING: {RequestStatus.PREEMPTED, RequestStatus.FINISHED},
    RequestStatus.PREEMPTED: {RequestStatus.RUNNING, RequestStatus.FINISHED},
    RequestStatus.FINISHED: set(),
}


@dataclass
class SLO:
    """Service-level objectives; None means none. Steps make results reproducible, seconds real."""

    ttft_steps: int | None = None
    ttft_s: float | None = None
    latency_steps: int | None = None


@dataclass(frozen=True)
class ServiceClass:
    """What a request is served as: its class's name (chat, report, ...) and its service-level objectives."""

    name: str = "default"
    slo: SLO = field(default_factory=SLO)


DEFAULT_SERVICE = ServiceClass()


@dataclass(eq=False)  # identity: `request in running` must not compare every field
class Request:
    request_id: str
    prompt_token_ids: list[int]
    sampling_params: SamplingParams
    arrival_step: int = 0
    request_class: str = "default"
    priority: int = 0  # lower runs first, as in vLLM
    slo: SLO = field(default_factory=SLO)
    prompt: str | None = None
    seq_no: int = 0  # order of arrival at the engine; breaks ties in every policy

    status: RequestStatus = RequestStatus.WAITING
    finish_reason: FinishReason | None = None
    error: str | None = None  # English text; error_code + error_params let the lab translate it
    error_code: str | None = None
    error_params: dict = field(default_factory=dict)
    output_token_ids: list[int] = field(default_factory=list)
    num_computed_tokens: int = 0  # tokens whose K/V are in the cache
    block_table: list[int] = field(default_factory=list)  # physical blocks, in logical order
    cpu_block_table: list[int] = field(default_factory=list)  # where a swapped-out cache waits
    num_cached_tokens: int = 0  # prompt tokens found in the prefix cache
    num_registered_blocks: int = 0  # leading blocks already named in the prefix cache
    slot: int | None = None  # which of the max_num_seqs slots it occupies (for the views)
    num_preemptions: int = 0
    num_recomputed_tokens: int = 0

    # stamps: wall seconds (time.perf_counter) and engine steps
    arrival_time: float | None = None
    first_scheduled_time: float | None = None
    first_scheduled_step: int | None = None
    first_token_time: float | None = None
    first_token_step: int | None = None
    token_times: list[float] = field(default_factory=list)
    token_steps: list[int] = field(default_factory=list)
    finish_time: float | None = None
    finish_step: int | None = None
    generator: torch.Generator | None = field(default=None, repr=False)
    _block_hashes: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self):
        if self.sampling_params.seed is not None:
            self.generator = torch.Generator().manual_seed(self.sampling_params.seed)

    # --- sizes -------------------------------------------------------------
    @property
    def num_prompt_tokens(self) -> int:
        return len(self.prompt_token_ids)

    @property
    def num_output_tokens(self) -> int:
        return len(self.output_token_ids)

    @property
    def num_tokens(self) -> int:
        return self.num_prompt_tokens + self.num_output_tokens

    @property
    def all_token_ids(self) -> list[int]:
        return self.prompt_token_ids + self.output_token_ids

    @property
    def max_total_tokens(self) -> int:
        """Prompt plus the most it may generate: what a reserve-ahead allocator must hold."""
        return self.num_prompt_tokens + self.sampling_params.max_tokens

    def full_block_hashes(self, block_size: int) -> list[int]:
        """Prefix-cache names of every full block of known tokens: each hashes its tokens and the
        previous block's name, so equal names mean equal prefixes."""
        hashes, full = self._block_hashes, self.num_tokens // block_size
        if len(hashes) < full:
            tokens = self.all_token_ids
            for i in range(len(hashes), full):
                prev = hashes[-1] if hashes else None
                hashes.append(hash((prev, tuple(tokens[i * block_size:(i + 1) * block_size]))))
        return hashes[:full]

    @property
    def swapped(self) -> bool:
        return bool(self.cpu_block_table)

    @property
    def is_prefill(self) -> bool:
        """More than the newest token is missing from the cache (a prompt, or a recompute)."""
        return self.num_computed_tokens < self.num_tokens - 1

    @property
    def is_finished(self) -> bool:
        return self.status == RequestStatus.FINISHED

    # --- transitions -------------------------------------------------------
    def _move(self, new: RequestStatus) -> None:
        if new not in ALLOWED[self.status]:
            raise RuntimeError(f"request {self.request_id}: illegal transition {self.status.value} -> {new.value}")
        self.status = new

    def arrive(self, now: float) -> None:
        self.arrival_time = now

    def start_running(self, step: int, now: float) -> None:
        self._move(RequestStatus.RUNNING)
        if self.first_scheduled_step is None:
            self.first_scheduled_step, self.first_scheduled_time = step, now

    def preempt(self) -> None:
        """Back to the queue. With recompute, every token so far must be prefilled again."""
        self._move(RequestStatus.PREEMPTED)
        self.num_preemptions += 1

    def append_token(self, token_id: int, step: int, now: float) -> None:
        self.output_token_ids.append(token_id)
        self.token_steps.append(step)
        self.token_times.append(now)
        if self.first_token_step is None:
            self.first_token_step, self.first_token_time = step, now

    def finish(self, reason: FinishReason, step: int, now: float, error: EngineMessage | str | None = None) -> None:
        """`error`: why it ended early; a plain string (an abort's reason) has no code to translate."""
        self._move(RequestStatus.FINISHED)
        self.finish_reason = reason
        if isinstance(error, str):
            self.error = error
        elif error is not None:
            self.error, self.error_code, self.error_params = str(error), error.code, dict(error.params)
        self.finish_step, self.finish_time = step, now

    def check_stop(self, eos_token_ids: tuple[int, ...], max_model_len: int) -> FinishReason | None:
        """After a new token: should the request end?"""
        params, last = self.sampling_params, self.output_token_ids[-1]
        if not params.ignore_eos and last in eos_token_ids:
            return FinishReason.STOP
        if last in params.stop_token_ids:
            return FinishReason.STOP
        if self.num_output_tokens >= params.max_tokens or self.num_tokens >= max_model_len:
            return FinishReason.LENGTH
        return None
