"""The chapter's three kinds of request (交互式请求、内部高优工单、批量离线任务) as a workload, and the policies
page's vLLM v1 head-of-line moment beside the lab's preemptive priority."""
import pytest

from engine.lab.experiment import run_requests, workload_requests
from engine.lab.workload import engine_config_for
from engine.lab.workload import preset
from lessons import load_moments
from tests.test_app_teaching import page
from app_support import runs_ended


def test_the_preset_has_the_chapters_three_kinds_ranked_and_offline_work_filling_every_slot_first():
    kinds = {c.name: c for c in preset("three-kinds").classes}
    assert [kinds[k].priority for k in ("interactive", "ticket", "offline")] == [0, 1, 2]
    assert kinds["offline"].arrivals.kind == "all-at-once"
    assert kinds["offline"].count >= preset("three-kinds").engine_hints["max_num_seqs"]
    assert kinds["interactive"].arrivals.start_step > 0 and kinds["interactive"].ttft_slo_steps


@pytest.fixture(scope="module")
def head_of_line(tiny):
    """Half the preset, under the lab's priority and under vLLM v1's."""
    workload = preset("three-kinds").scaled(0.5)
    requests = workload_requests(tiny, workload, 0)
    return {label: run_requests(tiny, requests, engine_config_for(workload, policy="priority", **extra)).summary
            for label, extra in (("lab", {}), ("v1", {"vllm_v1_semantics": True}))}


def test_interactive_requests_wait_behind_full_slots_under_vllm_v1_and_cut_in_under_the_lab(head_of_line):
    lab, v1 = head_of_line["lab"], head_of_line["v1"]
    assert lab["preemptions"] > 0 and v1["preemptions"] == 0
    lab_ttft, v1_ttft = (s["by_class"]["interactive"]["ttft_steps"]["p50"] for s in (lab, v1))
    assert lab_ttft <= 2 and v1_ttft > 20 * lab_ttft
    assert v1["by_class"]["interactive"]["slo_attainment"] < lab["by_class"]["interactive"]["slo_attainment"]


def test_the_moment_compares_the_labs_priority_with_vllm_v1s():
    moment = load_moments()["v1-head-of-line"]
    assert (moment.page, moment.workload, moment.compare) == ("policies", "three-kinds", ("priority", "priority-v1"))


@pytest.mark.slow
def test_the_policies_page_runs_the_moment_side_by_side():
    at = page("pages/policies.py", "en")
    next(b for b in at.button if b.key == "policies.moment-btn.v1-head-of-line").click().run()
    skip = next((b for b in at.button if b.label == "Skip, just run"), None)
    if skip is not None:
        skip.click().run()
    runs_ended(at)
    assert not at.exception, [e.value for e in at.exception]
    runs = at.session_state["policies.runs"]
    assert [(r.label, r.config.policy, r.config.vllm_v1_semantics) for r in runs] == [
        ("priority", "priority", False), ("priority-v1", "priority", True)]
    shown = " ".join([h.proto.body for h in at.get("html")] + [str(c) for df in at.dataframe for c in df.value.columns]
                     + [str(v) for df in at.dataframe for v in df.value.to_numpy().ravel()])
    assert "Priority as in vLLM v1" in shown, shown[:2000]
