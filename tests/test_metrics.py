"""Metric formulas on hand-computed cases."""
import pytest

from engine.lab.metrics import distribution, ideal_steps, jain_index, kv_split, percentile, request_metrics, slo_met
from engine.core.request import SLO, FinishReason, Request
from engine.sampling_params import SamplingParams
from engine.core.snapshot import FrozenDict, RequestView, StepSnapshot


def test_percentiles_interpolate_linearly():
    values = [10, 20, 30, 40, 50]
    assert percentile(values, 50) == 30
    assert percentile(values, 90) == pytest.approx(46)
    assert percentile(values, 99) == pytest.approx(49.6)
    assert percentile([], 50) is None
    d = distribution([3, None, 1, 2])
    assert d == {"n": 3, "mean": 2, "p50": 2, "p90": pytest.approx(2.8), "p95": pytest.approx(2.9),
                 "p99": pytest.approx(2.98), "max": 3}


def test_jain_index():
    assert jain_index([2, 2, 2, 2]) == pytest.approx(1.0)
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)  # one gets everything: 1/n
    assert jain_index([1, 3]) == pytest.approx(16 / 20)


def make_request(arrival=2, first_sched=4, tokens=((5, 1.5), (6, 1.7), (9, 2.3)), slo=None):
    r = Request("x", [1, 2, 3], SamplingParams(max_tokens=3), arrival_step=arrival, slo=slo or SLO())
    r.arrive(1.0)
    r.start_running(first_sched, 1.2)
    for step, t in tokens:
        r.append_token(7, step, t)
    r.finish(FinishReason.LENGTH, tokens[-1][0], tokens[-1][1])
    return r


def test_request_latencies_in_steps_and_seconds():
    m = request_metrics(make_request(), max_num_batched_tokens=2)
    assert (m["queue_steps"], m["ttft_steps"], m["e2e_steps"]) == (2, 4, 8)  # arrival 2, first token 5, done 9
    assert m["queue_s"] == pytest.approx(0.2) and m["ttft_s"] == pytest.approx(0.5) and m["e2e_s"] == pytest.approx(1.3)
    assert m["tpot_steps"] == 2.0 and m["tpot_s"] == pytest.approx(0.4)
    assert m["itl_s"] == pytest.approx([0.2, 0.6])
    # alone it would take ceil(3/2) = 2 prefill steps + 2 decode steps = 4; it took 8
    assert ideal_steps(3, 3, 2) == 4 and m["slowdown"] == 2.0


def test_slo_checks():
    assert slo_met(make_request(slo=SLO(ttft_steps=4))) is True
    assert slo_met(make_request(slo=SLO(ttft_steps=3))) is False
    assert slo_met(make_request(slo=SLO(latency_steps=8, ttft_s=0.5))) is True
    assert slo_met(make_request()) is None


def view(rid, computed, prompt, max_tokens):
    return RequestView(request_id=rid, status="running", request_class="default", priority=0, num_prompt_tokens=prompt,
                       num_output_tokens=computed - prompt, num_computed_tokens=computed, max_tokens=max_tokens,
                       slot=0, num_preemptions=0, finish_reason=None, arrival_step=0, num_cached_tokens=0,
                       swapped=False)


def snapshot(layout, tables, views, refs, fills):
    n = len(refs)
    return StepSnapshot(step=0, time_s=0, step_time_s=0, model_time_s=0, batch=(), slots=(), waiting=(),
                        block_tables=FrozenDict(tables), block_owner=(None,) * n, block_fill=tuple(fills),
                        block_ref_count=tuple(refs), block_cached=(False,) * n, block_size=4, kv_layout=layout,
                        written_blocks=(), requests=FrozenDict(views), emitted=FrozenDict())


def test_kv_split_contiguous_by_hand():
    # 10 blocks of 4 slots. Request a: blocks 0-3 (16 slots), 6 tokens so far, will end at 10 tokens.
    # Request b: blocks 6-7, 5 tokens, ends at 5. Free: blocks 4, 5, 8, 9 -> runs of 2 and 2.
    refs = [1, 1, 1, 1, 0, 0, 1, 1, 0, 0]
    fills = [4, 2, 0, 0, 0, 0, 4, 1, 0, 0]
    s = snapshot("contiguous", {"a": (0, 1, 2, 3), "b": (6, 7)},
                 {"a": view("a", 6, 4, 6), "b": view("b", 5, 4, 4)}, refs, fills)
    split = kv_split(s, {"a": 10, "b": 5})
    assert split["token_states"] == 11
    assert split["reserved"] == 4  # a fills 4 more slots later
    assert split["internal_fragmentation"] == 6 + 3  # a never fills 6; b never fills 3
    assert split["external_fragmentation"] == 8  # two runs of 8 slots: all but the largest
    assert split["free"] == 8 and split["total"] == 40
    assert sum(v for k, v in split.items() if k not in ("total", "shared_saved")) == 40


def test_kv_split_paged_counts_shared_blocks_once():
    # a and b share block 0 (a full prefix block); each has a private partly filled block.
    s = snapshot("paged", {"a": (0, 1), "b": (0, 2)}, {"a": view("a", 6, 6, 2), "b": view("b", 5, 5, 2)},
                 [2, 1, 1, 0], [4, 2, 1, 0])
    split = kv_split(s, {"a": 8, "b": 5})
    assert split["token_states"] == 4 + 2 + 1
    assert split["shared_saved"] == 4
    assert split["reserved"] == 2 and split["internal_fragmentation"] == 3
    assert split["external_fragmentation"] == 0 and split["free"] == 4
