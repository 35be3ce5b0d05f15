"""EngineConfig.vllm_v1_semantics: the scheduler as vLLM v1 is, beside the lab's teaching choices.

With it on, a high-priority request that arrives when every slot is full waits until a slot frees (the
head-of-line case of vLLM issue #40004); with it off, the lab's priority policy preempts a running request
for it. With it on, preemption is by recompute only (swap is refused with a clear message), and no waiting
request is admitted in a step in which anything was preempted."""
import pytest

from engine import EngineConfig
from engine.messages import ConfigError
from tests.test_policies import run, ttft

# Two long batch jobs fill both slots from step 0; an interactive chat (class 0) arrives at step 5.
FULL_SLOTS = [("b0", 8, 40, 0, 2, None), ("b1", 8, 40, 0, 2, None), ("chat", 8, 4, 5, 0, 3)]


@pytest.mark.parametrize("policy", ["priority", "edf"])
def test_with_v1_semantics_an_urgent_arrival_waits_for_a_slot_instead_of_preempting(random_small, policy):
    reqs, snaps = run(random_small, FULL_SLOTS, max_num_seqs=2, policy=policy, vllm_v1_semantics=True)
    assert not any(s.preempted for s in snaps), "vLLM v1 never preempts running work for a waiting request"
    first_free = min(reqs["b0"].finish_step, reqs["b1"].finish_step)
    assert reqs["chat"].first_scheduled_step == first_free + 1  # the step after a slot frees, not before
    assert ttft(reqs["chat"]) > 30


def test_without_v1_semantics_the_labs_priority_preempts_for_the_urgent_arrival(random_small):
    reqs, snaps = run(random_small, FULL_SLOTS, max_num_seqs=2, policy="priority")
    assert any(s.preempted for s in snaps)
    assert ttft(reqs["chat"]) == 1


def test_with_v1_semantics_preemption_is_never_by_swap(random_small):
    """Memory runs out mid-run (16 blocks of 4 for 4 requests growing to 30 tokens each): requests are
    preempted, and every one of them by recompute, however much CPU pool there would be."""
    work = [(f"r{k}", 6, 24, 0, 0, None) for k in range(4)]
    reqs, snaps = run(random_small, work, max_num_seqs=4, block_size=4, num_blocks=16, vllm_v1_semantics=True)
    assert any(s.preempted for s in snaps)
    assert sum(r.num_recomputed_tokens for r in reqs.values()) > 0
    assert not any(s.blocks_swapped_out for s in snaps)
    with pytest.raises(ConfigError, match="recompute only"):
        EngineConfig(preemption_mode="swap", vllm_v1_semantics=True).validate()


def test_with_v1_semantics_nobody_is_admitted_in_a_step_with_a_preemption(random_small):
    """(Only memory pressure preempts once urgent arrivals cannot, and such a step admits no one.)"""
    work = [(f"r{k}", 6, 24, k, 0, None) for k in range(6)]
    _, snaps = run(random_small, work, max_num_seqs=4, block_size=4, num_blocks=16, vllm_v1_semantics=True)
    preempting = [s for s in snaps if s.preempted]
    assert preempting and not any(s.admitted for s in preempting)


def test_the_command_line_turns_it_on_for_bench_and_serve():
    from engine.__main__ import build_parser, engine_kwargs
    from engine.server.cli import engine_config_kwargs

    bench = build_parser().parse_args(["bench", "--vllm-v1-semantics", "--policy", "priority"])
    assert bench.vllm_v1_semantics is True and build_parser().parse_args(["bench"]).vllm_v1_semantics is None
    serve = engine_config_kwargs(build_parser().parse_args(["serve", "--vllm-v1-semantics"]), engine_kwargs)
    assert EngineConfig(**serve).validate().vllm_v1_semantics is True
