"""Faults found by reading the engine against nano-vllm; each test fails on the code before its fix."""
import dataclasses

import pytest

from engine import ConfigError, EngineConfig, SamplingParams
from engine.core.llm_engine import LLMEngine
from engine.lab.metrics import summarize


def greedy(n):
    return SamplingParams(temperature=0.0, max_tokens=n, ignore_eos=True)


def step_until(engine, cond, limit=500):
    for _ in range(limit):
        if cond():
            return
        engine.step()
    raise AssertionError("condition never met")


def test_aborting_a_swapped_out_request_returns_its_swap_blocks(random_small):
    engine = LLMEngine(random_small, EngineConfig(block_size=4, num_blocks=12, num_swap_blocks=12,
                                                  preemption_mode="swap", max_num_seqs=4))
    reqs = [engine.add_request([60 + i] * 6, greedy(20)) for i in range(4)]
    step_until(engine, lambda: any(r.cpu_block_table for r in reqs))
    swapped = next(r for r in reqs if r.cpu_block_table)
    engine.abort(swapped.request_id)
    assert swapped.cpu_block_table == []
    snaps = engine.run_until_done()
    bm = engine.block_manager
    assert bm.swap_pool.num_free == bm.swap_pool.num_blocks, "swap blocks leaked"
    assert bm.num_free_blocks == bm.num_blocks
    assert swapped.request_id in snaps[0].aborted
    assert snaps[0].requests[swapped.request_id].finish_reason == "aborted"


def test_an_abort_is_recorded_in_the_next_snapshot_and_counted_in_the_metrics(random_small):
    engine = LLMEngine(random_small, EngineConfig(block_size=4, max_num_seqs=2, enable_prefix_caching=True))
    prompt = [5] * 12
    first = engine.add_request(prompt, greedy(8))
    engine.step()
    sharer, queued = engine.add_request(prompt + [6], greedy(8)), engine.add_request([9] * 5, greedy(4))
    step_until(engine, lambda: sharer.num_cached_tokens > 0)
    engine.abort(sharer.request_id)  # running, sharing prefix-cached blocks with `first`
    engine.abort(queued.request_id)  # waiting for a slot
    engine.block_manager.check_invariants()
    assert sharer.request_id not in engine.block_manager.holders
    snap = engine.step()
    assert set(snap.aborted) == {sharer.request_id, queued.request_id}
    assert snap.requests[queued.request_id].finish_reason == "aborted"
    snaps = [snap, *engine.run_until_done()]
    assert all(not s.aborted for s in snaps[1:]), "an abort is reported once"
    assert first.num_output_tokens == 8
    bm = engine.block_manager
    assert bm.num_free_blocks == bm.num_blocks
    summary = summarize([first, sharer, queued], snaps, 2, 512)
    assert summary["num_aborted"] == 2 and summary["num_finished"] == 1


def test_a_prefix_cache_hit_must_match_the_blocks_tokens(random_small, monkeypatch):
    """Two different prompts whose block hashes collide must not share K/V."""
    from engine.core.request import Request

    monkeypatch.setattr(Request, "full_block_hashes",
                        lambda self, block_size: list(range(self.num_tokens // block_size)))
    engine = LLMEngine(random_small, EngineConfig(block_size=4, enable_prefix_caching=True))
    a = engine.add_request([11] * 9, greedy(3))
    engine.run_until_done()
    b = engine.add_request([12] * 9, greedy(3))
    engine.run_until_done()
    assert b.num_cached_tokens == 0, "a colliding hash reused another prompt's blocks"
    reference = LLMEngine(random_small, EngineConfig(block_size=4))
    c = reference.add_request([12] * 9, greedy(3))
    reference.run_until_done()
    assert b.output_token_ids == c.output_token_ids and a.output_token_ids


def test_a_run_cut_off_by_the_step_limit_says_so(random_small):
    from engine.lab.experiment import LiveRun
    from engine.lab.trace import TraceRequest

    requests = [TraceRequest(f"q{i}", [40 + i] * 5, greedy(50)) for i in range(3)]
    run = LiveRun(random_small, requests, EngineConfig(max_num_seqs=1))
    run.MAX_STEPS = 20
    run.run_to_end()
    assert run.done
    assert "20" in run.stop_reason and "3" in run.stop_reason, run.stop_reason
    last = run.snapshots[-1]
    assert set(last.aborted) == {"q0", "q1", "q2"}
    assert run.summary()["num_aborted"] == 3
    assert run.summary()["stopped"] == run.stop_reason


def test_a_complete_run_has_no_stop_reason(random_small):
    from engine.lab.experiment import LiveRun
    from engine.lab.trace import TraceRequest

    run = LiveRun(random_small, [TraceRequest("q0", [40] * 5, greedy(3))], EngineConfig())
    run.run_to_end()
    assert run.stop_reason is None and run.summary()["num_aborted"] == 0


@pytest.mark.parametrize("bad", [[1, 2, 10**6], [-1, 5]])
def test_out_of_vocabulary_prompt_ids_are_rejected_before_the_embedding(random_small, bad):
    engine = LLMEngine(random_small, EngineConfig())
    vocab = random_small.model.config.vocab_size
    ok = engine.add_request([5, 6, 7], greedy(2))
    with pytest.raises(ConfigError, match=f"vocabulary.*{vocab}"):
        engine.add_request(bad, greedy(2))
    engine.run_until_done()
    assert ok.num_output_tokens == 2


def test_non_integer_prompt_ids_are_refused_clearly(random_small):
    engine = LLMEngine(random_small, EngineConfig())
    with pytest.raises(ConfigError, match="integer"):
        engine.add_request([1, "x", 3], greedy(2))


def test_the_engine_does_not_change_the_callers_config(random_small):
    config = EngineConfig(preemption_mode="swap")
    before = dataclasses.replace(config)
    engine = LLMEngine(random_small, config)
    assert config == before
    assert engine.config is not config
    assert engine.config.max_model_len and engine.config.num_blocks and engine.config.num_swap_blocks


@pytest.mark.parametrize("reserve", ["max_tokens", "max_model_len"])
def test_blocks_a_refused_request_needs_match_the_allocator(random_small, reserve):
    """The UI's fragmentation note reads this one engine function, never its own arithmetic."""
    from engine.core.contiguous import blocks_to_reserve

    config = EngineConfig(kv_layout="contiguous", block_size=4, num_blocks=64, max_model_len=40,
                          contiguous_reserve=reserve)
    engine = LLMEngine(random_small, config)
    for prompt, out in ((10, 6), (30, 30), (3, 2)):
        r = engine.add_request([65] * prompt, greedy(out))
        snap = engine.step()
        view = snap.requests[r.request_id]
        assert blocks_to_reserve(view.num_prompt_tokens, view.max_tokens, engine.config) == len(
            snap.block_tables[r.request_id])
        engine.run_until_done()
    assert blocks_to_reserve(10, 6, dataclasses.replace(engine.config, contiguous_reserve="max_model_len")) == 10
    assert blocks_to_reserve(30, 30, dataclasses.replace(engine.config, contiguous_reserve="max_tokens")) == 10


def test_a_prefill_threshold_without_chunked_prefill_does_not_stall(random_small):
    """Found by the soak: the threshold cut a prompt short, and without chunking a cut prompt never ran."""
    engine = LLMEngine(random_small, EngineConfig(enable_chunked_prefill=False, long_prefill_token_threshold=3,
                                                  max_model_len=64, max_num_batched_tokens=64))
    r = engine.add_request([5] * 10, greedy(4))
    engine.run_until_done()
    assert r.num_output_tokens == 4
