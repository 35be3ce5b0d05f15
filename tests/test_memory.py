"""KV memory: swap vs recompute, the contiguous baseline, prefix sharing with copy-on-write."""
import pytest

from engine import EngineConfig, SamplingParams
from engine.core.contiguous import blocks_to_reserve
from engine.lab.experiment import run_requests, workload_requests
from engine.lab.workload import engine_config_for
from engine.core.llm_engine import LLMEngine
from engine.lab.metrics import kv_timeline
from engine.lab.workload import preset
from tests.conftest import dense_greedy


def greedy(n):
    return SamplingParams(temperature=0.0, max_tokens=n, ignore_eos=True)


def run(loaded, prompts, max_tokens, **config):
    engine = LLMEngine(loaded, EngineConfig(**config))
    reqs = [engine.add_request(p, greedy(max_tokens)) for p in prompts]
    snaps = []
    while engine.has_unfinished():
        snaps.append(engine.step())
        engine.block_manager.check_invariants()
    assert engine.block_manager.num_free_blocks == engine.block_manager.num_blocks
    assert engine.block_manager.swap_pool.num_free == engine.block_manager.swap_pool.num_blocks
    return reqs, snaps


PROMPTS = [[60 + i] * (10 + 7 * i) for i in range(6)]


def test_swap_and_recompute_give_the_same_greedy_tokens(random_small):
    recompute, snaps_r = run(random_small, PROMPTS, 30, max_num_seqs=4, block_size=4, num_blocks=24,
                             preemption_mode="recompute")
    swap, snaps_s = run(random_small, PROMPTS, 30, max_num_seqs=4, block_size=4, num_blocks=24,
                        preemption_mode="swap")
    assert [r.output_token_ids for r in recompute] == [r.output_token_ids for r in swap]
    for p, r in zip(PROMPTS, swap):
        assert r.output_token_ids == dense_greedy(random_small.model, p, 30)
    assert sum(s.blocks_swapped_out for s in snaps_s) > 0
    assert sum(s.blocks_swapped_in for s in snaps_s) == sum(s.blocks_swapped_out for s in snaps_s)
    assert sum(r.num_recomputed_tokens for r in recompute) > 0
    assert sum(r.num_recomputed_tokens for r in swap) == 0  # the CPU pool was big enough for everyone


def test_contiguous_admits_fewer_and_refuses_with_free_space(tiny):
    workload = preset("chat-and-reports").scaled(0.5)
    requests = workload_requests(tiny, workload, seed=0)
    paged = run_requests(tiny, requests, engine_config_for(workload, kv_layout="paged"))
    contiguous = run_requests(tiny, requests, engine_config_for(workload, kv_layout="contiguous"))
    assert contiguous.summary["max_concurrent"] < paged.summary["max_concurrent"]
    refusals = [s for s in contiguous.snapshots if "fragmentation" in s.blocked.values()]
    assert refusals, "the contiguous layout should refuse someone while enough memory is free in total"
    s = refusals[0]
    rid = next(r for r, why in s.blocked.items() if why == "fragmentation")
    view = s.requests[rid]
    need = blocks_to_reserve(view.num_prompt_tokens, view.max_tokens, contiguous.config)
    assert s.num_free_blocks >= need  # enough in total, but no single hole of `need` blocks
    assert paged.summary["kv_waste_share"] < 0.06 < 0.25 < contiguous.summary["kv_waste_share"]
    # reserved-but-unused slots are where the contiguous layout's memory goes
    mean_reserved = lambda run: sum(t["reserved"] for t in kv_timeline(run.snapshots)) / len(run.snapshots)  # noqa: E731
    assert mean_reserved(contiguous) > 5 * mean_reserved(paged)
    assert [r.output_token_ids for r in paged.requests] == [r.output_token_ids for r in contiguous.requests]


def test_prefix_sharing_cuts_blocks_and_keeps_outputs(random_small):
    system = [70 + (i % 20) for i in range(32)]  # 32 tokens: 8 full blocks of 4, shared by all
    prompts = [system + [100 + i] * (3 + i) for i in range(5)]
    plain, snaps_plain = run(random_small, prompts, 8, max_num_seqs=5, block_size=4, num_blocks=80)
    shared, snaps_shared = run(random_small, prompts, 8, max_num_seqs=5, block_size=4, num_blocks=80,
                               enable_prefix_caching=True, max_num_batched_tokens=64)
    assert [r.output_token_ids for r in plain] == [r.output_token_ids for r in shared]
    peak = lambda snaps: max(s.num_used_blocks for s in snaps)  # noqa: E731
    assert peak(snaps_shared) < peak(snaps_plain)
    assert max(max(s.block_ref_count) for s in snaps_shared) >= 2, "the snapshots should show shared blocks"
    assert sum(r.num_cached_tokens for r in shared) > 0


def test_copy_on_write_when_a_whole_prompt_is_cached(random_small):
    """Two identical prompts of exactly two blocks: the second finds every block cached, but must
    still compute its last token, whose slot lies in a shared block: that block is copied first."""
    prompt = [80 + i for i in range(8)]  # 2 blocks of 4
    engine = LLMEngine(random_small, EngineConfig(block_size=4, num_blocks=16, enable_prefix_caching=True))
    first = engine.add_request(prompt, greedy(5))
    engine.run_until_done()
    second = engine.add_request(prompt, greedy(5))
    snaps = engine.run_until_done()
    assert second.num_cached_tokens == 7
    assert sum(s.blocks_copied for s in snaps) == 0  # the first request had finished: nobody else held it
    assert second.output_token_ids == first.output_token_ids

    a = engine.add_request(prompt, greedy(5))
    b = engine.add_request(prompt, greedy(5), arrival_step=engine.step_index + 1)
    snaps = engine.run_until_done()
    assert sum(s.blocks_copied for s in snaps) == 1  # b wrote into the block it shared with a
    assert a.output_token_ids == b.output_token_ids == first.output_token_ids
    engine.block_manager.check_invariants()


@pytest.mark.parametrize("reserve", ["max_tokens", "max_model_len"])
def test_contiguous_reservation_sizes(random_small, reserve):
    engine = LLMEngine(random_small, EngineConfig(kv_layout="contiguous", block_size=4, num_blocks=64,
                                                  max_model_len=64, contiguous_reserve=reserve))
    engine.add_request([65] * 10, greedy(6))
    snap = engine.step()
    table = snap.block_tables["r0"]
    assert list(table) == list(range(table[0], table[0] + len(table)))  # one contiguous run
    assert len(table) == (4 if reserve == "max_tokens" else 16)  # (10 + 6) / 4, or 64 / 4
