"""Triton kernels for the paged KV cache: store K/V by slot_mapping, and paged attention.

On CUDA they compile for real. On CPU they run under the Triton interpreter, which reads
TRITON_INTERPRET when a kernel is *defined*: import this module through
`kernels.load_triton_kernels()`, which sets the variable first.

The attention kernel handles a packed, variable-length batch in one launch: a decode row is just a
chunk of one query token. Each program owns BLOCK_M query tokens of one request and one query
head, walks that request's block table page by page, and keeps an online softmax in fp32
(the Triton fused-attention tutorial's loop, with each key's K/V address taken from the block table,
several small pages per key tile).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernels.metadata import AttentionMetadata


@triton.jit
def _store_kv_kernel(k_ptr, v_ptr, k_cache_ptr, v_cache_ptr, slot_mapping_ptr,
                     stride_k, stride_v, ROW: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(slot_mapping_ptr + token)
    if slot < 0:  # padding: nothing to store
        return
    offs = tl.arange(0, BLOCK)
    mask = offs < ROW  # one token's K (all kv heads x head_dim) is one contiguous row
    k = tl.load(k_ptr + token * stride_k + offs, mask=mask)
    v = tl.load(v_ptr + token * stride_v + offs, mask=mask)
    tl.store(k_cache_ptr + slot * ROW + offs, k, mask=mask)
    tl.store(v_cache_ptr + slot * ROW + offs, v, mask=mask)


def store_kv(k, v, k_cache, v_cache, slot_mapping):
    num_tokens = k.shape[0]
    if num_tokens == 0:
        return
    k = k.reshape(num_tokens, -1).contiguous().to(k_cache.dtype)
    v = v.reshape(num_tokens, -1).contiguous().to(v_cache.dtype)
    row = k.shape[1]
    _store_kv_kernel[(num_tokens,)](k, v, k_cache, v_cache, slot_mapping, k.stride(0), v.stride(0),
                                    ROW=row, BLOCK=triton.next_power_of_2(row))


@triton.jit
def _paged_attention_kernel(
        q_ptr, k_cache_ptr, v_cache_ptr, out_ptr,
        cu_seqlens_q_ptr, seq_lens_ptr, block_tables_ptr, scale,
        stride_qt, stride_qh, stride_ot, stride_oh,
        stride_cb, stride_cs, stride_ch, stride_bt,
        GROUP: tl.constexpr, PAGE: tl.constexpr, HEAD_DIM: tl.constexpr,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, PRECISION: tl.constexpr,
        UPCAST: tl.constexpr):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    tile = tl.program_id(2)
    q_start = tl.load(cu_seqlens_q_ptr + seq)
    q_len = tl.load(cu_seqlens_q_ptr + seq + 1) - q_start
    if tile * BLOCK_M >= q_len:
        return
    seq_len = tl.load(seq_lens_ptr + seq)
    context_len = seq_len - q_len  # tokens already cached before this step's chunk
    kv_head = head // GROUP

    offs_m = tile * BLOCK_M + tl.arange(0, BLOCK_M)  # query index within the chunk
    offs_n = tl.arange(0, BLOCK_N)  # key index within a key tile (one or several pages)
    offs_d = tl.arange(0, BLOCK_D)
    m_mask = offs_m < q_len
    d_mask = offs_d < HEAD_DIM
    # q, K and V stay in the cache's dtype: bf16/fp16 dots run on tensor cores; fp32 ones at full
    # precision (PRECISION="ieee"), since compiled fp32 tl.dot would otherwise default to TF32.
    q = tl.load(q_ptr + (q_start + offs_m)[:, None] * stride_qt + head * stride_qh + offs_d[None, :],
                mask=m_mask[:, None] & d_mask[None, :], other=0.0)
    if UPCAST:
        q = q.to(tl.float32)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    # The last query row of this tile sees keys up to context_len + its index: stop there.
    last_key = tl.minimum(seq_len, context_len + (tile + 1) * BLOCK_M)
    for start in range(tl.cdiv(last_key, BLOCK_N)):
        key_pos = start * BLOCK_N + offs_n
        n_mask = key_pos < seq_len
        # each key's physical block, from the block table (several pages per tile when pages are small)
        block = tl.load(block_tables_ptr + seq * stride_bt + key_pos // PAGE, mask=n_mask, other=0).to(tl.int64)
        kv_off = (block * stride_cb + (key_pos % PAGE) * stride_cs)[:, None] + kv_head * stride_ch + offs_d[None, :]
        kv_mask = n_mask[:, None] & d_mask[None, :]
        k = tl.load(k_cache_ptr + kv_off, mask=kv_mask, other=0.0)
        v = tl.load(v_cache_ptr + kv_off, mask=kv_mask, other=0.0)
        if UPCAST:
            k = k.to(tl.float32)
            v = v.to(tl.float32)

        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        causal = key_pos[None, :] <= (context_len + offs_m)[:, None]
        s = tl.where(causal & n_mask[None, :], s, float("-inf"))
        # Key 0 is visible to every row, so m_new is finite from the first tile on.
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(out_ptr + (q_start + offs_m)[:, None] * stride_ot + head * stride_oh + offs_d[None, :],
             out.to(out_ptr.dtype.element_ty), mask=m_mask[:, None] & d_mask[None, :])


def paged_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                    meta: AttentionMetadata, scale: float, block_m: int = 16) -> torch.Tensor:
    """Attention of packed queries `[tokens, q_heads, head_dim]` over the paged cache, computed in the cache's dtype."""
    in_dtype, q = q.dtype, q.contiguous().to(k_cache.dtype)
    num_tokens, num_heads, head_dim = q.shape
    num_blocks, block_size, num_kv_heads, _ = k_cache.shape
    out = torch.empty_like(q)
    if num_tokens == 0:
        return out
    assert k_cache.is_contiguous() and v_cache.is_contiguous()
    grid = (meta.num_seqs, num_heads, triton.cdiv(meta.max_query_len, block_m))
    _paged_attention_kernel[grid](
        q, k_cache, v_cache, out, meta.cu_seqlens_q, meta.seq_lens, meta.block_tables, scale,
        q.stride(0), q.stride(1), out.stride(0), out.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2), meta.block_tables.stride(0),
        GROUP=num_heads // num_kv_heads, PAGE=block_size, HEAD_DIM=head_dim,
        BLOCK_M=block_m, BLOCK_N=key_tile(block_size), BLOCK_D=max(16, triton.next_power_of_2(head_dim)),
        PRECISION="ieee" if k_cache.dtype == torch.float32 else "tf32",
        UPCAST=INTERPRETED and k_cache.dtype != torch.float32)
    return out.to(in_dtype)


# The interpreter's tl.dot on bf16 tiles returns garbage (numpy has no bf16): there, dots run in fp32.
INTERPRETED = type(_paged_attention_kernel).__name__ == "InterpretedFunction"


def key_tile(block_size: int) -> int:
    """Keys per loop iteration: at least 64 (whole small pages per tile), a power of two for tl.dot."""
    return max(64, triton.next_power_of_2(block_size))
