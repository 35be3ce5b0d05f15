"""Mid-run figures cover every request that has arrived. At every 10th frame of a lecture moment's runs (the holes
moment and the support bot's SLA), the live panel's TTFT and fairness count the requests still waiting with their
time so far, mark a TTFT that is such a lower bound with ≥, and say how many requests are counted so."""
import re

import pytest
import streamlit as st
from run_store import shared_run

from engine.lab.experiment import workload_requests
from engine.lab.metrics import ideal_steps, jain_index, percentile
from engine.lab.workload import engine_config_for, preset
from ui.shell.i18n import class_name, t
from ui.views.results import metrics_html

# (workload, the moment's settings, each run's label and settings), as lessons/moments.yaml and the pages give them
pytestmark = pytest.mark.slow  # five full lecture-moment runs (~20 s here); in the whole suite they come from the store

MOMENTS = {
    "fixed-batch-holes": ("high-variance", {"max_num_seqs": 8}, {b: {"batcher": b} for b in ("static", "continuous")}),
    "support-bot-sla": ("support-bot-vs-batch", {}, {p: {"policy": p} for p in ("fcfs", "priority", "edf")}),
}


@pytest.fixture(scope="module", params=list(MOMENTS))
def moment_runs(request, tiny):
    workload_name, settings, variants = MOMENTS[request.param]
    workload = preset(workload_name)
    requests = workload_requests(tiny, workload, 0)
    return requests, [shared_run(tiny, "tiny", requests, engine_config_for(workload, **settings, **v), label)
                      for label, v in variants.items()]


def stamps(run) -> tuple[dict, dict]:
    """Each request's first-token step and end step, read off the snapshots (not from the recorder)."""
    first, end = {}, {}
    for snap in run.snapshots:
        for rid in snap.emitted:
            first.setdefault(rid, snap.step)
        for rid in (*snap.finished, *snap.rejected, *snap.aborted):
            end.setdefault(rid, snap.step)
    return first, end


def expected(run, requests, frame: int, first: dict, end: dict) -> dict:
    """What the panel must show at this frame: per class the TTFT p50 over every arrived request (the ones with no
    first token yet at their earliest possible one), and fairness over every arrived request's slowdown so far."""
    step = run.snapshots[frame].step
    ttft, censored, slowdowns, unfinished = {}, {}, [], 0
    budget = run.config.max_num_batched_tokens
    for r in requests:
        started, ended = first.get(r.request_id, 10**9) <= step, end.get(r.request_id, 10**9) <= step
        if r.arrival_step > step or (ended and not started):
            continue
        cls = r.request_class
        ttft.setdefault(cls, []).append((first[r.request_id] if started else step + 1) - r.arrival_step + 1)
        censored[cls] = censored.get(cls, 0) + (not started)
        alone = max(1, ideal_steps(len(r.prompt_token_ids), run.recorder.requests[r.request_id].num_output_tokens,
                                   budget))
        slowdowns.append(((end[r.request_id] if ended else step + 1) - r.arrival_step + 1) / alone)
        unfinished += not ended
    return {"ttft_p50": {c: percentile(v, 50) for c, v in ttft.items()}, "censored": censored,
            "fairness": jain_index(slowdowns), "unfinished": unfinished}


def shown(html: str) -> dict:
    values = dict(re.findall(r'lab-metric-label">([^<]*)</div><div class="lab-metric-value">([^<]*)<', html))
    rows = {cells[0]: cells[1:] for cells in (re.findall(r"<td>([^<]*)</td>", row)
                                              for row in re.findall(r"<tr>(.*?)</tr>", html)) if cells}
    note = re.search(r'<p class="lab-note">([^<]*)</p>', html)
    return {"fairness": values[t("m.fairness")], "rows": rows, "note": note.group(1) if note else None}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_tenth_frame_counts_the_waiting_requests_and_says_so(moment_runs, lang):
    requests, runs = moment_runs
    st.session_state["lang"] = lang
    left_out = 0
    for run in runs:
        first, end = stamps(run)
        frames = [*range(0, run.frames, 10), run.frames - 1]
        for frame in frames if lang == "en" else frames[::5]:
            want, got = expected(run, requests, frame, first, end), shown(metrics_html(run, frame))
            for cls, p50 in want["ttft_p50"].items():
                cell = got["rows"][class_name(cls)][0]
                assert cell == ("≥ " if want["censored"][cls] else "") + f"{p50:.1f}", (run.label, frame, cls)
            assert got["fairness"] == f"{want['fairness']:.2f}", (run.label, frame)
            waiting = sum(want["censored"].values())
            if want["unfinished"]:
                assert got["note"] == t("m.so_far", waiting=waiting, unfinished=want["unfinished"]), (run.label, frame)
            else:
                assert got["note"] is None, (run.label, frame)
            left_out += waiting
        last = expected(run, requests, run.frames - 1, first, end)
        assert last["unfinished"] == 0 and f"{run.summary()['fairness_jain']:.2f}" == f"{last['fairness']:.2f}"
    assert left_out, "the moment has frames with requests still waiting: the rule was exercised"
