"""A slice of the soak (bench/soak.py runs thousands): random workloads on random knobs, with random
aborts, every accounting invariant checked after every step and greedy tokens against a no-cache recompute."""
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.lab.soak import check_step, random_case, run_case


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_workloads_keep_every_block_accounted_for(random_small, seed):
    case = random_case(random.Random(seed), random_small.model.config.vocab_size, oracle=seed % 4 == 0)
    result = run_case(random_small, case)
    assert not result.violations, f"{case.config}\n" + "\n".join(result.violations[:5])


def test_the_checker_sees_a_leaked_swap_block(random_small):
    """The soak is only as good as its checks: a swap block taken and never tabled must be reported."""
    from engine import EngineConfig, SamplingParams
    from engine.core.llm_engine import LLMEngine

    engine = LLMEngine(random_small, EngineConfig(preemption_mode="swap", block_size=4))
    engine.add_request([5] * 6, SamplingParams(max_tokens=3))
    engine.step()
    assert check_step(engine) == []
    engine.block_manager.swap_pool.take()
    assert any("swap pool does not balance" in v for v in check_step(engine))
    engine.block_manager.pool.take()
    assert any(v.startswith("block manager") for v in check_step(engine))
