"""The policy challenge's workload and grading: measured on real runs, the hidden seeds drawn per class with the
server's secret and never in what a grade carries, memory graded beside the SLOs, and a score that a rule serving
one axis alone does not win."""
import json

import pytest

from engine.lab import challenge
from engine.lab.challenge import PUBLIC_SEED, SEED_POOL, fcfs_run, grade_key, grade_runs, hidden_seeds, run_key
from engine.lab.challenge_score import DEFAULT_TARGETS, FLOORS, points, score

SUPPORT_FIRST = "0 if request_class == 'support' else (1 if request_class == 'chat' else 2)"
SECRET = "a-server-secret-for-the-tests"
# (order key, victim key, preemptive)
SHORT_FIRST = ("num_prompt_tokens + max_tokens", "", False)
SHORT_FIRST_PREEMPTING = ("num_prompt_tokens + max_tokens", "", True)
EDF = ("deadline", "tokens_left", True)  # the page's EDF example
# the first token's SLO first, then the shortest; preempting, but evicting what costs least to compute again
TRADE_OFF = ("ttft_slo + tokens_left / 8", "-(num_prompt_tokens + num_output_tokens)", True)


def test_each_class_draws_its_own_hidden_seeds_from_the_pool_with_the_servers_secret():
    codes = [f"class-{i}" for i in range(60)] + ["", "cs-101"]
    drawn = {code: hidden_seeds(SECRET, code) for code in codes}
    assert all(hidden_seeds(SECRET, code) == pair for code, pair in drawn.items())  # the same every time
    seeds = [seed for pair in drawn.values() for seed in pair]
    assert len(set(seeds)) == len(seeds), "two classes share a seed"
    assert all(seed in SEED_POOL and seed != PUBLIC_SEED for seed in seeds)
    assert hidden_seeds("another server's secret", "cs-101") != drawn["cs-101"]


def test_a_grade_carries_figures_and_never_a_hidden_seed(random_small):
    seeds = hidden_seeds(SECRET, "cs-101")
    grade = grade_key(random_small, "num_prompt_tokens + max_tokens", seeds)
    text = json.dumps(grade.to_dict())
    assert grade.num_runs == 2 and not any(str(seed) in text for seed in seeds)
    assert "seed" not in text


def test_choices_matter_and_the_grade_says_who_paid(random_small):
    """Serving support first meets support's SLO that FCFS misses; the requests it pushed back are named, each
    with the waiting measured in both runs."""
    mine = run_key(random_small, PUBLIC_SEED, SUPPORT_FIRST, preemptive=True)
    fcfs = fcfs_run(random_small, PUBLIC_SEED)
    grade = grade_runs([(mine, fcfs)])
    assert grade.slo_by_class["support"] > grade.slo_by_class_fcfs["support"] + 0.5
    assert fcfs.summary["preemptions"] > 0, "the workload should be short of memory"
    waited, waited_fcfs = challenge.waiting_steps(mine), challenge.waiting_steps(fcfs)
    assert grade.payers and all(p.extra > 0 for p in grade.payers)
    for p in grade.payers:
        assert (p.waited_key, p.waited_fcfs) == (waited[p.request_id], waited_fcfs[p.request_id])
    assert {p.request_class for p in grade.payers} != {"support"}
    assert grade.payers[0].extra == max(waited[r] - waited_fcfs[r] for r in waited)




def test_fcfs_written_as_a_key_scores_exactly_as_fcfs(random_small):
    grade = grade_key(random_small, "arrival_step", (PUBLIC_SEED,))
    assert grade.throughput_vs_fcfs == 1.0 and not grade.payers and grade.preemptions == grade.preemptions_fcfs
    assert grade.slo_by_class == grade.slo_by_class_fcfs and grade.jain == grade.jain_fcfs


def test_memory_is_graded_from_the_runs_preemptions(random_small):
    """Preempting for every shorter arrival meets SLOs that FCFS misses, and pays in memory (requests evicted and
    prefilled again): the grade counts the preemptions the run made, against the class's target."""
    mine = run_key(random_small, PUBLIC_SEED, "num_prompt_tokens + max_tokens", preemptive=True)
    fcfs = fcfs_run(random_small, PUBLIC_SEED)
    grade = grade_runs([(mine, fcfs)])
    assert grade.preemptions == mine.summary["preemptions"] > fcfs.summary["preemptions"] == grade.preemptions_fcfs
    assert grade.slo_attainment > grade.slo_attainment_fcfs
    assert not grade.met()["preemptions"] and points(grade.axes(), grade.targets)["preemptions"] < 1
    strict = grade_runs([(mine, fcfs)], {**DEFAULT_TARGETS, "preemptions": 0.0})
    assert strict.targets["preemptions"] == 0.0 and strict.score() <= grade.score()


def test_the_default_targets_are_reachable_and_the_score_rewards_the_trade_off(random_small):
    """On the public seed: a rule that weighs the first token's SLO against memory meets every default target;
    FCFS, shortest first (preempting or not) and EDF each miss one and score below it."""
    fcfs = fcfs_run(random_small, PUBLIC_SEED)
    grades = {name: grade_runs([(run_key(random_small, PUBLIC_SEED, key, victim or None, preemptive), fcfs)])
              for name, (key, victim, preemptive) in {"short_first": SHORT_FIRST, "edf": EDF,
                                                       "short_first_preempting": SHORT_FIRST_PREEMPTING,
                                                       "trade_off": TRADE_OFF}.items()}
    grades["fcfs"] = grade_runs([(fcfs, fcfs)])
    assert all(grades["trade_off"].met().values()), grades["trade_off"].axes()
    for name in ("fcfs", "short_first", "short_first_preempting", "edf"):
        assert not all(grades[name].met().values()) and grades[name].score() < grades["trade_off"].score(), name
    assert grades["short_first_preempting"].slo_attainment >= grades["trade_off"].slo_attainment  # an axis alone


def test_points_are_one_at_the_target_zero_at_the_floor_and_linear_between():
    assert score(DEFAULT_TARGETS, DEFAULT_TARGETS) == 100.0
    assert score(FLOORS, DEFAULT_TARGETS) == 0.0
    halfway = {axis: (DEFAULT_TARGETS[axis] + FLOORS[axis]) / 2 for axis in DEFAULT_TARGETS}
    assert score(halfway, DEFAULT_TARGETS) == pytest.approx(50.0)
    assert score({**DEFAULT_TARGETS, "slo_attainment": 1.0}, DEFAULT_TARGETS) == 100.0  # beyond earns no more
    assert points({}, DEFAULT_TARGETS) == {axis: 0.0 for axis in DEFAULT_TARGETS}
    assert challenge.Grade.__dataclass_fields__["targets"]  # a grade keeps the targets it was scored against
