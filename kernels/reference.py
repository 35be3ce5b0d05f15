"""Torch reference ops for the paged KV cache: fast on CPU, and the oracle for the Triton kernels.

Paged attention here is literally "gather the request's blocks by its block table, then plain
attention": paging changes where K/V live, not what attention computes.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from kernels.metadata import AttentionMetadata


def store_kv(k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
             slot_mapping: torch.Tensor) -> None:
    """Write new tokens' K/V (`[tokens, kv_heads, head_dim]`) to their slots in the cache."""
    keep = slot_mapping >= 0
    slots = slot_mapping[keep]
    num_kv_heads, head_dim = k_cache.shape[-2:]
    k_cache.view(-1, num_kv_heads, head_dim)[slots] = k[keep].to(k_cache.dtype)
    v_cache.view(-1, num_kv_heads, head_dim)[slots] = v[keep].to(v_cache.dtype)


def gather_kv(cache: torch.Tensor, block_tables: torch.Tensor) -> torch.Tensor:
    """`[seqs, blocks]` physical ids -> `[seqs, blocks * block_size, kv_heads, head_dim]`, in logical order."""
    seqs, blocks = block_tables.shape
    # index_select over the flattened table: one copy, several times faster on CPU than advanced indexing
    return cache.index_select(0, block_tables.reshape(-1)).view(seqs, blocks * cache.shape[1], *cache.shape[2:])


def _attend(q, k, v, q_pos, key_len, scale):
    """q `[B, Lq, Hq, D]` at absolute positions q_pos `[B, Lq]`; k/v `[B, Lk, Hkv, D]`, valid up to key_len `[B]`."""
    key_pos = torch.arange(k.shape[1], device=q.device)
    mask = (key_pos[None, None, :] <= q_pos[:, :, None]) & (key_pos[None, None, :] < key_len[:, None, None])
    out = F.scaled_dot_product_attention(
        q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float(),
        attn_mask=mask[:, None], scale=scale, enable_gqa=True)
    return out.transpose(1, 2)


def _plan(meta: AttentionMetadata):
    """Split the batch once per step: decode rows attend together, each prefill chunk alone."""
    if "torch" in meta.cache:
        return meta.cache["torch"]
    device = meta.seq_lens.device
    decode, prefill, start = [], [], 0
    for i, (q_len, s_len) in enumerate(zip(meta.query_lens_list, meta.seq_lens_list)):
        (decode if q_len == 1 else prefill).append((i, start, q_len, s_len))
        start += q_len
    plan = {"prefill": prefill}
    if decode:
        seq_idx = torch.tensor([d[0] for d in decode], device=device)
        blocks_needed = -(-max(d[3] for d in decode) // meta.block_size)
        plan["decode"] = dict(
            rows=torch.tensor([d[1] for d in decode], device=device),
            tables=meta.block_tables[seq_idx, :blocks_needed],
            seq_lens=meta.seq_lens[seq_idx].long())
    meta.cache["torch"] = plan
    return plan


def paged_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                    meta: AttentionMetadata, scale: float) -> torch.Tensor:
    """Attention for a packed batch `q [tokens, q_heads, head_dim]` over the paged cache.

    Each request's new tokens see its cached context plus, causally, each other.
    """
    out = torch.empty_like(q)
    plan = _plan(meta)
    if "decode" in plan:
        d = plan["decode"]
        k = gather_kv(k_cache, d["tables"])
        v = gather_kv(v_cache, d["tables"])
        q_pos = (d["seq_lens"] - 1)[:, None]
        out[d["rows"]] = _attend(q[d["rows"]][:, None], k, v, q_pos, d["seq_lens"], scale)[:, 0].to(q.dtype)
    for seq, start, q_len, s_len in plan["prefill"]:
        n_blocks = -(-s_len // meta.block_size)
        table = meta.block_tables[seq:seq + 1, :n_blocks]
        k, v = gather_kv(k_cache, table)[:, :s_len], gather_kv(v_cache, table)[:, :s_len]
        q_pos = torch.arange(s_len - q_len, s_len, device=q.device)[None]
        key_len = torch.tensor([s_len], device=q.device)
        out[start:start + q_len] = _attend(q[None, start:start + q_len], k, v, q_pos, key_len, scale)[0].to(q.dtype)
    return out


def dense_causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """Plain causal attention of one sequence `[seq, heads, dim]`: what paging must reproduce."""
    return F.scaled_dot_product_attention(
        q.transpose(0, 1)[None].float(), k.transpose(0, 1)[None].float(), v.transpose(0, 1)[None].float(),
        is_causal=True, scale=scale, enable_gqa=True)[0].transpose(0, 1)
