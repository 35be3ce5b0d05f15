"""Triton kernels for the paged KV cache: store K/V by slot_mapping, and paged attention.

On CUDA they compile for real. On CPU they run under the Triton interpreter, which reads
TRITON_INTERPRET when a kernel is *defined*: import this module through
`kernels.load_triton_kernels()`, which sets the variable first.

The attention kernel handles a packed, variable-length batch in one launch: a decode row is just a
chunk of one query token. Each program owns BLOCK_M query tokens of one request and one query
head, walks that request's block table page by page, and keeps an online softmax in fp32
(the Triton fused-attention tutorial's loop, with the K/V address taken from the block table).
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
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
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
    offs_n = tl.arange(0, BLOCK_N)  # key index within a page
    offs_d = tl.arange(0, BLOCK_D)
    m_mask = offs_m < q_len
    d_mask = offs_d < HEAD_DIM
    q = tl.load(q_ptr + (q_start + offs_m)[:, None] * stride_qt + head * stride_qh + offs_d[None, :],
                mask=m_mask[:, None] & d_mask[None, :], other=0.0).to(tl.float32)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    # The last query row of this tile sees keys up to context_len + its index: stop there.
    last_key = tl.minimum(seq_len, context_len + (tile + 1) * BLOCK_M)
    for page in range(tl.cdiv(last_key, PAGE)):
        block = tl.load(block_tables_ptr + seq * stride_bt + page).to(tl.int64)
        key_pos = page * PAGE + offs_n
        n_mask = (offs_n < PAGE) & (key_pos < seq_len)
        kv_off = block * stride_cb + offs_n[:, None] * stride_cs + kv_head * stride_ch + offs_d[None, :]
        kv_mask = n_mask[:, None] & d_mask[None, :]
        k = tl.load(k_cache_ptr + kv_off, mask=kv_mask, other=0.0).to(tl.float32)
        v = tl.load(v_cache_ptr + kv_off, mask=kv_mask, other=0.0).to(tl.float32)

        s = tl.dot(q, tl.trans(k)) * scale
        causal = key_pos[None, :] <= (context_len + offs_m)[:, None]
        s = tl.where(causal & n_mask[None, :], s, float("-inf"))
        # Key 0 is visible to every row, so m_new is finite from the first page on.
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(out_ptr + (q_start + offs_m)[:, None] * stride_ot + head * stride_oh + offs_d[None, :],
             out.to(out_ptr.dtype.element_ty), mask=m_mask[:, None] & d_mask[None, :])


def paged_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                    meta: AttentionMetadata, scale: float, block_m: int = 16) -> torch.Tensor:
    q = q.contiguous()
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
        BLOCK_M=block_m, BLOCK_N=max(16, triton.next_power_of_2(block_size)),
        BLOCK_D=max(16, triton.next_power_of_2(head_dim)))
    return out
