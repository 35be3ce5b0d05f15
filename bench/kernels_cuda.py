"""On a CUDA machine: check the compiled Triton kernels against the torch reference, and time them.

    python bench/kernels_cuda.py

Compares paged attention (Triton, compiled) with the torch reference (gather + attention) and
with dense attention over contiguous K/V (no paging), for decode and prefill batches.
Exits with a message where no GPU is present; no test depends on it.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
import torch.nn.functional as F


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA GPU here: this benchmark compiles the Triton kernels for a GPU; run it on a CUDA machine "
              "(on CPU, the tests check the kernels under TRITON_INTERPRET=1)")
        return 0
    from kernels import AttentionMetadata, load_triton_kernels, reference
    tk = load_triton_kernels("cuda")
    dev, dtype = "cuda", torch.float16
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    print(f"{'case':<28}{'max |diff|':>12}{'triton us':>12}{'torch-ref us':>14}{'dense us':>10}")
    heads, kv_heads, head_dim, block_size = 32, 8, 128, 16
    cases = [("decode 64 x ctx 1024", 64, 1024, 1), ("decode 256 x ctx 2048", 256, 2048, 1),
             ("prefill 8 x 512 (ctx 512)", 8, 1024, 512), ("prefill 2 x 2048", 2, 2048, 2048)]
    ok = True
    for name, seqs, seq_len, q_len in cases:
        blocks_per_seq = seq_len // block_size
        num_blocks = seqs * blocks_per_seq
        k_cache = torch.randn(num_blocks, block_size, kv_heads, head_dim, device=dev, dtype=dtype)
        v_cache = torch.randn_like(k_cache)
        perm = torch.randperm(num_blocks, device=dev).to(torch.int32)
        tables = perm.view(seqs, blocks_per_seq).tolist()
        meta = AttentionMetadata.build([q_len] * seqs, [seq_len] * seqs, tables, [-1] * (seqs * q_len), block_size, dev)
        q = torch.randn(seqs * q_len, heads, head_dim, device=dev, dtype=dtype)
        scale = head_dim ** -0.5
        got = tk.paged_attention(q, k_cache, v_cache, meta, scale)
        want = reference.paged_attention(q, k_cache, v_cache, meta, scale)
        diff = (got.float() - want.float()).abs().max().item()
        ok &= diff < 2e-2
        k_dense = reference.gather_kv(k_cache, meta.block_tables).transpose(1, 2).contiguous()
        v_dense = reference.gather_kv(v_cache, meta.block_tables).transpose(1, 2).contiguous()
        q_dense = q.view(seqs, q_len, heads, head_dim).transpose(1, 2)
        mask = torch.ones(q_len, seq_len, device=dev, dtype=torch.bool).tril(seq_len - q_len)
        dense = lambda: F.scaled_dot_product_attention(q_dense, k_dense, v_dense, attn_mask=mask,  # noqa: E731
                                                       scale=scale, enable_gqa=True)
        times = [bench(lambda: tk.paged_attention(q, k_cache, v_cache, meta, scale)),
                 bench(lambda: reference.paged_attention(q, k_cache, v_cache, meta, scale)), bench(dense)]
        print(f"{name:<28}{diff:>12.2e}{times[0]:>12.1f}{times[1]:>14.1f}{times[2]:>10.1f}")
    print("kernels match the reference" if ok else "MISMATCH: the compiled kernel disagrees with the reference")
    return 0 if ok else 1


def bench(fn, iters: int = 20) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / iters


if __name__ == "__main__":
    sys.exit(main())
