"""Each policy's defining behaviour, on small hand-built workloads and on the chapter's presets."""
import pytest

from engine import EngineConfig, SamplingParams
from engine.lab.experiment import run_requests, workload_requests
from engine.lab.workload import engine_config_for
from engine.core.llm_engine import LLMEngine
from engine.core.request import SLO, ServiceClass
from engine.lab.workload import preset


def greedy(n):
    return SamplingParams(temperature=0.0, max_tokens=n, ignore_eos=True)


def run(loaded, requests, **config):
    """requests: (id, prompt_len, max_tokens, arrival_step, priority, ttft_slo_steps)."""
    engine = LLMEngine(loaded, EngineConfig(**config))
    reqs = {rid: engine.add_request([65] * p, greedy(n), request_id=rid, arrival_step=a, priority=pr,
                                    service=ServiceClass("interactive" if pr == 0 else "batch", SLO(ttft_steps=slo)))
            for rid, p, n, a, pr, slo in requests}
    snapshots = engine.run_until_done()
    engine.block_manager.check_invariants()
    return reqs, snapshots


def ttft(r):
    return r.first_token_step - r.arrival_step + 1


def test_priority_work_overtakes_batch_work(random_small):
    """Batch jobs fill both slots; an interactive request arriving later runs at once under
    `priority` (it preempts a batch job), but waits for a slot under `fcfs`."""
    work = [("b0", 8, 40, 0, 2, None), ("b1", 8, 40, 0, 2, None), ("b2", 8, 40, 0, 2, None),
            ("chat", 8, 4, 5, 0, 3)]
    fcfs, _ = run(random_small, work, max_num_seqs=2, policy="fcfs")
    prio, snaps = run(random_small, work, max_num_seqs=2, policy="priority")
    assert ttft(fcfs["chat"]) > 30  # until b0 and b1 finish
    assert ttft(prio["chat"]) == 1
    assert any(s.preempted for s in snaps), "the interactive arrival should evict a batch job"
    # and it overtook b2, which had been waiting since step 0
    assert prio["chat"].first_scheduled_step < prio["b2"].first_scheduled_step


def test_aging_bounds_the_wait_of_the_lowest_class(random_small):
    """A steady stream of interactive work starves one batch job without aging; with aging the
    batch job climbs one class per `aging_steps` and gets a slot within a bounded wait."""
    stream = [(f"i{k}", 4, 6, 2 * k, 0, None) for k in range(60)]  # keeps the single slot busy for ~120 steps
    work = stream + [("batch", 4, 4, 1, 2, None)]
    starved, _ = run(random_small, work, max_num_seqs=1, policy="priority", priority_aging_steps=10_000)
    aged, _ = run(random_small, work, max_num_seqs=1, policy="priority", priority_aging_steps=10)
    wait = lambda r: r.first_scheduled_step - r.arrival_step  # noqa: E731
    assert wait(starved["batch"]) > 100
    # two classes to climb (2 -> 0) at 10 steps each, then it is the oldest: at most one more
    # 6-step request runs before it, plus the request in progress
    assert wait(aged["batch"]) <= 2 * 10 + 2 * 7


def test_sjf_lowers_short_requests_mean_ttft(random_small):
    work = ([(f"long{k}", 16, 48, 0, 0, None) for k in range(4)]
            + [(f"short{k}", 8, 4, 0, 0, None) for k in range(4)])
    means = {}
    for policy in ("fcfs", "sjf"):
        reqs, _ = run(random_small, work, max_num_seqs=2, policy=policy)
        shorts = [ttft(r) for rid, r in reqs.items() if rid.startswith("short")]
        means[policy] = sum(shorts) / len(shorts)
    assert means["sjf"] < means["fcfs"] / 4


@pytest.mark.parametrize("policy", ["fcfs", "sjf", "priority", "edf"])
def test_every_policy_finishes_everything_with_the_same_tokens(random_small, policy):
    """Policies change order and timing, never what a request generates."""
    work = [(f"r{k}", 5 + 3 * k, 6 + k % 4, k // 2, k % 3, 6) for k in range(8)]
    reference, _ = run(random_small, work, max_num_seqs=8, policy="fcfs")
    reqs, _ = run(random_small, work, max_num_seqs=2, block_size=4, num_blocks=12, policy=policy)
    for rid, r in reqs.items():
        assert r.output_token_ids == reference[rid].output_token_ids


@pytest.fixture(scope="module")
def support_runs(tiny):
    workload = preset("support-bot-vs-batch").scaled(0.5)
    requests = workload_requests(tiny, workload, seed=0)
    return {p: run_requests(tiny, requests, engine_config_for(workload, policy=p)).summary
            for p in ("fcfs", "priority", "edf")}


@pytest.mark.slow
def test_edf_meets_more_deadlines_than_fcfs_on_support_bot_vs_batch(support_runs):
    attained = {p: s["by_class"]["support"]["slo_attainment"] for p, s in support_runs.items()}
    assert attained["edf"] > attained["fcfs"] + 0.5
    assert attained["priority"] > attained["fcfs"]
    assert support_runs["fcfs"]["preemptions"] == 0 < support_runs["edf"]["preemptions"]


@pytest.mark.parametrize("policy", ["priority", "edf"])
def test_an_answer_in_progress_is_not_evicted_by_an_equal_newcomer(random_small, policy):
    """Interactive requests with only a TTFT SLO keep their slot once answering: a later one of the
    same class evicts a batch job, never them (equals evicting equals would only thrash)."""
    chats = [(f"c{k}", 8, 30, 2 + 3 * k, 0, 4) for k in range(3)]
    work = [("b0", 8, 80, 0, 2, None), ("b1", 8, 80, 0, 2, None), ("b2", 8, 80, 0, 2, None)] + chats
    reqs, _ = run(random_small, work, max_num_seqs=3, policy=policy)
    assert all(reqs[rid].num_preemptions == 0 for rid, *_ in chats)
    assert all(ttft(reqs[rid]) <= 4 for rid, *_ in chats)
    assert sum(reqs[b].num_preemptions for b in ("b0", "b1", "b2")) >= 3
