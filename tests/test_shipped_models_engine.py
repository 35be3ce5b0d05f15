"""The shipped models through the real engine: paged, continuously batched, chunked, preempting."""
from engine import LLM, SamplingParams
import pytest

from tests.conftest import dense_greedy

pytestmark = pytest.mark.slow  # each loads SmolLM2 (540 MB of fp32 weights)

CHAT = ["What is the capital of France?", "Name a colour.", "Write one word about the sea."]


def test_smollm2_engine_equals_no_cache_recompute(smollm2):
    """Small token counts keep this fast; a small pool and budget still force chunks and preemption."""
    llm = LLM(smollm2, max_num_seqs=3, block_size=8, num_blocks=14, max_num_batched_tokens=32)
    prompts = [smollm2.tokenizer.apply_chat_template([{"role": "user", "content": q}]) for q in CHAT]
    params = SamplingParams(temperature=0.0, max_tokens=6, ignore_eos=True)
    snapshots = []
    outputs = llm.generate(prompts, params, on_step=snapshots.append)
    for prompt, out in zip(prompts, outputs):
        assert out.token_ids == dense_greedy(smollm2.model, llm.engine.encode(prompt), params.max_tokens)
    assert any(s.preempted for s in snapshots)
    assert any(0 < b.num_prefill_tokens < 32 for s in snapshots for b in s.batch)
    assert "Paris" in outputs[0].text


def test_smollm2_chat_answers_paris(smollm2):
    out, = LLM(smollm2).chat([{"role": "user", "content": "What is the capital of France?"}],
                             SamplingParams(temperature=0.0, max_tokens=20))
    assert "Paris" in out.text and out.finish_reason == "stop"
