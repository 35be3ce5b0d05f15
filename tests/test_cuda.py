"""On a CUDA GPU: the compiled Triton kernels equal the torch reference, and the engine's greedy tokens equal a
no-cache recompute. Skipped (with the reason) where there is no GPU; `scripts/gpu_check.sh` runs them there.

Tolerances: fp32 (TF32 off, kernel dots at input_precision="ieee") differs from the reference only in summation
order: 1e-4. bf16 is compared with the fp32 reference on the same bf16 values; the kernel rounds the softmax
weights and its output to bf16 (8-bit mantissa, ~4e-3 relative each): 2e-2.
"""
import pytest
import torch

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="no CUDA GPU here: these tests compile the Triton kernels for a GPU "
           "(on CPU, tests/test_kernels.py checks the same kernels under TRITON_INTERPRET=1)")]

from engine import LLM, EngineConfig, LLMEngine, SamplingParams  # noqa: E402
from engine.models.loader import load_model  # noqa: E402
from kernels import AttentionMetadata, is_interpreted, load_triton_kernels, reference  # noqa: E402
from tests.test_kernels import make_batch  # noqa: E402

TOL = {torch.float32: 1e-4, torch.bfloat16: 2e-2}
CASES = {
    "decode": [(5, 1), (0, 1), (40, 1), (127, 1), (16, 1)],
    "chunked-prefill-over-cached-context": [(33, 17), (64, 32), (7, 40)],
    "mixed": [(9, 6), (3, 1), (0, 11), (16, 1), (50, 20)],
}
PROMPTS = ["The quick brown fox", "It is a truth universally acknowledged, that a single man",
           "A", "Twenty-three tokens or so of a medium prompt here, and then some more words."]


@pytest.fixture(scope="module", autouse=True)
def full_precision_fp32():
    """TF32 off: fp32 matmuls in the model and the reference really are fp32, so greedy tokens can be compared."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@pytest.fixture(scope="module")
def compiled():
    mod = load_triton_kernels("cuda")
    assert not is_interpreted(mod), "the kernels must compile for the GPU, not run under TRITON_INTERPRET"
    return mod


def cuda_batch(specs, dtype, **shape):
    _, q, k_new, v_new, k_cache, v_cache, meta = make_batch(specs, **shape)
    meta = AttentionMetadata.build(meta.query_lens_list, meta.seq_lens_list, meta.block_tables.tolist(),
                                   meta.slot_mapping.tolist(), meta.block_size, "cuda")
    to = lambda x: x.to("cuda", dtype)  # noqa: E731
    return to(q), to(k_new), to(v_new), to(k_cache), to(v_cache), meta


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("block_size", [8, 16, 32])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("heads", [(9, 3, 64), (32, 8, 128)], ids=["gqa-9/3-d64", "gqa-32/8-d128"])
def test_compiled_kernels_equal_the_reference(compiled, case, block_size, dtype, heads):
    q, k_new, v_new, k_cache, v_cache, meta = cuda_batch(
        CASES[case], dtype, shape=heads, block_size=block_size, num_blocks=400 // block_size + 8, seed=block_size)
    ref_k, ref_v = k_cache.clone(), v_cache.clone()
    reference.store_kv(k_new, v_new, ref_k, ref_v, meta.slot_mapping)
    compiled.store_kv(k_new, v_new, k_cache, v_cache, meta.slot_mapping)
    assert torch.equal(k_cache, ref_k) and torch.equal(v_cache, ref_v), \
        "store_kv must write exactly the reference's slots"

    scale = heads[2] ** -0.5
    expected = reference.paged_attention(q.float(), ref_k.float(), ref_v.float(), meta, scale)
    got = compiled.paged_attention(q, k_cache, v_cache, meta, scale)
    assert got.dtype == dtype
    torch.testing.assert_close(got.float(), expected, rtol=TOL[dtype], atol=TOL[dtype])


def dense_greedy(model, prompt_ids, max_tokens):
    """The oracle: no cache, the whole sequence recomputed for every new token, on the model's device."""
    device = next(model.parameters()).device
    ids, out = list(prompt_ids), []
    with torch.inference_mode():
        for _ in range(max_tokens):
            token = int(model.forward_dense(torch.tensor([ids], device=device))[0, -1].argmax())
            out.append(token)
            ids.append(token)
    return out


@pytest.fixture(scope="module")
def tiny_fp32():
    return load_model("tiny", device="cuda", dtype="float32")


@pytest.fixture(scope="module")
def smollm2_fp32():
    return load_model("smollm2", device="cuda", dtype="float32")


def test_auto_runs_on_the_gpu_in_bf16_with_compiled_triton():
    engine = LLM("random-small").engine
    assert engine.device.startswith("cuda") and engine.dtype == "bfloat16" and engine.attention_backend == "triton"
    assert engine.runner.kv_caches[0][0].is_cuda and engine.runner.kv_caches[0][0].dtype == torch.bfloat16


@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_tiny_paged_engine_equals_no_cache_recompute_on_cuda(tiny_fp32, backend):
    """A small pool and token budget force chunked prefill and preemption on the way."""
    params = SamplingParams(temperature=0.0, max_tokens=24, ignore_eos=True)
    llm = LLM(tiny_fp32, attention_backend=backend, max_num_seqs=3, block_size=8, num_blocks=16,
              max_num_batched_tokens=32)
    assert llm.engine.device.startswith("cuda") and llm.engine.attention_backend == backend
    snapshots = []
    outputs = llm.generate(PROMPTS, params, on_step=snapshots.append)
    for prompt, out in zip(PROMPTS, outputs):
        assert out.token_ids == dense_greedy(tiny_fp32.model, llm.engine.encode(prompt), params.max_tokens), prompt
    assert any(s.preempted for s in snapshots), "this pool was meant to force preemption"


def test_smollm2_paged_engine_equals_no_cache_recompute_on_cuda(smollm2_fp32):
    chats = ["What is the capital of France?", "Name a colour.", "Write one word about the sea."]
    prompts = [smollm2_fp32.tokenizer.apply_chat_template([{"role": "user", "content": c}]) for c in chats]
    params = SamplingParams(temperature=0.0, max_tokens=12, ignore_eos=True)
    llm = LLM(smollm2_fp32, max_num_seqs=3, block_size=16, max_num_batched_tokens=32)
    assert llm.engine.attention_backend == "triton"
    outputs = llm.generate(prompts, params)
    for prompt, out in zip(prompts, outputs):
        assert out.token_ids == dense_greedy(smollm2_fp32.model, llm.engine.encode(prompt), params.max_tokens), prompt
    assert "Paris" in outputs[0].text


def test_static_and_continuous_give_identical_tokens_on_cuda(tiny_fp32):
    params = [SamplingParams(temperature=0.9, top_k=50, max_tokens=20, seed=i) for i in range(len(PROMPTS))]
    static = LLM(tiny_fp32, batcher="static", max_num_seqs=2).generate(PROMPTS, params)
    continuous = LLM(tiny_fp32, max_num_seqs=4, block_size=8, num_blocks=24,
                     max_num_batched_tokens=16).generate(PROMPTS, params)
    assert [o.token_ids for o in static] == [o.token_ids for o in continuous]


def test_the_bf16_default_engine_answers_the_smollm2_question():
    """The path a student gets on a GPU: SmolLM2 in bf16, compiled Triton, default knobs."""
    loaded = load_model("smollm2")
    engine = LLMEngine(loaded, EngineConfig())
    assert (engine.dtype, engine.attention_backend) == ("bfloat16", "triton")
    prompt = loaded.tokenizer.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}],
                                                  add_generation_prompt=True)
    request = engine.add_request(prompt, SamplingParams(temperature=0.0, max_tokens=20))
    engine.run_until_done()
    assert "Paris" in loaded.tokenizer.decode(request.output_token_ids)
