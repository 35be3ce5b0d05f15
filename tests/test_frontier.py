"""The trade-off frontier (engine/lab/frontier.py, ui/labs/frontier.py): a point is on the frontier exactly when no
other point matches or beats it on both axes and beats it on one; the SLO picks the point of most throughput that
meets it; and on the Scheduling policies page a six-point sweep draws the points the same single runs measure."""
import pytest

from engine.lab.frontier import KNOBS, Point, best_within, with_frontier


def p(value, throughput, ttft):
    return Point(value, throughput, {"ttft_p95": ttft, "tpot_p95": None}, {})


def test_the_frontier_keeps_exactly_the_points_nothing_beats():
    points = with_frontier([p("a", 4, 10), p("b", 6, 20), p("c", 5, 30), p("d", 6, 25), p("e", 8, 60), p("f", 8, 60)])
    on = {q.value for q in points if q.on_frontier}
    assert on == {"a", "b", "e", "f"}  # c: b has more throughput sooner; d: b ties its throughput, sooner
    for q in points:
        beaten = any(r.throughput >= q.throughput and r.latency["ttft_p95"] <= q.latency["ttft_p95"] and
                     (r.throughput, r.latency["ttft_p95"]) != (q.throughput, q.latency["ttft_p95"]) for r in points)
        assert q.on_frontier == (not beaten)


def test_the_slo_picks_the_most_throughput_that_meets_it():
    points = with_frontier([p(2, 3.0, 5), p(4, 5.0, 12), p(8, 7.5, 40), p(16, 9.0, 300)])
    assert best_within(points, 40).value == 8
    assert best_within(points, 39.9).value == 4
    assert best_within(points, 4) is None


@pytest.mark.slow
def test_a_sweep_on_the_policies_page_draws_the_single_runs_points():
    """max_num_seqs over the page's workload, seed and request count: each point is what a run of those settings
    measures alone."""
    from engine.lab.experiment import run_requests, workload_requests
    from engine.lab.workload import engine_config_for, preset
    from engine.models.loader import DEFAULT_MODEL, load_model
    from tests.test_app_teaching import page

    at = page("pages/policies.py")
    at.session_state["policies.sweep.knob"] = "max_num_seqs"  # as a lecture moment would set it
    at.session_state["policies.sweep.slo.ttft_p95"] = 100.0
    at.session_state["policies.scale"] = 0.5  # the page's requests, halved: the sweep's too
    next(b for b in at.button if b.label == "Sweep").click().run(timeout=600)
    assert not at.exception, [e.value for e in at.exception]
    knob, (workload_name, seed, scale), points = at.session_state["policies.sweep.points"]
    assert knob == "max_num_seqs" and [q.value for q in points] == list(KNOBS["max_num_seqs"])
    points = with_frontier(points)
    assert any(q.on_frontier for q in points)
    loaded, workload = load_model(DEFAULT_MODEL), preset(workload_name).scaled(0.5)
    assert scale == 0.5
    aging = at.session_state["policies.aging"]
    for q in points:
        alone = run_requests(loaded, workload_requests(loaded, workload, seed), engine_config_for(
            workload, max_num_seqs=q.value, policy="fcfs", priority_aging_steps=aging)).summary
        assert q.throughput == alone["throughput_tok_per_step"]
        assert q.latency == {"ttft_p95": alone["latency"]["ttft_steps"]["p95"],
                             "tpot_p95": alone["latency"]["tpot_steps"]["p95"]}
    chosen = best_within(points, 100)
    assert chosen is not None and chosen.latency["ttft_p95"] <= 100
    assert all(not (r.latency["ttft_p95"] <= 100 and r.throughput > chosen.throughput) for r in points)
    assert at.table and f"at {chosen.value}" in at.table[-1].value.columns  # who pays: each class at the point
