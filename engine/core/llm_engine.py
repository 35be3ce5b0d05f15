"""LLMEngine: the step loop. Each step is schedule -> run the model -> postprocess.

    engine = LLMEngine(load_model("tiny"), EngineConfig(max_num_seqs=8))
    engine.add_request("Once upon a time", SamplingParams(max_tokens=32))
    while engine.has_unfinished():
        snapshot = engine.step()
"""
from __future__ import annotations

import dataclasses
import itertools
import numbers
import time

import torch

from engine.core.allocator import KVAllocator
from engine.core.block_manager import BlockManager
from engine.config import EngineConfig, resolve_device, resolve_dtype
from engine.core.contiguous import ContiguousAllocator
from engine.models.loaded import LoadedModel
from engine.models.tokenizer import bos_prefix
from engine.core.policy import policy_for
from engine.core.request import DEFAULT_SERVICE, FinishReason, Request, ServiceClass
from engine.core.runner import ModelRunner
from engine.messages import ConfigError, EngineMessage
from engine.sampling_params import SamplingParams
from engine.core.scheduler import make_scheduler
from engine.core.snapshot import StepResult, StepSnapshot, StepStats, capture, stats
from kernels import TritonUnavailable, backend_label, get_backend, resolve_backend_name


def placement(model: torch.nn.Module) -> tuple[str, str]:
    """(device, dtype name) of a model, read from its weights: where it really runs."""
    weight = next(model.parameters())
    return str(weight.device), str(weight.dtype).removeprefix("torch.")


def runtime_of(model: torch.nn.Module, attention_backend: str = "auto") -> tuple[str, str, str]:
    """(device, dtype, attention backend) an engine over this model runs with: what the sidebar states."""
    device, dtype = placement(model)
    return device, dtype, backend_label(resolve_backend_name(attention_backend, device), device)


def planned_runtime(device: str) -> tuple[str, str, str]:
    """(device, dtype, attention backend) a model loaded on `device` under "auto" will run with."""
    return device, resolve_dtype("auto", device), backend_label(resolve_backend_name("auto", device), device)


def check_placement(config: EngineConfig, model: torch.nn.Module) -> None:
    """The engine runs where the model's weights are; `auto` follows them, an explicit value must agree."""
    device, dtype = placement(model)
    if config.device != "auto":
        asked = torch.device(resolve_device(config.device))
        if asked.type != torch.device(device).type or asked.index not in (None, torch.device(device).index):
            raise ConfigError("config.device_mismatch", asked=config.device, device=device)
    if config.dtype not in ("auto", dtype):
        raise ConfigError("config.dtype_mismatch", asked=config.dtype, dtype=dtype)
    config.device, config.dtype = device, dtype  # recorded in traces as what ran


def triton_unavailable(e: TritonUnavailable) -> ConfigError:
    """Why the Triton backend cannot run here, as an engine message (the kernels know no message codes)."""
    if e.reason == "missing":
        return ConfigError("config.triton_missing", detail=e.detail)
    if e.reason == "imported_first":
        return ConfigError("config.triton_imported_first")
    return ConfigError("config.triton_interpreted")


def make_block_manager(config: EngineConfig) -> KVAllocator:
    if config.kv_layout == "contiguous":
        return ContiguousAllocator(config.num_blocks, config.block_size, config.max_model_len,
                                   config.contiguous_reserve, config.num_swap_blocks)
    return BlockManager(config.num_blocks, config.block_size, config.max_model_len,
                        config.enable_prefix_caching, config.num_swap_blocks)


def encode(tokenizer, text: str) -> list[int]:
    """A prompt's token ids, with the BOS token where the model expects one."""
    return bos_prefix(tokenizer) + tokenizer.encode(text)


class LLMEngine:
    def __init__(self, loaded: LoadedModel, config: EngineConfig | None = None, *, snapshots: bool = True):
        """`snapshots=False`: step() returns StepStats, not a StepSnapshot of the whole cache (benchmarks)."""
        # resolved into a copy: the caller's config keeps its None ("auto") values for the next engine
        config = dataclasses.replace(config, extra=dict(config.extra)) if config else EngineConfig()
        model_cfg = loaded.model.config
        config.validate(model_cfg)  # sets max_model_len where it is None
        check_placement(config, loaded.model)
        if config.num_blocks is None:  # enough for every slot at full length: no preemption by default
            config.num_blocks = config.max_num_seqs * config.blocks_per_seq()
        if config.num_swap_blocks is None:
            config.num_swap_blocks = config.num_blocks if config.preemption_mode == "swap" else 0
        self.config = config
        self.loaded = loaded
        self.tokenizer = loaded.tokenizer
        self.eos_token_ids = tuple(set(model_cfg.eos_token_ids) | set(loaded.tokenizer.eos_token_ids))
        try:
            self.backend = get_backend(config.attention_backend, config.device)
        except TritonUnavailable as e:  # triton missing, or compiled/interpreted mode fixed otherwise in this process
            raise triton_unavailable(e) from e
        self.block_manager = make_block_manager(config)
        self.scheduler = make_scheduler(config, self.block_manager, policy_for(config))
        self.runner = ModelRunner(loaded.model, config, self.backend)
        self.snapshots = snapshots
        self.requests: dict[str, Request] = {}
        self.pending: list[Request] = []  # added with an arrival step still in the future
        self.rejected_unreported: list[Request] = []
        self.aborted_unreported: list[Request] = []
        self.step_index = 0
        self.stalled_steps = 0
        self._ids = itertools.count()
        self._t0 = time.perf_counter()

    @property
    def device(self) -> str:
        return placement(self.runner.model)[0]

    @property
    def dtype(self) -> str:
        return placement(self.runner.model)[1]

    @property
    def attention_backend(self) -> str:
        """The backend's own label: torch, triton, or triton (interpreter)."""
        return self.backend.name

    def now(self) -> float:
        return time.perf_counter() - self._t0

    # --- requests --------------------------------------------------------------
    def add_request(self, prompt: str | list[int], sampling_params: SamplingParams | None = None, *,
                    request_id: str | None = None, arrival_step: int | None = None, priority: int = 0,
                    service: ServiceClass = DEFAULT_SERVICE) -> Request:
        """Queue a request (`priority`: lower runs first under the priority policy, as in vLLM). One that can
        never run is finished at once as REJECTED, with the reason."""
        seq_no = next(self._ids)
        request_id = request_id or f"r{seq_no}"
        if request_id in self.requests:
            raise ConfigError("config.request_id_in_use", request_id=request_id)
        if isinstance(prompt, str):
            text, token_ids = prompt, self.encode(prompt)
        else:
            text, token_ids = None, self.check_token_ids(prompt)
        request = Request(request_id, token_ids, sampling_params or SamplingParams(),
                          arrival_step=self.step_index if arrival_step is None else max(arrival_step, self.step_index),
                          request_class=service.name, priority=priority, slo=service.slo, prompt=text, seq_no=seq_no)
        self.requests[request_id] = request
        reason = self.rejection_reason(request)
        if reason:
            request.arrive(self.now())
            request.finish(FinishReason.REJECTED, self.step_index, self.now(), error=reason)
            self.rejected_unreported.append(request)
        else:
            self.pending.append(request)
        return request

    def check_token_ids(self, token_ids) -> list[int]:
        """Prompt ids given directly must be integers inside the vocabulary, or the embedding fails mid-step."""
        ids, vocab = list(token_ids), self.loaded.model.config.vocab_size
        for i, t in enumerate(ids):
            if not isinstance(t, numbers.Integral) or isinstance(t, bool):
                raise ConfigError("config.token_id_not_int", position=i, value=t)
            if not 0 <= t < vocab:
                raise ConfigError("config.token_id_beyond_vocab", token=t, position=i, last=vocab - 1, vocab_size=vocab)
        return [int(t) for t in ids]

    def encode(self, text: str) -> list[int]:
        return encode(self.tokenizer, text)

    def rejection_reason(self, request: Request) -> EngineMessage | None:
        n, limit = request.num_prompt_tokens, self.config.max_model_len
        if n == 0:
            return EngineMessage("reject.empty_prompt")
        if n > limit:
            return EngineMessage("reject.prompt_too_long", {"n": n, "limit": limit, "excess": n - limit})
        need = self.block_manager.worst_case_blocks(request)
        if need > self.block_manager.num_blocks:
            return EngineMessage("reject.bigger_than_cache", {"need": need, "n": n,
                                 "max_tokens": request.sampling_params.max_tokens,
                                 "num_blocks": self.block_manager.num_blocks})
        return None

    def abort(self, request_id: str, reason: str | None = None) -> None:
        """End a request now (a client went away). Its blocks are freed at once; the next
        snapshot lists it under `aborted`."""
        request = self.requests[request_id]
        if request.is_finished:
            return
        if request in self.pending:
            self.pending.remove(request)
            request.finish(FinishReason.ABORTED, self.step_index, self.now(), error=reason)
        else:
            self.scheduler.abort(request, self.step_index, self.now(), reason)
        self.aborted_unreported.append(request)

    def abort_unfinished(self, reason: str) -> int:
        """Abort every request still queued or running; returns how many there were."""
        unfinished = [rid for rid, r in self.requests.items() if not r.is_finished]
        for rid in unfinished:
            self.abort(rid, reason)
        return len(unfinished)

    def has_unfinished(self) -> bool:
        return bool(self.pending or self.scheduler.has_unfinished() or self.rejected_unreported
                    or self.aborted_unreported)

    # --- the step loop -----------------------------------------------------------
    def step(self) -> StepSnapshot | StepStats:
        step, t_start = self.step_index, self.now()
        arrived = self._admit_arrivals(step, t_start)

        out = self.scheduler.schedule(step, self.now())  # 1. schedule
        t_model = time.perf_counter()
        ops = self.block_manager.drain_ops()
        self.runner.apply_cache_ops(ops)  # swap out/in, copy-on-write: before anything is written
        sampled, slot_mapping, out.failed = (self.runner.run(out.scheduled, self.block_manager)  # 2. run the model
                                             if out.scheduled else ({}, [], {}))
        model_time = time.perf_counter() - t_model
        finished = self.scheduler.postprocess(out, sampled, step, self.now(),  # 3. postprocess
                                              self.eos_token_ids, self.config.max_model_len)
        for request_id, why in out.failed.items():  # one request failed: it ends alone, the batch goes on
            self.abort(request_id, why)

        self._watch_for_stall(out)
        rejected, self.rejected_unreported = self.rejected_unreported, []
        aborted, self.aborted_unreported = self.aborted_unreported, []
        end = self.now()
        result = StepResult(step=step, time_s=end, step_time_s=end - t_start, model_time_s=model_time, out=out,
                            sampled=sampled, slot_mapping=slot_mapping, arrived=arrived, finished=finished,
                            rejected=rejected, aborted=aborted, ops=ops)
        self.step_index += 1
        if not self.snapshots:
            return stats(result, self.scheduler)
        return capture(result, self.scheduler, self.block_manager)

    def _admit_arrivals(self, step: int, now: float) -> list[str]:
        arrived = [r for r in self.pending if r.arrival_step <= step]
        for request in arrived:
            self.pending.remove(request)
            request.arrive(now)
            self.scheduler.add_request(request)
        return [r.request_id for r in arrived]

    def _watch_for_stall(self, out) -> None:
        """A scheduler that holds work but schedules nothing for long is a bug, not a wait."""
        stuck = not out.scheduled and self.scheduler.has_unfinished()
        self.stalled_steps = self.stalled_steps + 1 if stuck else 0
        if self.stalled_steps > self.config.max_wait_steps + 2:
            raise RuntimeError(f"the scheduler made no progress for {self.stalled_steps} steps "
                               f"with {len(self.scheduler.waiting)} waiting and {len(self.scheduler.running)} running")

    def run_until_done(self, on_step=None, max_steps: int = 1_000_000) -> list[StepSnapshot]:
        snapshots = []
        while self.has_unfinished() and len(snapshots) < max_steps:
            snapshot = self.step()
            snapshots.append(snapshot)
            if on_step is not None:
                on_step(snapshot)
        return snapshots
