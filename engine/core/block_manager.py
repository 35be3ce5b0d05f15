"""The paged KV layout: a pool of physical blocks and each request's block table.

Blocks are pages, tokens are bytes, requests are processes: a request's `block_table` maps its
logical block i (tokens i*block_size ...) to any free physical block. It grows one block at a
time as tokens arrive, so the only waste is the unfilled tail of each request's last block.

`allocate_slots` (the `KVAllocator` interface) admits or grows a request, or refuses with None;
how many blocks that takes is worked out once, in `_plan`, and `_apply` carries the plan out. Data
movement it implies (copy-on-write, swap in) is queued for the runner to carry out before the next
forward pass.

Prefix caching: a full block is named by a hash of its tokens and of the block before it, so
requests that start with the same tokens (a shared system prompt) find and share the same
physical blocks, counted by ref counts. A freed block keeps its hash until it is reused, so a
later request can still revive it.
"""
from __future__ import annotations

from engine.core.allocator import KVAllocator
from engine.config import cdiv
from engine.core.request import Request


class BlockManager(KVAllocator):
    """The paged layout: blocks taken one at a time as tokens arrive, shared through the prefix cache."""

    kv_layout = "paged"

    def __init__(self, num_blocks: int, block_size: int, max_model_len: int, enable_prefix_caching: bool = False,
                 num_swap_blocks: int = 0):
        super().__init__(num_blocks, block_size, max_model_len, num_swap_blocks)
        self.enable_prefix_caching = enable_prefix_caching
        self.cached: dict[int, int] = {}  # prefix hash -> block id
        self.block_hash: list[int | None] = [None] * num_blocks
        self.block_tokens: list[tuple[int, ...] | None] = [None] * num_blocks  # what a cached block holds

    def blocks_for(self, num_tokens: int) -> int:
        return cdiv(num_tokens, self.block_size)

    def worst_case_blocks(self, request: Request) -> int:
        return self.blocks_for(min(request.max_total_tokens, self.max_model_len))

    # --- prefix caching ------------------------------------------------------
    def _prefix_hits(self, request: Request) -> list[int]:
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

    def _hit_tokens(self, request: Request, hits: list[int]) -> int:
        # The last token is always computed again: its logits pick the next token.
        return min(len(hits) * self.block_size, request.num_tokens - 1)

    def num_computed_tokens(self, request: Request) -> int:
        hits = self._prefix_hits(request)
        return self._hit_tokens(request, hits) if hits else request.num_computed_tokens

    def commit(self, request: Request) -> None:
        """Cache the request's newly full blocks, so that later requests can share them."""
        if not self.enable_prefix_caching or not request.block_table:
            return
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

    # --- the one place that counts blocks: admission and growth alike ----------------------
    def _plan(self, request: Request, num_new_tokens: int, lookup_prefix: bool) -> tuple | None:
        """(hits, copy_index, num_fresh): the cached blocks an admitted request starts with (shared, or revived
        if free), the index of the shared block to copy before writing into it (copy-on-write) or None, and
        the blocks then taken from the free list."""
        plan, need = self._plan_and_need(request, num_new_tokens, lookup_prefix)
        return plan if need <= self.pool.num_free else None

    def blocks_needed(self, request: Request, num_new_tokens: int) -> int:
        return self._plan_and_need(request, num_new_tokens, lookup_prefix=True)[1]

    def _plan_and_need(self, request: Request, num_new_tokens: int, lookup_prefix: bool) -> tuple[tuple, int]:
        """The plan, and the free blocks it takes (fresh ones, a copy-on-write, free cached blocks revived)."""
        hits = self._prefix_hits(request) if lookup_prefix and request.request_id not in self.holders else []
        if hits:
            computed, table, own_ref = self._hit_tokens(request, hits), hits, 1  # the hit adds its own reference
        else:
            computed, table, own_ref = request.num_computed_tokens, request.block_table, 0
        i = computed // self.block_size
        copy_index = i if i < len(table) and self.pool.ref_counts[table[i]] + own_ref > 1 else None
        num_fresh = max(0, self.blocks_for(computed + num_new_tokens) - len(table))
        need = num_fresh + (copy_index is not None)
        if hits:
            need += sum(1 for b in hits if self.pool.ref_counts[b] == 0)  # free now, revived by the hit
        return (hits, copy_index, num_fresh), need

    def _apply(self, request: Request, plan: tuple) -> None:
        hits, copy_index, num_fresh = plan
        if hits:
            for block_id in hits:
                self.pool.share(block_id)
                request.block_table.append(block_id)
            request.num_computed_tokens = self._hit_tokens(request, hits)
            request.num_cached_tokens = request.num_computed_tokens
            request.num_registered_blocks = len(hits)
        if copy_index is not None:
            shared, own = request.block_table[copy_index], self._take()
            self.ops.copy.append((shared, own))
            request.block_table[copy_index] = own
            self.pool.release(shared)
        for _ in range(num_fresh):
            request.block_table.append(self._take())

    # --- what the views and the checks read ---------------------------------
    def block_cached(self) -> tuple[bool, ...]:
        return tuple(h is not None for h in self.block_hash)

    def check_invariants(self) -> None:
        super().check_invariants()
        assert all(self.block_hash[b] == h for h, b in self.cached.items()), "prefix cache index is stale"
        assert all((self.block_hash[b] is None) == (self.block_tokens[b] is None) for b in range(self.num_blocks)), \
            "a cached block lost its token ids"
