"""Scheduling changes timing, never results: the paged engine equals a no-cache full recompute."""
import pytest
import torch

from engine import LLM, SamplingParams
from tests.conftest import dense_greedy

PROMPTS = [
    "The quick brown fox",
    "A",
    "It is a truth universally acknowledged, that a single man in possession of a good fortune",
    "Twenty-three tokens or so of a medium prompt here.",
    "Short one",
    "Another prompt of middling length that spans several blocks of the cache",
]
GREEDY = SamplingParams(temperature=0.0, max_tokens=24, ignore_eos=True)


@pytest.fixture(scope="module")
def expected(random_small):
    llm = LLM(random_small)
    return [dense_greedy(random_small.model, llm.engine.encode(p), GREEDY.max_tokens) for p in PROMPTS]


ENGINES = {
    "continuous-roomy": dict(max_num_seqs=8),
    # a small budget forces chunked prefill; a small pool forces preemption and recompute
    "continuous-chunked-preempting": dict(max_num_seqs=4, block_size=4, num_blocks=40, max_num_batched_tokens=16),
    "continuous-block-size-1": dict(max_num_seqs=3, block_size=1, num_blocks=160, max_num_batched_tokens=32),
    "static": dict(batcher="static", max_num_seqs=3, block_size=8, num_blocks=40, max_num_batched_tokens=64),
    "no-chunking": dict(max_num_seqs=4, enable_chunked_prefill=False, max_num_batched_tokens=512, max_model_len=512),
}


@pytest.mark.parametrize("name", ENGINES)
def test_greedy_equals_no_cache_recompute(random_small, expected, name):
    llm = LLM(random_small, **ENGINES[name])
    snapshots = []
    outputs = llm.generate(PROMPTS, GREEDY, on_step=snapshots.append)
    for prompt, out, want in zip(PROMPTS, outputs, expected):
        assert out.token_ids == want, f"{name}: {prompt!r} diverged"
    llm.engine.block_manager.check_invariants()
    assert llm.engine.block_manager.num_free_blocks == llm.engine.block_manager.num_blocks
    if name == "continuous-chunked-preempting":
        assert any(s.preempted for s in snapshots), "this pool was meant to force preemption"
        assert any(0 < b.num_prefill_tokens < 16 for s in snapshots for b in s.batch)
        assert any(s.num_prefill_tokens and s.num_decode_tokens for s in snapshots), "no mixed step"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs the interpreter; tests/test_cuda.py runs Triton compiled")
def test_triton_backend_in_the_engine(random_small, expected):
    """The real Triton kernels (interpreter on CPU) drive the same engine to the same tokens."""
    llm = LLM(random_small, attention_backend="triton", max_num_seqs=4, block_size=4, num_blocks=40,
              max_num_batched_tokens=16)
    assert llm.engine.backend.name.startswith("triton")
    outputs = llm.generate(PROMPTS[:3], SamplingParams(temperature=0.0, max_tokens=8, ignore_eos=True))
    for out, want in zip(outputs, expected[:3]):
        assert out.token_ids == want[:8]


def test_static_and_continuous_give_identical_tokens_when_sampling(random_small):
    """Seeded sampling too: each request draws from its own generator."""
    params = [SamplingParams(temperature=0.9, top_k=50, top_p=0.9, max_tokens=20, seed=i) for i in range(len(PROMPTS))]
    static = LLM(random_small, batcher="static", max_num_seqs=2).generate(PROMPTS, params)
    continuous = LLM(random_small, max_num_seqs=5, block_size=4, num_blocks=30,
                     max_num_batched_tokens=16).generate(PROMPTS, params)
    assert [o.token_ids for o in static] == [o.token_ids for o in continuous]
