"""Worksheet evidence, checked against real runs of the tiny model: each task's check passes on the student's
own runs and fails when a figure is changed, a run is swapped for another, a run is named that was never
made, or the claimed effect is absent."""
import pytest
from run_store import spec_summary

from engine import load_model
from lessons.evidence import (METRICS, RunSpec, SpecError, check_batching, check_effects, check_goal, check_paging,
                              effect_specs, goal_specs, say)


@pytest.fixture(scope="module")
def model():
    return load_model("tiny")


def summary(model, spec: RunSpec) -> dict:
    """The spec's run as the worksheet page measures it, once per test session (tests/run_store.py)."""
    return spec_summary(model, "tiny", spec)


def shown(metric: str, s: dict, who: str = "all") -> str:
    """A figure as the page shows it, as the student copies it."""
    m = METRICS[metric]
    return f"{m.value(s, who):.{m.digits}f}"


def codes(verdict) -> list[str]:
    return [f.code for f in verdict.findings if not f.ok]


# --- task 1: a fixed and a continuous run of one workload ------------------------------------------------------
@pytest.fixture(scope="module")
def batching(model):
    static, continuous = (RunSpec("chat-and-reports", {"batcher": b}) for b in ("static", "continuous"))
    other = RunSpec("high-variance", {"batcher": "continuous"})
    runs = {s.key: s for s in (static, continuous, other)}
    measured = {k: summary(model, s) for k, s in runs.items()}
    claims = {"fixed_run": static.key, "continuous_run": continuous.key}
    for column, spec in (("fixed", static), ("continuous", continuous)):
        claims[f"throughput_{column}"] = shown("throughput", measured[spec.key])
        claims[f"waiting_{column}"] = shown("wait_mean", measured[spec.key])
    return claims, runs, measured, other


def test_the_batching_table_passes_on_the_students_own_runs(batching):
    claims, runs, measured, _ = batching
    verdict = check_batching(claims, runs, measured)
    assert verdict.verified, codes(verdict)
    assert float(claims["throughput_continuous"]) > float(claims["throughput_fixed"])  # what the table teaches


def test_a_changed_figure_is_named_with_its_run_never_with_what_the_run_measured(batching):
    claims, runs, measured, _ = batching
    typed = f"{float(claims['throughput_fixed']) + 0.5:.2f}"
    verdict = check_batching({**claims, "throughput_fixed": typed}, runs, measured)
    bad = [f for f in verdict.findings if not f.ok]
    assert [f.code for f in bad] == ["figure_off"] and bad[0].params["field"] == "throughput_fixed"
    assert claims["throughput_fixed"] not in str(bad[0].params)
    text = say(bad[0], "en", {"throughput_fixed": "Throughput, fixed batch"})
    assert typed in text and "#1" in text and "Throughput, fixed batch" in text
    assert claims["throughput_fixed"] not in text and claims["throughput_fixed"] not in say(bad[0], "zh")
    assert "#1" in say(bad[0], "zh") and "测得" in say(bad[0], "zh")


def test_a_run_of_another_workload_a_wrong_column_or_a_run_never_made_is_refused(batching):
    claims, runs, measured, other = batching
    assert "other_workload" in codes(check_batching({**claims, "continuous_run": other.key}, runs, measured))
    swapped = {**claims, "fixed_run": claims["continuous_run"], "continuous_run": claims["fixed_run"]}
    assert codes(check_batching(swapped, runs, measured)).count("wrong_variant") == 2
    never = RunSpec("chat-and-reports", {"batcher": "static", "max_num_seqs": 4}).key
    assert "never_made" in codes(check_batching({**claims, "fixed_run": never}, runs, measured))
    assert "not_number" in codes(check_batching({**claims, "waiting_fixed": "about ten"}, runs, measured))
    assert "no_run" in codes(check_batching({**claims, "fixed_run": ""}, runs, measured))


def test_two_runs_that_differ_in_more_than_the_batcher_are_refused(model, batching):
    claims, runs, measured, _ = batching
    fewer = RunSpec("chat-and-reports", {"batcher": "continuous", "max_num_seqs": 4})
    runs, measured = {**runs, fewer.key: fewer}, {**measured, fewer.key: summary(model, fewer)}
    verdict = check_batching({**claims, "continuous_run": fewer.key}, runs, measured)
    assert "other_settings" in codes(verdict)


# --- task 2: three changes, three mechanisms, each clearly hurting what the student names ---------------------
def effects(model, claims: dict):
    return check_effects(claims, {name: summary(model, spec) for name, spec in effect_specs(claims).items()})


HOLDS = {"workload": "chat-and-reports", "change_1": "tighter-memory", "metric_1": "ttft_p95", "who_1": "chat",
         "change_2": "bursty-arrivals", "metric_2": "wait_mean", "who_2": "chat",
         "change_3": "longer-outputs", "metric_3": "e2e_p95", "who_3": "report"}


@pytest.mark.slow
def test_three_real_effects_pass(model):
    verdict = effects(model, HOLDS)
    assert verdict.verified, [say(f, "en") for f in verdict.findings]
    assert [f.code for f in verdict.findings] == ["effect_holds"] * 3


def test_a_claimed_effect_that_the_runs_do_not_show_fails(model):
    # on high-variance (one class, arrivals all at once) prompts twice as long barely move the mean wait
    absent = {"workload": "high-variance", "change_1": "longer-prompts", "metric_1": "wait_mean", "who_1": "all"}
    found = effects(model, absent).findings[0]
    assert found.code == "effect_absent" and found.params["after"] < found.params["before"] * 1.15
    # a widely spread output length lets chats through sooner on chat-and-reports: the claim is backwards
    reversed_ = {**HOLDS, "change_1": "varied-outputs"}
    assert effects(model, reversed_).findings[0].code == "effect_reversed"


def test_the_same_mechanism_twice_and_mismatched_fields_fail(model):
    again = {**HOLDS, "change_3": "tighter-memory", "metric_3": "wait_mean"}
    assert "same_mechanism" in codes(effects(model, again))
    assert "bad_who" in codes(effects(model, {**HOLDS, "metric_1": "throughput", "who_1": "chat"}))
    assert "feature_incomplete" in codes(effects(model, {**HOLDS, "metric_2": ""}))
    assert codes(check_effects({}, {})) == ["no_workload"]


# --- task 3: contiguous vs paged at the same memory -----------------------------------------------------------
@pytest.fixture(scope="module")
def paging(model):
    contiguous, paged = (RunSpec("chat-and-reports", {"kv_layout": k}) for k in ("contiguous", "paged"))
    more_memory = RunSpec("chat-and-reports", {"kv_layout": "paged", "num_blocks": 192})
    runs = {s.key: s for s in (contiguous, paged, more_memory)}
    measured = {k: summary(model, s) for k, s in runs.items()}
    claims = {"contiguous_run": contiguous.key, "paged_run": paged.key}
    for column, spec in (("contiguous", contiguous), ("paged", paged)):
        for row in ("running", "kv_waste", "refusals"):
            claims[f"{row}_{column}"] = shown(row, measured[spec.key])
    return claims, runs, measured, more_memory


def test_the_paging_comparison_passes_and_shows_what_paging_solves(paging):
    claims, runs, measured, _ = paging
    verdict = check_paging(claims, runs, measured)
    assert verdict.verified, codes(verdict)
    assert verdict.findings[-1].code == "shows_difference"
    assert float(claims["running_paged"]) > float(claims["running_contiguous"])
    assert float(claims["kv_waste_paged"]) < float(claims["kv_waste_contiguous"])


def test_paging_at_another_memory_or_with_a_wrong_figure_fails(paging):
    claims, runs, measured, more_memory = paging
    assert "other_settings" in codes(check_paging({**claims, "paged_run": more_memory.key}, runs, measured))
    wrong = {**claims, "refusals_contiguous": "0"}
    assert codes(check_paging(wrong, runs, measured)) == ["figure_off"]


# --- task 4: the chat service's goal, as numbers -------------------------------------------------------------
@pytest.fixture(scope="module")
def policies(model):
    return {p: summary(model, spec) for p, spec in goal_specs().items()}


GOAL = {"ttft_max": "10", "throughput_mode": "pct_of_fcfs", "throughput_min": "95",
        "fairness_mode": "report_slowdown", "fairness_bound": "2", "policy": "priority"}


def test_a_goal_the_chosen_policy_meets_and_fcfs_misses_is_verified(policies):
    verdict = check_goal(GOAL, policies)
    assert verdict.verified, [say(f, "en") for f in verdict.findings]
    assert "fcfs" in verdict.findings[-1].params["policies"]


def test_a_goal_shows_which_parts_fail_and_a_goal_too_loose_to_matter_fails(policies):
    verdict = check_goal({**GOAL, "policy": "fcfs"}, policies)
    assert codes(verdict) == ["goal_ttft_fails"]
    loose = {**GOAL, "ttft_max": "5000", "throughput_mode": "tok_per_step", "throughput_min": "0.5",
             "fairness_mode": "jain", "fairness_bound": "0.1"}
    assert codes(check_goal(loose, policies)) == ["goal_too_loose"]


def test_a_malformed_goal_names_the_field(policies):
    assert codes(check_goal({**GOAL, "fairness_mode": "jain", "fairness_bound": "3"}, policies)) == ["jain_above_one"]
    assert codes(check_goal({**GOAL, "ttft_max": "soon"}, policies)) == ["goal_number"]
    assert codes(check_goal({**GOAL, "policy": "random"}, policies)) == ["goal_choice"]


def test_a_spec_the_lab_cannot_run_is_refused_by_name():
    for bad in ({"workload": "nope"}, {"workload": "uniform", "settings": {"num_blocks": True}},
                {"workload": "uniform", "settings": {"gpu": 1}}, {"workload": "uniform", "change": "magic"}, []):
        with pytest.raises(SpecError):
            RunSpec.from_dict(bad)
    spec = RunSpec("uniform", {"batcher": "static"})
    assert RunSpec.from_dict(spec.to_dict()) == spec and RunSpec.from_dict(spec.to_dict()).key == spec.key


def test_every_finding_the_checks_can_make_is_said_in_both_languages():
    """Each code checks.py can emit has a zh and an en text whose placeholders are the finding's params."""
    import re
    from pathlib import Path

    from lessons.strings import strings

    texts = {key.removeprefix("evidence."): by_lang for key, by_lang in strings().items()
             if key.startswith("evidence.")}
    source = (Path(__file__).resolve().parent.parent / "lessons" / "evidence" / "checks.py").read_text()
    emitted = set(re.findall(r'"([a-z_]+)"', " ".join(re.findall(r"v\.add\([^)]*\)", source, re.S))))
    emitted |= {f"goal_{part}_{end}" for part in ("ttft", "throughput", "fairness") for end in ("holds", "fails")}
    emitted -= {"baseline", "num_rejected", "fairness_bound"}  # dict keys and field names inside the calls
    assert emitted <= set(texts), emitted - set(texts)
    for code, by_lang in texts.items():
        assert set(by_lang) == {"zh", "en"}, code
        assert set(re.findall(r"{(\w+)}", by_lang["zh"])) == set(re.findall(r"{(\w+)}", by_lang["en"])), code
