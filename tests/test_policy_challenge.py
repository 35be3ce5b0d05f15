"""The policy challenge's workload and grading: measured on real runs, the hidden seeds the same for every student
and never in what a grade carries."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.lab import challenge
from engine.lab.challenge import PUBLIC_SEED, fcfs_run, grade_key, grade_runs, hidden_seeds, run_key

SUPPORT_FIRST = "0 if request_class == 'support' else (1 if request_class == 'chat' else 2)"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def seeds_file(tmp_path, monkeypatch):
    monkeypatch.delenv(challenge.SEEDS_ENV, raising=False)
    monkeypatch.setattr(challenge, "SEEDS_FILE", tmp_path / "data" / "challenge-seeds.json")
    return challenge.SEEDS_FILE


def test_the_hidden_seeds_are_drawn_once_and_the_same_for_every_student_and_process(seeds_file):
    first = hidden_seeds()
    assert hidden_seeds() == first and PUBLIC_SEED not in first and first[0] != first[1]
    other_process = subprocess.run(
        [sys.executable, "-c", "from engine.lab import challenge; from pathlib import Path; "
         f"challenge.SEEDS_FILE = Path({str(seeds_file)!r}); print(*challenge.hidden_seeds())"],
        capture_output=True, text=True, cwd=ROOT, check=True)
    assert tuple(int(x) for x in other_process.stdout.split()) == first


def test_replicas_share_the_seeds_through_the_environment(seeds_file, monkeypatch):
    monkeypatch.setenv(challenge.SEEDS_ENV, "1234, 5678")
    assert hidden_seeds() == (1234, 5678) and not seeds_file.exists()


@pytest.mark.parametrize("value", ["1234", "a,b", "1,2,3", "-5,6"])
def test_misconfigured_seeds_are_refused_with_what_to_write(seeds_file, monkeypatch, value):
    from engine.messages import ConfigError

    monkeypatch.setenv(challenge.SEEDS_ENV, value)
    with pytest.raises(ConfigError, match="two seeds, such as 1234,5678"):
        hidden_seeds()


def test_a_grade_carries_figures_and_never_a_hidden_seed(random_small, monkeypatch):
    monkeypatch.setenv(challenge.SEEDS_ENV, "318407, 926151")
    grade = grade_key(random_small, "num_prompt_tokens + max_tokens")
    text = json.dumps(grade.to_dict())
    assert grade.num_runs == 2 and "318407" not in text and "926151" not in text
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
    grade = grade_key(random_small, "arrival_step", seeds=(PUBLIC_SEED,))
    assert grade.throughput_vs_fcfs == 1.0 and not grade.payers
    assert grade.slo_by_class == grade.slo_by_class_fcfs and grade.jain == grade.jain_fcfs


def test_the_leaderboard_order_puts_more_targets_met_first(random_small):
    fcfs = fcfs_run(random_small, PUBLIC_SEED)
    grades = {key: grade_runs([(run_key(random_small, PUBLIC_SEED, key, preemptive=True), fcfs)])
              for key in ("arrival_step", "deadline", SUPPORT_FIRST)}
    ranked = sorted(grades, key=lambda k: grades[k].rank_key())
    met = [sum(grades[k].met().values()) for k in ranked]
    assert met == sorted(met, reverse=True)
    targets_tight = grade_runs([(fcfs, fcfs)], targets={"slo_attainment": 1.0})
    assert not targets_tight.met()["slo_attainment"]
