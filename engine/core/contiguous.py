"""The contiguous KV layout: what paging replaced.

At admission a request reserves one contiguous run of blocks for its prompt plus its maximum
output (or max_model_len), first-fit in one linear arena, and holds it until it finishes. Same
model, same kernels: the run is just a block table of consecutive blocks. It shows the two
classic failures: slots reserved but never used, and a request refused although the free space
adds up to enough (external fragmentation: no single hole is big enough).
"""
from __future__ import annotations

from engine.core.allocator import KVAllocator
from engine.config import EngineConfig, cdiv
from engine.core.request import Request


def reserved_blocks(max_total_tokens: int, block_size: int, max_model_len: int | None, reserve: str) -> int:
    """Blocks reserved at admission: prompt + max_tokens, or the whole context; never past max_model_len."""
    tokens = max_total_tokens
    if max_model_len is not None:
        tokens = max_model_len if reserve == "max_model_len" else min(tokens, max_model_len)
    return cdiv(tokens, block_size)


def blocks_to_reserve(num_prompt_tokens: int, max_tokens: int, config: EngineConfig) -> int:
    """What the contiguous layout reserves for a request under an engine's (resolved) config; the
    views use it to explain a refusal from a snapshot alone."""
    return reserved_blocks(num_prompt_tokens + max_tokens, config.block_size, config.max_model_len,
                           config.contiguous_reserve)


class ContiguousAllocator(KVAllocator):
    """The reserve-ahead layout: one run of blocks per request, first fit, reserved whole at admission."""

    kv_layout = "contiguous"

    def __init__(self, num_blocks: int, block_size: int, max_model_len: int, reserve: str = "max_tokens",
                 num_swap_blocks: int = 0):
        super().__init__(num_blocks, block_size, max_model_len, num_swap_blocks)
        self.reserve = reserve

    def reservation(self, request: Request) -> int:
        return reserved_blocks(request.max_total_tokens, self.block_size, self.max_model_len, self.reserve)

    def worst_case_blocks(self, request: Request) -> int:
        return self.reservation(request)

    def first_fit(self, length: int) -> int | None:
        """Start of the first run of `length` free blocks, or None."""
        run = 0
        for block_id, refs in enumerate(self.pool.ref_counts):
            run = run + 1 if refs == 0 else 0
            if run == length:
                return block_id - length + 1
        return None

    def _plan(self, request: Request, num_new_tokens: int, lookup_prefix: bool) -> range | None:
        """The blocks to take: at admission the whole reservation, or nothing (no prefix cache: a run is never
        shared); afterwards none, since the reservation already holds every token the request may produce."""
        if request.request_id in self.holders:
            assert cdiv(request.num_computed_tokens + num_new_tokens, self.block_size) <= len(request.block_table)
            return range(0)
        length = self.reservation(request)
        start = self.first_fit(length)
        return None if start is None else range(start, start + length)

    def _apply(self, request: Request, plan: range) -> None:
        for block_id in plan:
            self.pool.take_specific(block_id)
            request.block_table.append(block_id)

    def commit(self, request: Request) -> None:
        pass  # nothing to name: no prefix cache

    def blocks_needed(self, request: Request, num_new_tokens: int) -> int:
        return self.reservation(request)  # in one unbroken run, at admission

    def blocks_short(self, request: Request, num_new_tokens: int) -> int:
        """First fit found no hole, so only the free run at the pool's end can grow into one long enough."""
        if request.request_id in self.holders or self.first_fit(self.reservation(request)) is not None:
            return 0
        tail = next((i for i, refs in enumerate(reversed(self.pool.ref_counts)) if refs), self.num_blocks)
        return self.reservation(request) - tail

    def refusal(self, request: Request) -> str:
        """Why a request cannot be admitted: not enough memory, or no hole big enough."""
        return "fragmentation" if self.pool.num_free >= self.reservation(request) else "memory"
