"""A student's key is a first-class policy: keys equal to the built-ins give the built-ins' timelines step for
step; a key that fails stops its own run cleanly, naming the request, while another engine goes on."""
import pytest

from engine import EngineConfig
from engine.core.llm_engine import LLMEngine
from engine.lab.experiment import run_requests, workload_requests
from engine.lab.workload import preset
from engine.policy_key import PolicyKeyError

# three workloads, cut down to run in seconds; memory tight enough on the first that preemption happens
WORKLOADS = {
    "chat-and-reports": (0.25, dict(max_num_seqs=8, num_blocks=40)),
    "support-bot-vs-batch": (0.25, dict(max_num_seqs=6, num_blocks=60)),
    "high-variance": (0.2, dict(max_num_seqs=8)),
}
SAME_AS = [  # (built-in policy, the same rule written as a key, preemptive)
    ("fcfs", "0", False),
    ("fcfs", "arrival_step", False),
    ("sjf", "num_prompt_tokens + max_tokens", False),
    ("priority", "max(0, priority - waited // 100)", True),
    ("edf", "deadline", True),
]


def timeline(snapshots):
    """Everything the Policies view draws from a step: who ran with how many tokens, the queue, who moved."""
    return [(s.step, tuple((b.request_id, b.slot, b.num_prefill_tokens, b.num_decode_tokens) for b in s.batch),
             s.waiting, s.admitted, s.preempted, s.finished) for s in snapshots]


class Runs:
    """Runs of one workload's requests: a built-in's made once for the module, a key's each time."""

    def __init__(self, loaded, workloads):
        self.loaded, self.workloads, self.made = loaded, workloads, {}

    def builtin(self, workload, policy):
        if (workload, policy) not in self.made:
            self.made[workload, policy] = self.key(workload, policy=policy)
        return self.made[workload, policy]

    def key(self, workload, **config):
        return run_requests(self.loaded, self.workloads[workload], EngineConfig(**WORKLOADS[workload][1], **config))


@pytest.fixture(scope="module")
def runs(random_small, workloads):
    return Runs(random_small, workloads)


@pytest.fixture(scope="module")
def workloads(random_small):
    return {name: workload_requests(random_small, preset(name).scaled(scale), seed=0)
            for name, (scale, _) in WORKLOADS.items()}


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
@pytest.mark.parametrize("builtin,key,preemptive", SAME_AS, ids=[f"{p}={k}" for p, k, _ in SAME_AS])
def test_a_key_equal_to_a_builtin_policy_gives_its_timeline_step_for_step(runs, workload, builtin, key, preemptive):
    builtin_run = runs.builtin(workload, builtin)
    student = runs.key(workload, policy_key=key, policy_key_preemptive=preemptive)
    assert timeline(student.snapshots) == timeline(builtin_run.snapshots)
    if workload == "chat-and-reports":
        assert any(s.preempted for s in builtin_run.snapshots), "memory should run short, so the victim matters"


@pytest.mark.parametrize("builtin,key", [("fcfs", "arrival_step"), ("sjf", "num_prompt_tokens + max_tokens")])
def test_a_key_drives_the_static_batcher_as_the_builtin_does(random_small, workloads, builtin, key):
    settings = dict(WORKLOADS["high-variance"][1], batcher="static")
    reference = run_requests(random_small, workloads["high-variance"], EngineConfig(policy=builtin, **settings))
    student = run_requests(random_small, workloads["high-variance"], EngineConfig(policy_key=key, **settings))
    assert timeline(student.snapshots) == timeline(reference.snapshots)


def test_the_victim_key_picks_who_is_preempted(random_small, workloads):
    """The same order, two victim keys: the longest-to-go evicted first, or the shortest; the runs differ."""
    settings = WORKLOADS["chat-and-reports"][1]
    runs = {victim: run_requests(random_small, workloads["chat-and-reports"],
                                 EngineConfig(policy_key="arrival_step", policy_victim_key=victim, **settings))
            for victim in ("tokens_left", "-tokens_left")}
    preempted = {victim: [rid for s in run.snapshots for rid in s.preempted] for victim, run in runs.items()}
    assert preempted["tokens_left"] and preempted["-tokens_left"]
    assert preempted["tokens_left"] != preempted["-tokens_left"]


def test_the_key_is_recorded_with_the_run(random_small, workloads):
    run = run_requests(random_small, workloads["high-variance"][:4],
                       EngineConfig(policy_key="waited - 0.1 * max_tokens"))
    assert run.config.to_dict()["policy_key"] == "waited - 0.1 * max_tokens"


def engine_with(loaded, requests, **config):
    engine = LLMEngine(loaded, EngineConfig(max_num_seqs=4, **config))
    for r in requests:
        r.add_to(engine)
    return engine


@pytest.mark.parametrize("key,budget_ops,code", [
    ("100 / (num_output_tokens - 3)", 500_000, "policy_key.division_by_zero"),  # fails once a request has 3 tokens
    ("waited", 1, "policy_key.over_budget"),  # one request's work (a field read, one part) is over 1 already
])
def test_a_failing_key_stops_its_run_cleanly_while_another_engine_goes_on(random_small, workloads, key, budget_ops,
                                                                          code):
    requests = workloads["high-variance"][:6]
    failing = engine_with(random_small, requests, policy_key=key, policy_key_budget_ops=budget_ops)
    other = engine_with(random_small, requests, policy_key="num_prompt_tokens + max_tokens")
    error = None
    while other.has_unfinished():
        other.step()
        if error is None and failing.has_unfinished():
            try:
                failing.step()
            except PolicyKeyError as e:
                error = e
    assert error is not None and error.code == code
    assert error.message.params["request_id"] in {r.request_id for r in requests}
    if code == "policy_key.division_by_zero":
        assert error.message.params["values"] == "num_output_tokens=3"
    # the failing run stopped at the start of a step, with nothing half-done: its blocks are consistent and freed
    failing.block_manager.check_invariants()
    failing.abort_unfinished("the key failed")
    failing.step()
    assert failing.block_manager.num_free_blocks == failing.block_manager.num_blocks
    assert all(r.is_finished and r.finish_reason.value in ("length", "stop") for r in other.requests.values())


def test_a_key_unlike_fcfs_gives_another_timeline(runs):
    """The comparison above is not blind: longest prompt first is not FCFS."""
    fcfs = runs.builtin("high-variance", "fcfs")
    student = runs.key("high-variance", policy_key="-num_prompt_tokens")
    assert timeline(student.snapshots) != timeline(fcfs.snapshots)
