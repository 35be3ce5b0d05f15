"""Batcher behaviour, block accounting and bad input."""
import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import LLM, ConfigError, EngineConfig, SamplingParams
from engine.core.llm_engine import LLMEngine
from engine.core.snapshot import StepSnapshot


def run(engine: LLMEngine):
    return engine.run_until_done()


def test_static_batch_leaves_finished_slots_idle_while_others_wait(random_small):
    engine = LLMEngine(random_small, EngineConfig(batcher="static", max_num_seqs=3))
    lengths = [2, 12, 3, 4, 5]
    for i, n in enumerate(lengths):
        engine.add_request([65 + i] * 5, SamplingParams(temperature=0, max_tokens=n, ignore_eos=True))
    snapshots = run(engine)
    # the first batch is r0..r2; r0 finishes at once but r3 may not take its slot until r1 is done
    holes = [s for s in snapshots if None in s.slots and s.waiting and any(s.slots)]
    assert holes, "the static batcher should show idle slots with requests waiting"
    first_r3 = next(s.step for s in snapshots if "r3" in s.admitted)
    r1_done = next(s.step for s in snapshots if "r1" in s.finished)
    assert first_r3 > r1_done


@pytest.mark.parametrize("kv_layout", ["paged", "contiguous"])
def test_a_static_batch_takes_every_request_whose_worst_case_fits_the_free_blocks(random_small, kv_layout):
    """Two requests of 4 blocks each at their longest, a pool of 8: one batch of both, in either layout (the
    contiguous layout takes its runs at admission, and they count against the free blocks once)."""
    engine = LLMEngine(random_small, EngineConfig(batcher="static", max_num_seqs=2, block_size=4, num_blocks=8,
                                                  kv_layout=kv_layout, contiguous_reserve="max_tokens"))
    for i in range(2):
        engine.add_request([65 + i] * 12, SamplingParams(temperature=0, max_tokens=4, ignore_eos=True))
    assert engine.step().admitted == ("r0", "r1")


def test_continuous_batcher_fills_a_freed_slot_at_once(random_small):
    engine = LLMEngine(random_small, EngineConfig(max_num_seqs=3))
    for i, n in enumerate([2, 12, 3, 4, 5]):
        engine.add_request([65 + i] * 5, SamplingParams(temperature=0, max_tokens=n, ignore_eos=True))
    snapshots = run(engine)
    r0_done = next(s.step for s in snapshots if "r0" in s.finished)
    assert "r3" in snapshots[r0_done + 1].admitted
    for before, after in zip(snapshots, snapshots[1:]):
        if None in before.slots and before.waiting:
            assert after.admitted, f"step {after.step} left a slot idle while requests waited"



def test_snapshots_are_immutable_and_json_round_trip(random_small):
    engine = LLMEngine(random_small, EngineConfig(max_num_seqs=2, block_size=4))
    engine.add_request("hello", SamplingParams(max_tokens=3, temperature=0))
    snap = engine.step()
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.step = 3
    with pytest.raises(TypeError):
        snap.block_tables["x"] = (1,)
    text = json.dumps(snap.to_dict())
    again = StepSnapshot.from_dict(json.loads(text))
    assert again == snap
    assert snap.batch[0].num_prefill_tokens == 6 and snap.block_tables["r0"] and snap.written_blocks


def test_request_stamps_in_steps_and_seconds(random_small):
    llm = LLM(random_small, max_num_seqs=1)
    a, b = llm.generate(["first", "second"], SamplingParams(temperature=0, max_tokens=4, ignore_eos=True))
    # steps count inclusively: a request served in its arrival step has TTFT 1
    assert a.metrics["ttft_steps"] == 1 and a.metrics["e2e_steps"] == 4 and a.metrics["queue_steps"] == 0
    assert b.metrics["queue_steps"] == 4 and b.metrics["ttft_steps"] == 5
    assert b.metrics["ttft_s"] > a.metrics["ttft_s"] > 0


# --- bad input -------------------------------------------------------------------------------
def test_over_long_prompt_is_rejected_and_the_rest_still_run(random_small):
    llm = LLM(random_small, max_model_len=64)
    outs = llm.generate(["ok", "x" * 100, "fine too"], SamplingParams(temperature=0, max_tokens=4))
    assert outs[1].finish_reason == "rejected" and "max_model_len is 64" in outs[1].error
    assert outs[0].token_ids and outs[2].token_ids


def test_request_bigger_than_the_cache_is_rejected_with_the_block_count(random_small):
    llm = LLM(random_small, block_size=4, num_blocks=5)
    out, = llm.generate(["abcdefghijkl"], SamplingParams(max_tokens=20))
    assert out.finish_reason == "rejected" and "needs up to 9 KV blocks" in out.error


@pytest.mark.parametrize("kwargs,message", [
    (dict(block_size=0), "block_size"),
    (dict(max_num_seqs=0), "max_num_seqs"),
    (dict(max_num_batched_tokens=-5), "max_num_batched_tokens"),
    (dict(num_blocks=0), "num_blocks"),
    (dict(batcher="dynamic"), "batcher must be one of"),
    (dict(max_model_len=100000), "max_model_len"),
    (dict(enable_chunked_prefill=False, max_num_batched_tokens=64), "without chunked prefill"),
])
def test_nonsense_configs_are_refused_clearly(random_small, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        LLM(random_small, **kwargs)


def test_bad_sampling_params():
    for kw in (dict(temperature=-1), dict(temperature=float("nan")), dict(top_p=0), dict(top_k=-2),
               dict(max_tokens=0), dict(seed=2 ** 64), dict(stop=["x"] * 33)):
        with pytest.raises(ConfigError):
            SamplingParams(**kw)


# --- block accounting, property-tested ----------------------------------------------------------
workloads = st.lists(st.tuples(st.integers(1, 40), st.integers(1, 30), st.integers(0, 6), st.integers(0, 2),
                               st.integers(0, 3)), min_size=1, max_size=10)
engines = st.fixed_dictionaries({
    "block_size": st.sampled_from([1, 2, 4, 8]), "num_blocks": st.integers(4, 80), "max_num_seqs": st.integers(1, 5),
    "max_num_batched_tokens": st.integers(4, 64), "batcher": st.sampled_from(["continuous", "static"]),
    "policy": st.sampled_from(["fcfs", "sjf", "priority", "edf"]),
    "kv_layout": st.sampled_from(["paged", "contiguous"]),
    "preemption_mode": st.sampled_from(["recompute", "swap"]), "enable_prefix_caching": st.booleans(),
    "num_swap_blocks": st.sampled_from([None, 0, 6]), "priority_aging_steps": st.sampled_from([1, 5, 100])})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(workload=workloads, knobs=engines)
def test_block_accounting_balances(random_small, workload, knobs):
    engine = LLMEngine(random_small, EngineConfig(max_model_len=128, **knobs))
    # prompts share prefixes (the same first tokens) so that prefix caching has work to do
    requests = [engine.add_request([7] * p + [9 + v], SamplingParams(temperature=0, max_tokens=o, ignore_eos=True),
                                   arrival_step=a, priority=prio)
                for p, o, a, prio, v in workload]
    bm = engine.block_manager
    while engine.has_unfinished():
        snap = engine.step()
        bm.check_invariants()
        shared = [b for b, refs in enumerate(snap.block_ref_count) if refs > 1]
        assert not shared or knobs["enable_prefix_caching"], "only prefix caching may share blocks"
        owners = [b for table in snap.block_tables.values() for b in table if b not in shared]
        assert len(owners) == len(set(owners)), "a private block is owned by two live requests"
        assert sum(1 for s in snap.slots if s) <= knobs["max_num_seqs"]
        assert snap.num_prefill_tokens + snap.num_decode_tokens <= knobs["max_num_batched_tokens"]
    assert bm.num_free_blocks == bm.num_blocks, "blocks leaked"
    assert bm.swap_pool.num_free == bm.swap_pool.num_blocks, "swap blocks leaked"
    for r in requests:
        assert r.is_finished
        if r.finish_reason.value == "rejected":
            assert r.error
        else:
            assert r.num_output_tokens == r.sampling_params.max_tokens


def test_abort_running_waiting_and_future_requests(random_small):
    engine = LLMEngine(random_small, EngineConfig(max_num_seqs=1, block_size=4))
    params = SamplingParams(temperature=0, max_tokens=10, ignore_eos=True)
    running, waiting, future, kept = (engine.add_request([70] * 6, params, arrival_step=a) for a in (0, 0, 50, 0))
    engine.step()
    engine.step()
    for r in (running, waiting, future):
        engine.abort(r.request_id)
    engine.run_until_done()
    assert [r.finish_reason.value for r in (running, waiting, future)] == ["aborted"] * 3
    assert running.num_output_tokens == 2 and waiting.num_output_tokens == 0
    assert kept.num_output_tokens == 10
    assert engine.block_manager.num_free_blocks == engine.block_manager.num_blocks


def test_an_engine_without_snapshots_reports_the_same_steps(random_small):
    """snapshots=False skips the copies of the cache, never the work: same batches, same tokens."""
    def steps(snapshots):
        engine = LLMEngine(random_small, EngineConfig(max_num_seqs=3, block_size=4, num_blocks=8),
                           snapshots=snapshots)
        for i in range(4):
            engine.add_request([30 + i] * (3 + 4 * i), SamplingParams(temperature=0, max_tokens=12, ignore_eos=True))
        return engine.run_until_done()

    full, light = steps(True), steps(False)
    assert [s.batch for s in full] == [s.batch for s in light]
    assert [dict(s.emitted) for s in full] == [s.emitted for s in light]
    assert [s.preempted for s in full] == [s.preempted for s in light] and any(s.preempted for s in light)
    assert [s.num_decode_tokens for s in full] == [s.num_decode_tokens for s in light]
