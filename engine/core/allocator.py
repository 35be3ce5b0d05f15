"""What the scheduler asks of a KV layout (`KVAllocator`), and the bookkeeping both layouts share.

Two layouts implement the interface: the paged `BlockManager` and the `ContiguousAllocator` that
paging replaced. They differ in *which* blocks a request gets and when; both keep the same books,
held in a `BlockTables` each owns (composition, not inheritance): a pool of device blocks with
ref counts, a CPU pool for swap preemption, each holder's `block_table`, and the `CacheOps`
(swap out/in, copy-on-write) the runner must carry out before the next forward pass.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

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
    """Copies the runner must make before the forward pass, in this order."""

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


class BlockTables:
    """The books both layouts keep: device and CPU pools, who holds which blocks, pending copies."""

    def __init__(self, num_blocks: int, block_size: int, num_swap_blocks: int = 0):
        self.block_size = block_size
        self.pool = BlockPool(num_blocks)
        self.swap_pool = BlockPool(num_swap_blocks)
        self.holders: dict[str, Request] = {}  # requests that hold device blocks now
        self.ops = CacheOps()

    def drain_ops(self) -> CacheOps:
        ops, self.ops = self.ops, CacheOps()
        return ops

    def swap_in(self, request: Request) -> None:
        """Bring a swapped-out cache back into the first blocks of the request's new table."""
        for cpu_block, block_id in zip(request.cpu_block_table, request.block_table):
            self.ops.swap_in.append((cpu_block, block_id))
            self.swap_pool.release(cpu_block)
        request.cpu_block_table = []

    def free(self, request: Request) -> None:
        for block_id in reversed(request.block_table):  # the tail first: it is the least likely to be shared
            self.pool.release(block_id)
        request.block_table.clear()
        self.holders.pop(request.request_id, None)

    def free_swapped(self, request: Request) -> None:
        """A swapped-out request that will never come back (aborted) returns its CPU blocks."""
        for cpu_block in request.cpu_block_table:
            self.swap_pool.release(cpu_block)
        request.cpu_block_table = []

    def can_swap_out(self, request: Request) -> bool:
        return len(request.block_table) <= self.swap_pool.num_free

    def swap_out(self, request: Request) -> None:
        """Copy the cache to the CPU pool (the caller then frees the device blocks)."""
        request.cpu_block_table = [self.swap_pool.take() for _ in request.block_table]
        self.ops.swap_out += zip(request.block_table, request.cpu_block_table)

    def slot_mapping(self, request: Request, num_new_tokens: int) -> list[int]:
        """Cache slots for the request's next tokens: block * block_size + offset."""
        start, bs, table = request.num_computed_tokens, self.block_size, request.block_table
        return [table[p // bs] * bs + p % bs for p in range(start, start + num_new_tokens)]

    def block_views(self, cached: tuple[bool, ...]) -> BlockViews:
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
        return BlockViews(tuple(owner), tuple(fill), tuple(self.pool.ref_counts), cached)

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


class SharedBooks:
    """What both layouts answer straight from their BlockTables (`self.tables`): who holds blocks, the cache
    ops a step must apply, swap-pool room, and the cache slots a request's next tokens go to."""

    tables: BlockTables

    @property
    def holders(self) -> dict[str, Request]:
        return self.tables.holders

    def drain_ops(self) -> CacheOps:
        """The block copies and swaps decided since the last call, for the runner to apply."""
        return self.tables.drain_ops()

    def can_swap_out(self, request: Request) -> bool:
        return self.tables.can_swap_out(request)

    def free_swapped(self, request: Request) -> None:
        self.tables.free_swapped(request)

    def slot_mapping(self, request: Request, num_new_tokens: int) -> list[int]:
        return self.tables.slot_mapping(request, num_new_tokens)


class KVAllocator(Protocol):
    """Everything the scheduler, the runner, the snapshot and the engine ask of a KV layout: predicate/action
    pairs, as in nano-vllm, and the books' read side. Nobody reaches past it into the layout's tables."""

    kv_layout: str
    block_size: int
    max_model_len: int

    @property
    def holders(self) -> dict[str, Request]: ...  # requests that hold device blocks now
    def drain_ops(self) -> CacheOps: ...
    def can_swap_out(self, request: Request) -> bool: ...
    def free_swapped(self, request: Request) -> None: ...
    def slot_mapping(self, request: Request, num_new_tokens: int) -> list[int]: ...

    @property
    def num_blocks(self) -> int: ...
    @property
    def num_free_blocks(self) -> int: ...
    def worst_case_blocks(self, request: Request) -> int: ...
    def prefix_hits(self, request: Request) -> list[int]: ...
    def hit_tokens(self, request: Request, hits: list[int]) -> int: ...
    def can_allocate(self, request: Request, num_new_tokens: int, hits: list[int] = ()) -> bool: ...
    def allocate(self, request: Request, num_new_tokens: int, hits: list[int] = ()) -> None: ...
    def refusal(self, request: Request) -> str: ...
    def can_append(self, request: Request, num_new_tokens: int = 1) -> bool: ...
    def append_slots(self, request: Request, num_new_tokens: int = 1) -> None: ...
    def commit(self, request: Request) -> None: ...
    def free(self, request: Request) -> None: ...
    def swap_out(self, request: Request) -> None: ...
    def block_views(self) -> BlockViews: ...
    def check_invariants(self) -> None: ...
