"""Paged attention equals dense causal attention; the Triton kernels equal the torch reference."""
import pytest
import torch

from kernels import AttentionMetadata, load_triton_kernels, reference


def make_batch(seq_specs, shape=(4, 2, 16), block_size=4, num_blocks=64, seed=0):
    """seq_specs: [(context_len, query_len)]; shape: (query heads, KV heads, head_dim). Returns the full per-seq
    q/k/v, a filled shuffled cache and metadata.

    The cache holds every token's K/V (the context was cached in earlier steps; the chunk's
    tokens are written this step), laid out in shuffled physical blocks.
    """
    num_heads, num_kv_heads, head_dim = shape
    gen = torch.Generator().manual_seed(seed)
    free = torch.randperm(num_blocks, generator=gen).tolist()
    k_cache = torch.zeros(num_blocks, block_size, num_kv_heads, head_dim)
    v_cache = torch.zeros_like(k_cache)
    seqs, q_rows, tables, slot_mapping, new_k, new_v = [], [], [], [], [], []
    for ctx, q_len in seq_specs:
        n = ctx + q_len
        q = torch.randn(n, num_heads, head_dim, generator=gen)
        k = torch.randn(n, num_kv_heads, head_dim, generator=gen)
        v = torch.randn(n, num_kv_heads, head_dim, generator=gen)
        table = [free.pop() for _ in range(-(-n // block_size))]
        slots = [table[p // block_size] * block_size + p % block_size for p in range(n)]
        # the context is already in the cache ...
        reference.store_kv(k[:ctx], v[:ctx], k_cache, v_cache, torch.tensor(slots[:ctx], dtype=torch.long))
        # ... the chunk is stored this step
        slot_mapping += slots[ctx:]
        new_k.append(k[ctx:])
        new_v.append(v[ctx:])
        seqs.append((q, k, v))
        q_rows.append(q[ctx:])
        tables.append(table)
    meta = AttentionMetadata.build([q for _, q in seq_specs], [c + q for c, q in seq_specs], tables,
                                   slot_mapping, block_size, "cpu")
    return seqs, torch.cat(q_rows), torch.cat(new_k), torch.cat(new_v), k_cache, v_cache, meta


SPECS = [
    [(0, 7)],  # one prefill from scratch
    [(5, 1), (0, 1), (12, 1)],  # decode only
    [(9, 6), (3, 1), (0, 11), (16, 1), (4, 4)],  # mixed: chunks with cached context, decodes, a fresh prefill
]


@pytest.mark.parametrize("specs", SPECS)
@pytest.mark.parametrize("block_size", [1, 4, 16])
def test_reference_paged_attention_equals_dense(specs, block_size):
    seqs, q, k_new, v_new, k_cache, v_cache, meta = make_batch(specs, block_size=block_size,
                                                              num_blocks=160 // block_size + 8)
    reference.store_kv(k_new, v_new, k_cache, v_cache, meta.slot_mapping)
    out = reference.paged_attention(q, k_cache, v_cache, meta, scale=0.25)
    start = 0
    for (ctx, q_len), (fq, fk, fv) in zip(specs, seqs):
        dense = reference.dense_causal_attention(fq, fk, fv, scale=0.25)
        torch.testing.assert_close(out[start:start + q_len], dense[ctx:], rtol=1e-5, atol=1e-5)
        start += q_len


def test_store_kv_skips_padding_slots():
    k_cache = torch.zeros(2, 2, 1, 4)
    v_cache = torch.zeros_like(k_cache)
    k = torch.ones(2, 1, 4)
    reference.store_kv(k, k * 2, k_cache, v_cache, torch.tensor([3, -1]))
    assert k_cache.view(-1, 4)[3].eq(1).all() and k_cache.view(-1, 4)[:3].eq(0).all()
    assert v_cache.view(-1, 4)[3].eq(2).all()


@pytest.fixture(scope="module")
def triton_kernels():
    if torch.cuda.is_available():  # one process holds the kernels either compiled or interpreted, not both
        pytest.skip("on a CUDA machine the kernels compile for the GPU: tests/test_cuda.py checks them there")
    return load_triton_kernels("cpu")  # the Triton interpreter on CPU


@pytest.mark.parametrize("specs", SPECS)
@pytest.mark.parametrize("block_size,head_dim", [(4, 16), (16, 32), (3, 8)])
def test_triton_kernels_equal_reference(triton_kernels, specs, block_size, head_dim):
    _, q, k_new, v_new, k_cache, v_cache, meta = make_batch(specs, (4, 2, head_dim), block_size=block_size,
                                                           num_blocks=160 // block_size + 8, seed=1)
    ref_k, ref_v = k_cache.clone(), v_cache.clone()
    reference.store_kv(k_new, v_new, ref_k, ref_v, meta.slot_mapping)
    triton_kernels.store_kv(k_new, v_new, k_cache, v_cache, meta.slot_mapping)
    assert torch.equal(k_cache, ref_k) and torch.equal(v_cache, ref_v)

    expected = reference.paged_attention(q, ref_k, ref_v, meta, scale=head_dim ** -0.5)
    got = triton_kernels.paged_attention(q, k_cache, v_cache, meta, scale=head_dim ** -0.5)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


def test_triton_gqa_group_of_three(triton_kernels):
    """SmolLM2 has 9 query heads over 3 KV heads: a group size that is not a power of two."""
    _, q, k_new, v_new, k_cache, v_cache, meta = make_batch([(6, 3), (2, 1)], (9, 3, 16), seed=2)
    reference.store_kv(k_new, v_new, k_cache, v_cache, meta.slot_mapping)
    expected = reference.paged_attention(q, k_cache, v_cache, meta, scale=0.25)
    got = triton_kernels.paged_attention(q, k_cache, v_cache, meta, scale=0.25)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


def test_triton_bfloat16_cache_matches_the_reference(triton_kernels):
    """A bf16 cache (the GPU default) attends like the fp32 reference on the same bf16 values, to bf16 rounding."""
    _, q, k_new, v_new, k_cache, v_cache, meta = make_batch(SPECS[2], (9, 3, 16), block_size=8,
                                                           num_blocks=40, seed=3)
    reference.store_kv(k_new, v_new, k_cache, v_cache, meta.slot_mapping)
    q, k_cache, v_cache = q.bfloat16(), k_cache.bfloat16(), v_cache.bfloat16()
    expected = reference.paged_attention(q.float(), k_cache.float(), v_cache.float(), meta, scale=0.25)
    got = triton_kernels.paged_attention(q, k_cache, v_cache, meta, scale=0.25)
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got.float(), expected, rtol=2e-2, atol=2e-2)
