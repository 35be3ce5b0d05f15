"""The paged KV cache's memory manager: a pool of physical blocks and each request's block table.

Blocks are pages, tokens are bytes, requests are processes: a request's `block_table` maps its
logical block i (tokens i*block_size ...) to any free physical block. It grows one block at a
time as tokens arrive, so the only waste is the unfilled tail of each request's last block.

Methods come as predicate/action pairs (`can_allocate`/`allocate`, `can_append`/`append_slots`,
`can_swap_out`/`swap_out`): the scheduler asks first, then acts. Data movement the decisions
imply (copy-on-write, swap out/in) is queued as `CacheOps` for the runner to carry out before
the next forward pass.

Prefix caching: a full block is named by a hash of its tokens and of the block before it, so
requests that start with the same tokens (a shared system prompt) find and share the same
physical blocks, counted by ref counts. A freed block keeps its hash until it is reused, so a
later request can still revive it.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from engine.request import Request


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


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


class BlockManager:
    kv_layout = "paged"

    def __init__(self, num_blocks: int, block_size: int, max_model_len: int, enable_prefix_caching: bool = False,
                 num_swap_blocks: int = 0):
        self.block_size = block_size
        self.max_model_len = max_model_len
        self.pool = BlockPool(num_blocks)
        self.swap_pool = BlockPool(num_swap_blocks)
        self.enable_prefix_caching = enable_prefix_caching
        self.holders: dict[str, Request] = {}  # requests that hold device blocks now
        self.cached: dict[int, int] = {}  # prefix hash -> block id
        self.block_hash: list[int | None] = [None] * num_blocks
        self.block_tokens: list[tuple[int, ...] | None] = [None] * num_blocks  # what a cached block holds
        self.ops = CacheOps()

    @property
    def num_blocks(self) -> int:
        return self.pool.num_blocks

    @property
    def num_free_blocks(self) -> int:
        return self.pool.num_free

    def blocks_for(self, num_tokens: int) -> int:
        return cdiv(num_tokens, self.block_size)

    def worst_case_blocks(self, request: Request) -> int:
        """Blocks the request holds at its longest."""
        return self.blocks_for(min(request.max_total_tokens, self.max_model_len))

    def drain_ops(self) -> CacheOps:
        ops, self.ops = self.ops, CacheOps()
        return ops

    # --- prefix caching ------------------------------------------------------
    def prefix_hits(self, request: Request) -> list[int]:
        """Cached blocks matching the start of a new request's tokens (looked up, not taken)."""
        if not self.enable_prefix_caching or request.num_computed_tokens or request.cpu_block_table:
            return []
        hits, bs, tokens = [], self.block_size, request.all_token_ids
        for i, h in enumerate(request.full_block_hashes(self.block_size)):
            block_id = self.cached.get(h)
            # a hash names a block, the tokens prove it: a collision must not lend another prompt's K/V
            if block_id is None or self.block_tokens[block_id] != tuple(tokens[i * bs:(i + 1) * bs]):
                break
            hits.append(block_id)
        return hits

    def hit_tokens(self, request: Request, hits: list[int]) -> int:
        # The last token is always computed again: its logits pick the next token.
        return min(len(hits) * self.block_size, request.num_tokens - 1)

    def _register_full_blocks(self, request: Request) -> None:
        """Name the request's newly completed blocks so that later requests can share them."""
        hashes, tokens = request.full_block_hashes(self.block_size), request.all_token_ids
        full = min(request.num_computed_tokens // self.block_size, len(hashes))
        for i in range(request.num_registered_blocks, full):
            block_id, h = request.block_table[i], hashes[i]
            if h not in self.cached and self.block_hash[block_id] is None:
                self.cached[h] = block_id
                self.block_hash[block_id] = h
                self.block_tokens[block_id] = tuple(tokens[i * self.block_size:(i + 1) * self.block_size])
        request.num_registered_blocks = max(request.num_registered_blocks, full)

    def _take(self) -> int:
        """A free block; if it still carries a prefix hash, that cache entry is evicted."""
        block_id = self.pool.take()
        h = self.block_hash[block_id]
        if h is not None:
            del self.cached[h]
            self.block_hash[block_id] = self.block_tokens[block_id] = None
        return block_id

    # --- how many new blocks a step needs ---------------------------------------
    def blocks_needed(self, request: Request, num_new_tokens: int, hits: list[int] = ()) -> int:
        computed = self.hit_tokens(request, hits) if hits else request.num_computed_tokens
        table = len(hits) if hits else len(request.block_table)
        need = max(0, self.blocks_for(computed + num_new_tokens) - table)
        if self._first_write_is_shared(request, computed, hits):
            need += 1  # copy-on-write
        revived = sum(1 for b in hits if self.pool.ref_counts[b] == 0)  # free now, taken by the hit
        return need + revived

    def _first_write_is_shared(self, request: Request, computed: int, hits) -> bool:
        table = hits or request.block_table
        i = computed // self.block_size
        if i >= len(table):
            return False
        extra = 1 if hits else 0  # the hit itself will add a reference
        return self.pool.ref_counts[table[i]] + extra > 1

    # --- admission of a waiting request --------------------------------------
    def can_allocate(self, request: Request, num_new_tokens: int, hits: list[int] = ()) -> bool:
        return self.blocks_needed(request, num_new_tokens, hits) <= self.pool.num_free

    def allocate(self, request: Request, num_new_tokens: int, hits: list[int] = ()) -> None:
        assert not request.block_table, f"{request.request_id} already holds blocks"
        self.holders[request.request_id] = request
        for block_id in hits:
            self.pool.share(block_id)
            request.block_table.append(block_id)
        if hits:
            request.num_computed_tokens = self.hit_tokens(request, hits)
            request.num_cached_tokens = request.num_computed_tokens
            request.num_registered_blocks = len(hits)
        swapped = request.cpu_block_table
        self._grow(request, num_new_tokens)
        if swapped:  # bring the swapped-out cache back into the first blocks of the new table
            for cpu_block, block_id in zip(swapped, request.block_table):
                self.ops.swap_in.append((cpu_block, block_id))
                self.swap_pool.release(cpu_block)
            request.cpu_block_table = []

    # --- growth of a running request (next prefill chunk, or one decode token) ---
    def refusal(self, request: Request) -> str:
        """Why a request cannot be admitted now. Paged memory never fragments: any free block serves."""
        return "memory"

    def can_append(self, request: Request, num_new_tokens: int = 1) -> bool:
        return self.blocks_needed(request, num_new_tokens) <= self.pool.num_free

    def append_slots(self, request: Request, num_new_tokens: int = 1) -> None:
        self._grow(request, num_new_tokens)

    def _grow(self, request: Request, num_new_tokens: int) -> None:
        self._copy_on_write(request)
        for _ in range(self.blocks_for(request.num_computed_tokens + num_new_tokens) - len(request.block_table)):
            request.block_table.append(self._take())

    def _copy_on_write(self, request: Request) -> None:
        """Before writing into a block another request also holds, give this request its own copy."""
        i = request.num_computed_tokens // self.block_size
        if i < len(request.block_table) and self.pool.ref_counts[request.block_table[i]] > 1:
            shared, own = request.block_table[i], self._take()
            self.ops.copy.append((shared, own))
            request.block_table[i] = own
            self.pool.release(shared)

    # --- giving blocks back ----------------------------------------------------------
    def free(self, request: Request) -> None:
        self.commit(request)
        for block_id in reversed(request.block_table):  # the tail first: it is the least likely to be shared
            self.pool.release(block_id)
        request.block_table.clear()
        request.num_registered_blocks = 0
        self.holders.pop(request.request_id, None)

    def free_swapped(self, request: Request) -> None:
        """A swapped-out request that will never come back (aborted) returns its CPU blocks."""
        for cpu_block in request.cpu_block_table:
            self.swap_pool.release(cpu_block)
        request.cpu_block_table = []

    def can_swap_out(self, request: Request) -> bool:
        return len(request.block_table) <= self.swap_pool.num_free

    def swap_out(self, request: Request) -> None:
        """Preempt by copying the cache to the CPU pool: nothing is recomputed when it comes back."""
        request.cpu_block_table = [self.swap_pool.take() for _ in request.block_table]
        self.ops.swap_out += zip(request.block_table, request.cpu_block_table)
        self.free(request)

    def commit(self, request: Request) -> None:
        """After a step has written the request's tokens: cache its newly full blocks."""
        if self.enable_prefix_caching and request.block_table:
            self._register_full_blocks(request)

    # --- addresses -----------------------------------------------------------
    def slot_mapping(self, request: Request, num_new_tokens: int) -> list[int]:
        """Cache slots for the request's next tokens: block * block_size + offset."""
        start, bs, table = request.num_computed_tokens, self.block_size, request.block_table
        return [table[p // bs] * bs + p % bs for p in range(start, start + num_new_tokens)]

    # --- what the views and the metrics read ---------------------------------
    def block_views(self) -> BlockViews:
        n, bs = self.num_blocks, self.block_size
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
        return BlockViews(tuple(owner), tuple(fill), tuple(self.pool.ref_counts),
                          tuple(h is not None for h in self.block_hash))

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
        assert all(self.block_hash[b] == h for h, b in self.cached.items()), "prefix cache index is stale"
        assert all((self.block_hash[b] is None) == (self.block_tokens[b] is None) for b in range(self.num_blocks)), \
            "a cached block lost its token ids"
