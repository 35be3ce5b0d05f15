"""The KV books: a `BlockPool` of physical blocks, and `KVAllocator`, what every KV layout is.

`KVAllocator` owns the books both layouts keep: the device pool, the CPU pool for swap preemption,
the requests holding device blocks, the `CacheOps` the runner must carry out before the next
forward pass, and each request's `slot_mapping`. Its two subclasses decide *which* blocks a
request gets and when: the paged `BlockManager` and the `ContiguousAllocator` that paging replaced.
The scheduler asks one thing of either: `allocate_slots`, which makes room for a request's next
tokens or returns None, as in vLLM v1.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from engine.core.request import Request


class BlockPool:
    """Physical blocks: a free list (oldest freed first) and a reference count per block."""

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

    def take_specific(self, block_id: int) -> None:
        self.free_ids.remove(block_id)
        self.ref_counts[block_id] = 1

    def share(self, block_id: int) -> None:
        if self.ref_counts[block_id] == 0:
            self.take_specific(block_id)
        else:
            self.ref_counts[block_id] += 1

    def release(self, block_id: int) -> None:
        assert self.ref_counts[block_id] > 0, f"block {block_id} released twice"
        self.ref_counts[block_id] -= 1
        if self.ref_counts[block_id] == 0:
            self.free_ids.append(block_id)


@dataclass
class CacheOps:
    """Copies the runner must make before the forward pass, in this order (a record, handed over whole)."""

    swap_out: list[tuple[int, int]] = field(default_factory=list)  # (device block, cpu block)
    swap_in: list[tuple[int, int]] = field(default_factory=list)  # (cpu block, device block)
    copy: list[tuple[int, int]] = field(default_factory=list)  # copy-on-write (src, dst)

    def __bool__(self) -> bool:
        return bool(self.swap_out or self.swap_in or self.copy)


class BlockViews(NamedTuple):
    """Per physical block, what the views draw: plain tuples, built in one pass per step."""

    owner: tuple[str | None, ...]  # first request holding it
    fill: tuple[int, ...]  # token slots written
    ref_count: tuple[int, ...]
    cached: tuple[bool, ...]  # holds a prefix-cache hash (revivable even when free)


class KVAllocator(ABC):
    """A KV layout: the books every layout keeps, and the allocation each subclass decides.

    A subclass decides which blocks a request gets: `_plan` works out what room for its next tokens
    takes (or None when memory is short) and changes nothing; `_apply` carries a plan out. The
    scheduler's act (`allocate_slots`) and its side-effect-free question (`can_allocate`) are both
    built on `_plan`, so a check and the allocation it predicts cannot disagree."""

    kv_layout: str

    def __init__(self, num_blocks: int, block_size: int, max_model_len: int, num_swap_blocks: int = 0):
        self.block_size = block_size
        self.max_model_len = max_model_len
        self.pool = BlockPool(num_blocks)
        self.swap_pool = BlockPool(num_swap_blocks)  # CPU blocks that swap preemption parks caches in
        self.holders: dict[str, Request] = {}  # admitted requests, in admission order: they hold device blocks
        self.ops = CacheOps()

    @property
    def num_blocks(self) -> int:
        return self.pool.num_blocks

    @property
    def num_free_blocks(self) -> int:
        return self.pool.num_free

    # --- what a layout decides -----------------------------------------------------------
    @abstractmethod
    def worst_case_blocks(self, request: Request) -> int:
        """Blocks the request holds at its longest."""

    @abstractmethod
    def _plan(self, request: Request, num_new_tokens: int, lookup_prefix: bool) -> Any | None:
        """What room for the request's next tokens takes (admitting it if it is not a holder), or None
        when memory is short. Changes nothing."""

    @abstractmethod
    def _apply(self, request: Request, plan: Any) -> None:
        """Carry out a plan `_plan` returned, on the same state."""

    def num_computed_tokens(self, request: Request) -> int:
        """The request's computed tokens once admitted now: more than it has if the prefix cache holds its start."""
        return request.num_computed_tokens

    @abstractmethod
    def blocks_needed(self, request: Request, num_new_tokens: int) -> int:
        """The free blocks `allocate_slots(request, num_new_tokens)` would take (to tell a refused request why)."""

    def refusal(self, request: Request) -> str:
        """Why `allocate_slots` refused to admit the request (a `blocked` reason code)."""
        return "memory"  # a layout whose pool can fragment tells fragmentation apart

    def blocks_short(self, request: Request, num_new_tokens: int) -> int:
        """The fewest free blocks added to the pool (at its end) with which `allocate_slots(request,
        num_new_tokens)` would succeed now: 0 when it already would."""
        return max(0, self.blocks_needed(request, num_new_tokens) - self.num_free_blocks)

    @abstractmethod
    def commit(self, request: Request) -> None:
        """After a step has written the request's tokens (a layout with a prefix cache names its full blocks)."""

    # --- what the scheduler asks -----------------------------------------------------------
    def allocate_slots(self, request: Request, num_new_tokens: int, lookup_prefix: bool = True) -> list[int] | None:
        """Room in the cache for the request's next `num_new_tokens` tokens: returns its block table, or None
        (and changes nothing) when memory is short. A request that holds no blocks yet is admitted: its
        prefix-cache hits are taken (unless `lookup_prefix` is False) and a swapped-out cache comes back."""
        plan = self._plan(request, num_new_tokens, lookup_prefix)
        if plan is None:
            return None
        admitting = request.request_id not in self.holders
        if admitting:
            self.holders[request.request_id] = request
        self._apply(request, plan)
        if admitting:
            self._swap_in(request)
        return request.block_table

    def can_allocate(self, request: Request, num_new_tokens: int) -> bool:
        """Whether `allocate_slots` would succeed without the prefix cache: the question, not the act."""
        return self._plan(request, num_new_tokens, lookup_prefix=False) is not None

    def free(self, request: Request) -> None:
        """Give the request's device blocks back; it holds none afterwards."""
        self.commit(request)
        for block_id in reversed(request.block_table):  # the tail first: it is the least likely to be shared
            self.pool.release(block_id)
        request.block_table.clear()
        request.num_registered_blocks = 0
        self.holders.pop(request.request_id, None)

    # --- swap preemption ------------------------------------------------------------------
    def can_swap_out(self, request: Request) -> bool:
        return len(request.block_table) <= self.swap_pool.num_free

    def swap_out(self, request: Request) -> None:
        """Preempt by copying the cache to the CPU pool, then free the device blocks: nothing is recomputed."""
        request.cpu_block_table = [self.swap_pool.take() for _ in request.block_table]
        self.ops.swap_out += zip(request.block_table, request.cpu_block_table)
        self.free(request)

    def _swap_in(self, request: Request) -> None:
        """Bring a swapped-out cache back into the first blocks of the request's new table."""
        for cpu_block, block_id in zip(request.cpu_block_table, request.block_table):
            self.ops.swap_in.append((cpu_block, block_id))
            self.swap_pool.release(cpu_block)
        request.cpu_block_table = []

    def free_swapped(self, request: Request) -> None:
        """A swapped-out request that will never come back (aborted) returns its CPU blocks."""
        for cpu_block in request.cpu_block_table:
            self.swap_pool.release(cpu_block)
        request.cpu_block_table = []

    # --- what the runner reads ----------------------------------------------------------------
    def drain_ops(self) -> CacheOps:
        """The block copies and swaps decided since the last call, for the runner to apply."""
        ops, self.ops = self.ops, CacheOps()
        return ops

    def slot_mapping(self, request: Request, num_new_tokens: int) -> list[int]:
        """Cache slots for the request's next tokens: block * block_size + offset."""
        start, bs, table = request.num_computed_tokens, self.block_size, request.block_table
        return [table[p // bs] * bs + p % bs for p in range(start, start + num_new_tokens)]

    # --- what the views and the checks read ----------------------------------------------------
    def block_cached(self) -> tuple[bool, ...]:
        """Per block: whether it holds a prefix-cache hash."""
        return (False,) * self.num_blocks

    def block_views(self) -> BlockViews:
        n, bs = self.pool.num_blocks, self.block_size
        owner: list[str | None] = [None] * n
        fill = [0] * n
        for rid, req in self.holders.items():
            computed = req.num_computed_tokens
            for i, block_id in enumerate(req.block_table):
                if owner[block_id] is None:
                    owner[block_id] = rid
                written = computed - i * bs
                if written > fill[block_id]:
                    fill[block_id] = min(bs, written)
        return BlockViews(tuple(owner), tuple(fill), tuple(self.pool.ref_counts), self.block_cached())

    def check_invariants(self) -> None:
        """Ref counts equal the number of block tables naming each block; free blocks are unowned."""
        n = self.pool.num_blocks
        counts = [0] * n
        for req in self.holders.values():
            for block_id in req.block_table:
                counts[block_id] += 1
        assert counts == self.pool.ref_counts, "ref counts disagree with block tables"
        free = set(self.pool.free_ids)
        assert len(free) == len(self.pool.free_ids), "a block is on the free list twice"
        assert all(counts[b] == 0 for b in free), "a free block is still in a block table"
        assert len(free) + sum(1 for c in counts if c) == n, "a block leaked"
