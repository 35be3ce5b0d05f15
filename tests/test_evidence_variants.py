"""Each student's own variant of the worksheets (lessons/evidence/runs.worksheet_seed): two students' runs measure
other figures, one student's the same ones every visit, a run of another student's variant is refused by the
check, and the lesson's point holds on every variant a student can draw (continuous batching beats a fixed batch,
paging wastes less KV memory than reserving contiguous runs), on real runs with the tiny model's schedule
(random weights, half the cost)."""
import secrets

import pytest
from run_store import spec_summary

from engine import load_model
from engine.lab.experiment import run_requests, workload_requests
from lessons.evidence import METRICS, RunSpec, check_batching, check_paging
from lessons.evidence.runs import worksheet_seed

VARIANTS = 50  # each: four runs of the workload the worksheets suggest
WORKLOAD, BLOCKS = "chat-and-reports", 96  # the workload the worksheets suggest, at its suggested memory
BATCHING_FIGURES = ("throughput", "wait_mean")
PAGING_FIGURES = ("running", "kv_waste", "refusals")


@pytest.fixture(scope="module")
def random_weights():
    """Random weights: the same schedule as the tiny model's (every output has its workload's length), at about
    half the cost of a step (measured: 1,003 and 460 steps, 2.79 and 6.08 tokens a step, either model)."""
    return load_model("random-small")


def run_summary(loaded, spec: RunSpec) -> dict:
    workload, _ = spec.built()
    return run_requests(loaded, workload_requests(loaded, workload, spec.seed), spec.config()).summary


def batching_runs(seed: int) -> dict[str, RunSpec]:
    return {b: RunSpec(WORKLOAD, {"batcher": b}, seed) for b in ("static", "continuous")}


def paging_runs(seed: int) -> dict[str, RunSpec]:
    return {k: RunSpec(WORKLOAD, {"kv_layout": k, "num_blocks": BLOCKS}, seed) for k in ("contiguous", "paged")}


def figures(loaded, specs: dict[str, RunSpec], names) -> dict[tuple[str, str], float]:
    return {(run, m): METRICS[m].value(spec_summary(loaded, "random-small", spec))
            for run, spec in specs.items() for m in names}


def claim_figures(summaries: dict[str, dict], names) -> dict[tuple[str, str], float]:
    return {(run, m): METRICS[m].value(summary) for run, summary in summaries.items() for m in names}


def test_a_students_seed_is_their_own_and_the_same_on_every_visit():
    seeds = {worksheet_seed(secrets.token_urlsafe(16), "compare-batching") for _ in range(200)}
    assert len(seeds) == 200 and all(0 <= s < 2**31 for s in seeds)
    assert worksheet_seed("ab", "compare-batching") == worksheet_seed("ab", "compare-batching")
    assert worksheet_seed("ab", "compare-batching") != worksheet_seed("ab", "paged-attention-purpose")


@pytest.mark.slow
def test_two_students_measure_other_figures(random_weights):
    """On random weights: the figures are the schedule's, which is the tiny model's (random_weights above)."""
    a, b = (worksheet_seed(tok, "compare-batching") for tok in ("student-a", "student-b"))
    fa, fb = figures(random_weights, batching_runs(a), BATCHING_FIGURES), \
        figures(random_weights, batching_runs(b), BATCHING_FIGURES)
    assert all(fa[k] != fb[k] for k in fa), (fa, fb)
    a, b = (worksheet_seed(tok, "paged-attention-purpose") for tok in ("student-a", "student-b"))
    pa, pb = figures(random_weights, paging_runs(a), PAGING_FIGURES), \
        figures(random_weights, paging_runs(b), PAGING_FIGURES)
    assert pa[("contiguous", "kv_waste")] != pb[("contiguous", "kv_waste")]
    assert pa[("paged", "kv_waste")] != pb[("paged", "kv_waste")]


def test_a_run_of_another_students_variant_is_refused(random_weights):
    mine, theirs = worksheet_seed("me", "compare-batching"), worksheet_seed("them", "compare-batching")
    runs = {s.key: s for s in batching_runs(theirs).values()}
    measured = {k: spec_summary(random_weights, "random-small", s) for k, s in runs.items()}
    static, continuous = runs
    claims = {"fixed_run": static, "continuous_run": continuous}
    codes = [f.code for f in check_batching(claims, runs, measured, mine).findings if not f.ok]
    assert codes.count("not_your_variant") == 2
    assert "not_your_variant" not in [f.code for f in check_batching(claims, runs, measured, theirs).findings]


@pytest.mark.slow
@pytest.mark.parametrize("n", range(VARIANTS))
def test_the_lessons_point_holds_on_every_variant(random_weights, n):
    """A random student's variant of Task 1 and Task 3: what the worksheet teaches is there to be measured, and a
    student who copies the runs' figures passes the check."""
    tok = f"variant-{n}"
    seed = worksheet_seed(tok, "compare-batching")
    f = claim_figures({r: run_summary(random_weights, s) for r, s in batching_runs(seed).items()}, BATCHING_FIGURES)
    assert f[("continuous", "throughput")] > f[("static", "throughput")], (tok, f)
    assert f[("continuous", "wait_mean")] < f[("static", "wait_mean")], (tok, f)
    specs = paging_runs(worksheet_seed(tok, "paged-attention-purpose"))
    summaries = {r: run_summary(random_weights, s) for r, s in specs.items()}
    f = claim_figures(summaries, PAGING_FIGURES)
    assert f[("paged", "kv_waste")] < f[("contiguous", "kv_waste")], (tok, f)
    assert f[("paged", "running")] >= f[("contiguous", "running")], (tok, f)
    runs = {s.key: s for s in specs.values()}
    claims = {"contiguous_run": specs["contiguous"].key, "paged_run": specs["paged"].key}
    for (run, m), value in f.items():
        claims[f"{m}_{run}"] = f"{value:.{METRICS[m].digits}f}"
    verdict = check_paging(claims, runs, {specs[r].key: summaries[r] for r in specs}, specs["paged"].seed)
    assert verdict.verified, (tok, [x.code for x in verdict.findings if not x.ok])
