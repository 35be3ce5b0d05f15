"""The paged KV cache's memory manager: a pool of physical blocks and each request's block table.

Blocks are pages, tokens are bytes, requests are processes: a request's `block_table` maps its
logical block i (tokens i*block_size ...) to any free physical block. It grows one block at a
time as tokens arrive, so the only waste is the unfilled tail of each request's last block.

Methods come as predicate/action pairs (`can_allocate`/`allocate`, `can_append`/`append_slots`):
the scheduler asks first, then acts (the `KVAllocator` interface). Data movement the decisions
imply (copy-on-write, swap out/in) is queued in the shared `BlockTables` for the runner to carry
out before the next forward pass.

Prefix caching: a full block is named by a hash of its tokens and of the block before it, so
requests that start with the same tokens (a shared system prompt) find and share the same
physical blocks, counted by ref counts. A freed block keeps its hash until it is reused, so a
later request can still revive it.
"""
from __future__ import annotations

from engine.core.allocator import BlockTables, BlockViews, SharedBooks
from engine.config import cdiv
from engine.core.request import Request


class BlockManager(SharedBooks):
    kv_layout = "paged"

    def __init__(self, num_blocks: int, block_size: int, max_model_len: int, enable_prefix_caching: bool = False,
                 num_swap_blocks: int = 0):
        self.block_size = block_size
        self.max_model_len = max_model_len
        self.tables = BlockTables(num_blocks, block_size, num_swap_blocks)
        self.pool, self.swap_pool = self.tables.pool, self.tables.swap_pool
        self.enable_prefix_caching = enable_prefix_caching
        self.cached: dict[int, int] = {}  # prefix hash -> block id
        self.block_hash: list[int | None] = [None] * num_blocks
        self.block_tokens: list[tuple[int, ...] | None] = [None] * num_blocks  # what a cached block holds

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
        self._grow(request, num_new_tokens)
        self.tables.swap_in(request)

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
            self.tables.ops.copy.append((shared, own))
            request.block_table[i] = own
            self.pool.release(shared)

    # --- giving blocks back ----------------------------------------------------------
    def free(self, request: Request) -> None:
        self.commit(request)
        self.tables.free(request)
        request.num_registered_blocks = 0

    def swap_out(self, request: Request) -> None:
        """Preempt by copying the cache to the CPU pool: nothing is recomputed when it comes back."""
        self.tables.swap_out(request)
        self.free(request)

    def commit(self, request: Request) -> None:
        """After a step has written the request's tokens: cache its newly full blocks."""
        if self.enable_prefix_caching and request.block_table:
            self._register_full_blocks(request)

    # --- what the views and the metrics read ---------------------------------
    def block_views(self) -> BlockViews:
        return self.tables.block_views(tuple(h is not None for h in self.block_hash))

    def check_invariants(self) -> None:
        self.tables.check_invariants()
        assert all(self.block_hash[b] == h for h, b in self.cached.items()), "prefix cache index is stale"
        assert all((self.block_hash[b] is None) == (self.block_tokens[b] is None) for b in range(self.num_blocks)), \
            "a cached block lost its token ids"
