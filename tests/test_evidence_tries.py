"""A task's tries from check to check (lessons/evidence/tries.py): choices of fact judged only when checked, one
free try each, a choice right only after a wrong check recorded as guessed-through; stored tries that are not
readable count as none."""
import pytest

from lessons import load_tasks
from lessons.evidence.checks import Verdict
from lessons.evidence.tries import FREE_CHOICE_TRIES, Tries
from lessons.worksheet_status import task_status


@pytest.fixture(scope="module")
def task():
    return next(t for t in load_tasks("en") if t.id == "compare-batching")


def facts(task):
    return [f for f in task.fields if f.kind == "choice" and f.answer]


def right(task) -> dict:
    return {f.id: f.answer for f in facts(task)}


def wrong(task) -> dict:
    return {f.id: next(v for v, _ in f.options if v != f.answer) for f in facts(task)}


def evidence(ok: bool = True) -> Verdict:
    v = Verdict()
    v.add(ok, "stored")
    return v


def test_choices_count_only_once_checked(task):
    tries = Tries()
    answers = right(task)
    assert task_status(task, answers, evidence(), {}, None, tries=tries).waiting_for()[:1] == ["choices"]
    tries.checked(evidence(), answers, facts(task))
    status = task_status(task, answers, evidence(), {}, None, tries=tries)
    assert all(status.choices.values()) and status.guessed == ()


def test_a_choice_right_only_after_a_wrong_check_is_guessed_through(task):
    assert FREE_CHOICE_TRIES == 1
    tries = Tries()
    first = {**right(task), "complexity_fixed": wrong(task)["complexity_fixed"]}
    tries.checked(evidence(), first, facts(task))
    status = task_status(task, first, evidence(), {}, None, tries=tries)
    assert not status.choices["complexity_fixed"] and status.waiting_for()[:1] == ["choices"]
    changed = right(task)
    assert not task_status(task, changed, evidence(), {}, None, tries=tries).choices["complexity_fixed"]  # unchecked
    tries.checked(evidence(), changed, facts(task))
    status = task_status(task, changed, evidence(), {}, None, tries=tries)
    assert all(status.choices.values()) and status.guessed == ("complexity_fixed",)
    again = Tries.from_json(tries.to_json())  # as the student's progress keeps it
    assert task_status(task, changed, evidence(), {}, None, tries=again).guessed == ("complexity_fixed",)


def test_a_choice_changed_after_its_check_waits_for_the_next(task):
    tries = Tries()
    tries.checked(evidence(), right(task), facts(task))
    flipped = {**right(task), "scenarios_fixed": wrong(task)["scenarios_fixed"]}
    assert not task_status(task, flipped, evidence(), {}, None, tries=tries).choices["scenarios_fixed"]


@pytest.mark.parametrize("stored", [None, "", "not json", "[1, 2]", '{"checks": -3, "misses": [1], "choices": 7}',
                                    '{"checks": true, "choices": {"a": "b"}, "goal": 5}'])
def test_unreadable_tries_count_as_none(stored):
    tries = Tries.from_json(stored)
    assert tries.checks == 0 and tries.choices == {} and tries.goal == "" and tries.goal_attempts == 0


def test_a_goal_changed_after_its_results_were_shown_is_a_new_attempt():
    from lessons.evidence.checks import parse_goal
    goal_task = next(t for t in load_tasks("en") if t.id == "chat-slo-goal")
    form = {"ttft_max": "10", "throughput_mode": "pct_of_fcfs", "throughput_min": "90",
            "fairness_mode": "report_slowdown", "fairness_bound": "3", "policy": "priority"}
    tries = Tries()
    other_policy, tighter = {**form, "policy": "fcfs"}, {**form, "ttft_max": "4"}
    for answers, attempts in ((form, 1), (form, 1), (other_policy, 1), (tighter, 2), (tighter, 2)):
        tries.checked(evidence(False), answers, goal=parse_goal(answers)[0].terms())
        assert tries.goal_attempts == attempts
    assert task_status(goal_task, form, evidence(), {}, None, tries=Tries.from_json(tries.to_json())).goal_attempts == 2
