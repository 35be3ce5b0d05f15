"""Batchers: which requests run in the next step, and with how many tokens each.

Both batchers share the same model, cache and kernels; only the scheduling differs.
- static: a batch forms only when the previous one has finished entirely. Members that finish
  early leave their slot idle, and nobody new may join until the whole batch is done.
- continuous (vLLM v1 style): every step, running requests get their decode token (or next
  prefill chunk) first, then waiting requests are admitted while slots (`max_num_seqs`), the
  token budget (`max_num_batched_tokens`) and free blocks allow. A finished request frees its
  slot and blocks at once. When blocks run out, the policy's last request is preempted
  (recompute: drop its cache; swap: copy it to the CPU pool, as in the vLLM paper and v0, not v1).
  A preemptive policy (priority, edf) also lets an urgent arrival evict running work, a teaching
  choice; `vllm_v1_semantics` turns that off, as vLLM v1 is (vLLM issue #40004).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.core.allocator import KVAllocator
from engine.config import EngineConfig
from engine.core.policy import Policy
from engine.core.request import FinishReason, Request
from engine.core.wait import Wait


@dataclass
class ScheduledRequest:
    request: Request
    num_new_tokens: int
    is_prefill: bool
    samples: bool  # this chunk reaches the end of the known tokens, so a new token is sampled
    slot: int  # the slot it ran in (for the views)


@dataclass
class SchedulerOutput:
    scheduled: list[ScheduledRequest] = field(default_factory=list)
    admitted: list[str] = field(default_factory=list)
    preempted: list[str] = field(default_factory=list)
    blocked: dict[str, str] = field(default_factory=dict)  # head of the queue -> why it could not start
    waits: dict[str, Wait] = field(default_factory=dict)  # every request still waiting -> why
    failed: dict[str, str] = field(default_factory=dict)  # ran, but its sampling failed -> why (the runner's)


class Scheduler:
    def __init__(self, config: EngineConfig, block_manager: KVAllocator, policy: Policy):
        self.config = config
        self.block_manager = block_manager
        self.policy = policy
        self.waiting: list[Request] = []
        self.running: list[Request] = []
        self.slots: list[str | None] = [None] * config.max_num_seqs

    def add_request(self, request: Request) -> None:
        self.waiting.append(request)

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self, step: int, now: float) -> SchedulerOutput:
        raise NotImplementedError

    # --- pieces both batchers use ------------------------------------------
    def num_new_tokens(self, request: Request, budget: int, computed: int | None = None) -> int:
        """How many of the request's uncached tokens fit this step (0: none)."""
        computed = request.num_computed_tokens if computed is None else computed
        remaining = request.num_tokens - computed
        n = min(remaining, budget)
        if remaining > 1:  # a prefill (or recompute), not a decode
            if not self.config.enable_chunked_prefill:
                return n if n == remaining else 0  # the whole prompt must fit one step
            if self.config.long_prefill_token_threshold:  # a chunking knob: it cannot apply without chunks
                n = min(n, self.config.long_prefill_token_threshold)
        return n

    def schedule_tokens(self, request: Request, n: int, out: SchedulerOutput) -> None:
        """Put `n` of the request's tokens in this step's batch (their cache slots are already allocated)."""
        out.scheduled.append(ScheduledRequest(request, n, request.is_prefill,
                                              request.num_computed_tokens + n == request.num_tokens, request.slot))

    def tokens_to_start(self, request: Request) -> int:
        """The fewest tokens of the budget a waiting request needs to start: one chunk's first token, or its whole
        prompt where prompts are not chunked."""
        remaining = request.num_tokens - self.block_manager.num_computed_tokens(request)
        return remaining if remaining > 1 and not self.config.enable_chunked_prefill else 1

    def try_admit(self, request: Request, budget: int, out: SchedulerOutput, step: int, now: float) -> int:
        """Admit a waiting request with its first chunk if slot, budget and memory allow; returns
        the tokens scheduled (0: it cannot start, and `out.blocked` and `out.waits` say why)."""
        if len(self.running) >= self.config.max_num_seqs:
            why = Wait("slots", len(self.running), self.config.max_num_seqs)
        elif (n := self.num_new_tokens(request, budget, self.block_manager.num_computed_tokens(request))) == 0:
            why = Wait("budget", budget, self.tokens_to_start(request))
        elif self.block_manager.allocate_slots(request, n) is None:
            why = Wait(self.block_manager.refusal(request), self.block_manager.num_free_blocks,
                       self.block_manager.blocks_needed(request, n))
        else:
            self.admit(request, out, step, now)
            self.schedule_tokens(request, n, out)
            return n
        why = why._replace(**self.what_lets_in(request, budget))
        out.blocked[request.request_id] = why.code
        out.waits.setdefault(request.request_id, why)  # preempted in this step: that, and by whom, is its news
        return 0

    def what_lets_in(self, request: Request, budget: int) -> dict:
        """The admission check above asked again, changing nothing, with one limit raised at a time: the smallest
        raise of each knob that alone would pass it (`Wait.more_*`), None where another limit binds as well. It is
        the check as the request's turn found it: with a knob raised the whole step could go otherwise (an urgent
        arrival need not evict anyone, say), which is not what is asked."""
        computed = self.block_manager.num_computed_tokens(request)
        n = self.num_new_tokens(request, budget, computed)
        start = self.tokens_to_start(request)
        short = {"slots": max(0, len(self.running) + 1 - self.config.max_num_seqs),
                 "budget": 0 if n else start - budget,
                 "blocks": self.block_manager.blocks_short(request, n or self.num_new_tokens(request, start, computed))}
        return {f"more_{k}": v if v and not any(short[o] for o in short if o != k) else None
                for k, v in short.items()} | {"asked": True}

    def admit(self, request: Request, out: SchedulerOutput, step: int, now: float) -> None:
        """Move a request the allocator has just admitted from the queue into a slot."""
        self.waiting.remove(request)
        self.running.append(request)
        request.slot = self.slots.index(None)
        self.slots[request.slot] = request.request_id
        request.start_running(step, now)
        out.admitted.append(request.request_id)

    def _leave_running(self, request: Request) -> None:
        self.block_manager.free(request)
        self.running.remove(request)
        self.slots[request.slot] = None
        request.slot = None

    def preempt(self, request: Request, out: SchedulerOutput, why: Wait) -> None:
        """Swap: park the cache in the CPU pool. Recompute (or a full CPU pool): drop it, and every
        token so far is prefilled again later. `why`: its wait (preempted or evicted, and by whom)."""
        out.waits[request.request_id] = why
        if self.config.preemption_mode == "swap" and self.block_manager.can_swap_out(request):
            self.block_manager.swap_out(request)
            self.running.remove(request)
            self.slots[request.slot] = None
            request.slot = None
        else:
            self._leave_running(request)
            request.num_recomputed_tokens += request.num_computed_tokens
            request.num_computed_tokens = 0
        request.preempt()
        self.waiting.append(request)
        out.preempted.append(request.request_id)

    def finish(self, request: Request, reason: FinishReason, step: int, now: float) -> None:
        self._leave_running(request)
        request.finish(reason, step, now)

    def abort(self, request: Request, step: int, now: float, reason: str | None = None) -> None:
        """End a queued or running request at once; every block it holds, device or CPU, goes back."""
        if request in self.running:
            self._leave_running(request)
        else:
            self.waiting.remove(request)
            self.block_manager.free_swapped(request)
        request.finish(FinishReason.ABORTED, step, now, error=reason)

    def close_waits(self, out: SchedulerOutput, rest: Wait) -> SchedulerOutput:
        """Every request still waiting keeps the wait it was given, the others `rest`; a request that runs after
        all (evicted, then let in) has none."""
        waits = out.waits
        out.waits = {r.request_id: waits.get(r.request_id, rest) for r in self.waiting}
        return out

    def postprocess(self, out: SchedulerOutput, sampled: dict[str, int], step: int, now: float,
                    eos_token_ids: tuple[int, ...], max_model_len: int) -> list[Request]:
        """Advance each request by what ran; append sampled tokens; finish those that stop. Those in
        `out.failed` got no token (the engine aborts them next)."""
        finished = []
        for item in out.scheduled:
            request = item.request
            request.num_computed_tokens += item.num_new_tokens
            self.block_manager.commit(request)
            if not item.samples or request.request_id in out.failed:
                continue  # a prefill chunk that does not reach the end yet, or a failed sampling
            request.append_token(sampled[request.request_id], step, now)
            reason = request.check_stop(eos_token_ids, max_model_len)
            if reason is not None:
                self.finish(request, reason, step, now)
                finished.append(request)
        return finished


class ContinuousScheduler(Scheduler):
    def schedule(self, step: int, now: float) -> SchedulerOutput:
        out = SchedulerOutput()
        self.policy.begin_step(self.waiting + self.running, step)
        budget = self.config.max_num_batched_tokens
        if self.policy.preemptive and not self.config.vllm_v1_semantics:
            self.make_room_for_urgent(out, step)

        # 1. Running requests first, in policy order. A request that cannot grow makes room by
        #    preempting the policy's last unscheduled request, possibly itself.
        short_of_memory = False
        unscheduled = self.policy.order(self.running, step)
        while unscheduled and budget > 0:
            request = unscheduled.pop(0)
            n = self.num_new_tokens(request, budget)
            if n == 0:
                continue
            while self.block_manager.allocate_slots(request, n) is None:
                short_of_memory = True
                victim = self.policy.victim(unscheduled + [request], step)
                self.preempt(victim, out, Wait("preempted", behind=request.request_id))
                if victim is request:
                    break
                unscheduled.remove(victim)
            if request in self.running:
                self.schedule_tokens(request, n, out)
                budget -= n

        # 2. Admit waiting requests while slots, budget and blocks allow (not when memory just ran
        #    short: the preempted would only be let back in; with vllm_v1_semantics that is every step with a
        #    preemption, as in vLLM v1). The first one that cannot start blocks those behind it (head-of-line).
        if short_of_memory:
            return self.close_waits(out, Wait("preempting", len(out.preempted)))
        for request in self.policy.order(self.waiting, step):
            if budget == 0:
                return self.close_waits(out, Wait("budget", 0, 1))  # nothing left of it, for anyone
            n = self.try_admit(request, budget, out, step, now)
            if n == 0:
                return self.close_waits(out, Wait("queue", behind=request.request_id))
            budget -= n
        return self.close_waits(out, Wait("queue"))  # none left waiting

    def make_room_for_urgent(self, out: SchedulerOutput, step: int) -> None:
        """The best waiting request may evict running work that the policy ranks below it."""
        waiting = self.policy.order(self.waiting, step)
        if not waiting:
            return
        urgent = waiting[0]
        first_chunk = min(urgent.num_tokens - urgent.num_computed_tokens, self.config.max_num_batched_tokens)
        while self.running and (len(self.running) >= self.config.max_num_seqs
                                or not self.block_manager.can_allocate(urgent, first_chunk)):
            victim = self.policy.victim(self.running, step)
            if not self.policy.outranks(urgent, victim, step):
                return
            self.preempt(victim, out, Wait("evicted", behind=urgent.request_id))


class StaticScheduler(Scheduler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.steps_waited = 0

    def schedule(self, step: int, now: float) -> SchedulerOutput:
        out = SchedulerOutput()
        self.policy.begin_step(self.waiting + self.running, step)
        if not self.running:
            self.form_batch(out, step, now)
        elif self.waiting:
            self.close_waits(out, Wait("batch_running", len(self.running)))
        budget = self.config.max_num_batched_tokens
        for request in self.policy.order(self.running, step):
            n = self.num_new_tokens(request, budget)
            if n == 0:
                continue
            blocks = self.block_manager.allocate_slots(request, n)
            assert blocks is not None, "a static batch reserved its worst case"
            self.schedule_tokens(request, n, out)
            budget -= n
        return out

    def form_batch(self, out: SchedulerOutput, step: int, now: float) -> None:
        """Take up to max_num_seqs waiting requests (fewer after max_wait_steps) whose longest
        possible length fits the free blocks together, so nobody in the batch is ever preempted."""
        waiting = self.policy.order(self.waiting, step)
        if not waiting:
            return
        if len(waiting) < self.config.max_num_seqs and self.steps_waited < self.config.max_wait_steps:
            self.steps_waited += 1
            self.close_waits(out, Wait("batch_forming", len(waiting), self.config.max_num_seqs))
            return
        self.steps_waited = 0
        promised = 0  # blocks the batch's members will still take as they grow (none for a contiguous run)
        for request in waiting[:self.config.max_num_seqs]:
            need = self.block_manager.worst_case_blocks(request)
            if promised + need > self.block_manager.num_free_blocks:
                free = self.block_manager.num_free_blocks - promised  # the check is a count: more blocks pass it
                out.waits[request.request_id] = Wait("memory", free, need, more_blocks=need - free, asked=True)
                self.close_waits(out, Wait("queue", behind=request.request_id))
                return
            # a static batch admits with no tokens (each step then grows it) and does not read the prefix cache
            blocks = self.block_manager.allocate_slots(request, 0, lookup_prefix=False)
            assert blocks is not None, "the batch's worst cases fit the free blocks"
            promised += need - len(blocks)  # a contiguous run is taken whole now: counted once, not twice
            self.admit(request, out, step, now)
        self.close_waits(out, Wait("slots", len(self.running), self.config.max_num_seqs))  # the batch is full


def make_scheduler(config: EngineConfig, block_manager: KVAllocator, policy: Policy) -> Scheduler:
    cls = {"continuous": ContinuousScheduler, "static": StaticScheduler}[config.batcher]
    return cls(config, block_manager, policy)
