"""The model runner: the only place that turns requests into flat tensors.

The scheduler deals in requests; the runner packs this step's tokens back to back, asks the
block manager where each new token's K/V go (`slot_mapping`), hands the model the block tables,
and samples one token for every request whose chunk reached the end of its known tokens.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from engine.models.llama import PagedContext
from engine.core.sampler import sample
from kernels import AttentionBackend, AttentionMetadata

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.config import EngineConfig
    from engine.core.allocator import CacheOps, KVAllocator
    from engine.core.scheduler import ScheduledRequest
    from engine.models.llama import LlamaForCausalLM


class ModelRunner:
    def __init__(self, model: LlamaForCausalLM, config: EngineConfig, backend: AttentionBackend):
        """`config`: resolved (its device and dtype are the weights'): the cache is `num_blocks` x `block_size`
        token slots per layer, plus `num_swap_blocks` on the CPU for swap preemption."""
        cfg, device, dtype = model.config, config.device, getattr(torch, config.dtype)
        self.model, self.backend, self.device = model, backend, device
        shape = (config.num_blocks, config.block_size, cfg.num_key_value_heads, cfg.head_dim)
        # per layer: K and V, [num_blocks, block_size, num_kv_heads, head_dim]
        self.kv_caches = [(torch.zeros(shape, dtype=dtype, device=device),
                           torch.zeros(shape, dtype=dtype, device=device))
                          for _ in range(cfg.num_hidden_layers)]
        # the CPU-side pool that swap preemption parks caches in
        swap_shape = (config.num_swap_blocks, *shape[1:])
        self.swap_caches = [(torch.zeros(swap_shape, dtype=dtype), torch.zeros(swap_shape, dtype=dtype))
                            for _ in range(cfg.num_hidden_layers)] if config.num_swap_blocks else []

    def apply_cache_ops(self, ops: CacheOps) -> None:
        """Move whole blocks, every layer, K and V: swap out, then swap in, then copy-on-write."""
        if not ops:
            return
        for (k, v), (cpu_k, cpu_v) in zip(self.kv_caches, self.swap_caches or [(None, None)] * len(self.kv_caches)):
            for src, dst in ops.swap_out:
                cpu_k[dst].copy_(k[src])
                cpu_v[dst].copy_(v[src])
            for src, dst in ops.swap_in:
                k[dst].copy_(cpu_k[src])
                v[dst].copy_(cpu_v[src])
            for src, dst in ops.copy:
                k[dst].copy_(k[src])
                v[dst].copy_(v[src])

    def run(self, scheduled: list[ScheduledRequest],
            block_manager: KVAllocator) -> tuple[dict[str, int], list[int], dict[str, str]]:
        """One forward pass over every scheduled token.

        Returns {request_id: sampled token}, the slot_mapping used (for the views), and {request_id: why its
        sampling failed} for the requests that got no token."""
        input_ids, positions, slot_mapping, logits_indices = [], [], [], []
        query_lens, seq_lens, block_tables = [], [], []
        for item in scheduled:
            request, n = item.request, item.num_new_tokens
            start = request.num_computed_tokens
            input_ids += request.all_token_ids[start:start + n]
            positions += range(start, start + n)
            slot_mapping += block_manager.slot_mapping(request, n)
            query_lens.append(n)
            seq_lens.append(start + n)
            block_tables.append(request.block_table)
            if item.samples:
                logits_indices.append(len(input_ids) - 1)

        meta = AttentionMetadata.build(query_lens, seq_lens, block_tables, slot_mapping,
                                       block_manager.block_size, self.device)
        as_tensor = lambda xs: torch.tensor(xs, dtype=torch.long, device=self.device)  # noqa: E731
        with torch.inference_mode():
            logits = self.model.forward_paged(as_tensor(input_ids), as_tensor(positions),
                                              PagedContext(self.backend, meta, self.kv_caches),
                                              as_tensor(logits_indices))
        sampling = [item.request for item in scheduled if item.samples]
        if not sampling:
            return {}, slot_mapping, {}
        tokens, failed = sample(logits, [r.sampling_params for r in sampling], [r.generator for r in sampling])
        return ({r.request_id: t for row, (r, t) in enumerate(zip(sampling, tokens)) if row not in failed},
                slot_mapping, {sampling[row].request_id: why for row, why in failed.items()})
