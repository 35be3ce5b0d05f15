"""The paged KV cache's memory manager: a pool of physical blocks and each request's block table.

Blocks are pages, tokens are bytes, requests are processes: a request's `block_table` maps its
logical block i (tokens i*block_size ... ) to any free physical block. It grows one block at a
time as tokens arrive, so the only waste is the unfilled tail of each request's last block.

Every method comes as a predicate/action pair (`can_allocate`/`allocate`,
`can_append`/`append_slots`): the scheduler asks first, then acts.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from engine.request import Request


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


class BlockPool:
    """Physical blocks: a free list and a reference count per block."""

    def __init__(self, num_blocks: int):
        self.num_blocks = num_blocks
        self.ref_counts = [0] * num_blocks
        self.free_ids: deque[int] = deque(range(num_blocks))

    @property
    def num_free(self) -> int:
        return len(self.free_ids)

    def take(self) -> int:
        block_id = self.free_ids.popleft()
        self.ref_counts[block_id] = 1
        return block_id

    def share(self, block_id: int) -> None:
        self.ref_counts[block_id] += 1

    def release(self, block_id: int) -> None:
        self.ref_counts[block_id] -= 1
        if self.ref_counts[block_id] == 0:
            self.free_ids.append(block_id)
        assert self.ref_counts[block_id] >= 0, f"block {block_id} released twice"


@dataclass(frozen=True)
class BlockView:
    """One physical block as the views draw it."""

    owner: str | None  # first request holding it
    fill: int  # token slots written
    ref_count: int


class BlockManager:
    kv_layout = "paged"

    def __init__(self, num_blocks: int, block_size: int):
        self.block_size = block_size
        self.pool = BlockPool(num_blocks)
        self.holders: dict[str, Request] = {}  # requests that hold blocks now

    @property
    def num_blocks(self) -> int:
        return self.pool.num_blocks

    @property
    def num_free_blocks(self) -> int:
        return self.pool.num_free

    def blocks_for(self, num_tokens: int) -> int:
        return cdiv(num_tokens, self.block_size)

    def blocks_needed(self, request: Request, num_new_tokens: int) -> int:
        """New blocks the request needs so that its next `num_new_tokens` tokens have slots."""
        total = self.blocks_for(request.num_computed_tokens + num_new_tokens)
        return max(0, total - len(request.block_table))

    def can_ever_fit(self, request: Request, max_model_len: int) -> bool:
        """Could the whole pool hold this request at its longest? If not, it must be rejected."""
        return self.blocks_for(min(request.max_total_tokens, max_model_len)) <= self.num_blocks

    # --- admission of a waiting request --------------------------------------
    def can_allocate(self, request: Request, num_new_tokens: int) -> bool:
        return self.blocks_needed(request, num_new_tokens) <= self.pool.num_free

    def allocate(self, request: Request, num_new_tokens: int) -> None:
        assert not request.block_table, f"{request.request_id} already holds blocks"
        self.holders[request.request_id] = request
        self._grow(request, num_new_tokens)

    # --- growth of a running request (next prefill chunk, or one decode token) ---
    def can_append(self, request: Request, num_new_tokens: int = 1) -> bool:
        return self.blocks_needed(request, num_new_tokens) <= self.pool.num_free

    def append_slots(self, request: Request, num_new_tokens: int = 1) -> None:
        self._grow(request, num_new_tokens)

    def _grow(self, request: Request, num_new_tokens: int) -> None:
        for _ in range(self.blocks_needed(request, num_new_tokens)):
            request.block_table.append(self.pool.take())

    def free(self, request: Request) -> None:
        for block_id in reversed(request.block_table):
            self.pool.release(block_id)
        request.block_table.clear()
        self.holders.pop(request.request_id, None)

    # --- addresses -----------------------------------------------------------
    def slot_mapping(self, request: Request, num_new_tokens: int) -> list[int]:
        """Cache slots for the request's next tokens: block * block_size + offset."""
        start, bs, table = request.num_computed_tokens, self.block_size, request.block_table
        return [table[p // bs] * bs + p % bs for p in range(start, start + num_new_tokens)]

    # --- what the views and the metrics read ---------------------------------
    def block_views(self) -> list[BlockView]:
        owner: list[str | None] = [None] * self.num_blocks
        fill = [0] * self.num_blocks
        for rid, req in self.holders.items():
            for i, block_id in enumerate(req.block_table):
                if owner[block_id] is None:
                    owner[block_id] = rid
                fill[block_id] = max(fill[block_id], min(self.block_size, max(0, req.num_computed_tokens - i * self.block_size)))
        return [BlockView(owner[b], fill[b], self.pool.ref_counts[b]) for b in range(self.num_blocks)]

    def check_invariants(self) -> None:
        """Ref counts equal the number of block tables naming each block; free blocks are unowned."""
        counts = [0] * self.num_blocks
        for req in self.holders.values():
            for block_id in req.block_table:
                counts[block_id] += 1
        assert counts == self.pool.ref_counts, "ref counts disagree with block tables"
        free = set(self.pool.free_ids)
        assert len(free) == len(self.pool.free_ids), "a block is on the free list twice"
        assert all(counts[b] == 0 for b in free), "a free block is still in a block table"
        assert len(free) + sum(1 for c in counts if c) == self.num_blocks, "a block leaked"
