"""Each student's own variant of the numeric quiz questions (lessons/quiz_variants.py): two students are graded
against other figures, the lesson's point holds on every variant a student can draw, a fixed guess passes a
prediction no more often than copying a classmate's answer (plus ten points), no fixed number passes more often
than the pool allows, and the pool's figures are the engine's (a sample run again here, a different sample each
time)."""
import random
import statistics

import pytest

from engine.lab.workload import preset
from lessons import load_moments, load_quiz, measured_value, run_spec, shown_value
from lessons.grading import within
from lessons.quiz_variants import CLAIMS, class_count, fill, givens, pool, recorded, variant
from tools.quiz_variants import RANGES, SPREAD, guesses

NUMERIC = {lang: [q for q in load_quiz(lang) if q.type == "numeric"] for lang in ("en", "zh")}
PREDICTIONS = [q for q in NUMERIC["en"] if q.predict]
MOMENTS = load_moments()
ENOUGH = 50  # variants per question


def values(q) -> list:
    """The answer each variant in the pool accepts, as the student enters it (a class id for "which class")."""
    return [shown_value(q, v) if isinstance(v, float) else v
            for v in (measured_value(recorded(q, entry)) for entry in pool()[q.id])]


def test_every_numeric_question_has_enough_variants_in_both_languages():
    assert {q.id for q in NUMERIC["en"]} == {q.id for q in NUMERIC["zh"]} == set(pool()) == set(CLAIMS)
    for q in NUMERIC["en"]:
        assert len(pool()[q.id]) >= ENOUGH, q.id
        assert all(recorded(q, v) is not None for v in pool()[q.id]), q.id


@pytest.mark.parametrize("q", NUMERIC["en"], ids=lambda q: q.id)
def test_the_lessons_point_holds_on_every_variant_a_student_can_draw(q):
    workload = preset(MOMENTS[q.run["moment"]].workload)
    failing = [v for v in pool()[q.id] if not CLAIMS[q.id](q, v, workload)]
    assert not failing, failing


def test_two_students_are_graded_against_other_figures_on_every_numeric_question():
    for q in NUMERIC["en"]:
        a, b = variant(q.id, "student-a"), variant(q.id, "student-b")
        assert a != b, q.id
        if len(set(map(str, values(q)))) > 20:  # not a share of a few support requests, nor a class
            assert measured_value(recorded(q, a)) != measured_value(recorded(q, b)), q.id
        assert variant(q.id, "student-a") == a  # the same on every visit
        spec_a, spec_b = run_spec(q, variant=a), run_spec(q, variant=b)
        assert (spec_a["seed"], spec_a["scale"], spec_a["settings"]) != (spec_b["seed"], spec_b["scale"],
                                                                           spec_b["settings"])
    # across a class of 30, the numeric answers are spread: no question gives most of the class one answer
    for q in NUMERIC["en"]:
        answers = [measured_value(recorded(q, variant(q.id, f"s{i}"))) for i in range(30)]
        if q.compare != "max_class":
            answers = [shown_value(q, a) for a in answers]
            assert max(sum(within(x, y, q.tolerance) for x in answers) for y in answers) <= 20, (q.id, answers)


def test_no_token_keeps_the_moments_own_runs():
    q = NUMERIC["en"][0]
    assert variant(q.id, "") is None
    assert run_spec(q, variant=None)["seed"] == MOMENTS[q.run["moment"]].seed


@pytest.mark.parametrize("q", PREDICTIONS, ids=lambda q: q.id)
def test_a_fixed_guess_passes_a_prediction_no_more_often_than_a_classmates_answer(q):
    """Chance is copying a classmate: how often another variant's answer passes on a student's own. The naive
    guesses (1, 0, the class median; for "which class", either class) pass at most ten points more often."""
    answers = values(q)
    n = len(answers)
    if q.compare == "max_class":
        for guess in {c for c, _ in q.classes}:
            assert sum(a == guess for a in answers) / n <= 0.5 + 0.10, (guess, answers)
        return
    chance = sum(within(answers[j], answers[i], q.tolerance) for i in range(n) for j in range(n) if i != j) \
        / (n * (n - 1))
    for guess in (1.0, 0.0, 100.0 if q.unit == "%" else 1.0, statistics.median(answers)):
        passed = sum(within(guess, a, q.tolerance) for a in answers) / n
        assert passed <= chance + 0.10, (q.id, guess, passed, chance)


@pytest.mark.parametrize("q", [q for q in PREDICTIONS if q.compare != "max_class"], ids=lambda q: q.id)
def test_no_fixed_guess_at_all_passes_a_prediction_more_often_than_its_pool_allows(q):
    """The best of every fixed number (the pool's answers and their tolerance's edges, where a guess's passes
    change), not only the naive ones: at most the question's spread (tools/quiz_variants.py), under a quarter for
    the predictions whose answers gather at a few values."""
    answers = values(q)
    allowed = RANGES.get(q.id, {}).get("spread", SPREAD)
    best = max(guesses(answers, q.tolerance), key=lambda g: sum(within(g, a, q.tolerance) for a in answers))
    assert sum(within(best, a, q.tolerance) for a in answers) / len(answers) <= allowed, (q.id, best)


def test_the_prompt_states_the_students_own_variant():
    for lang in ("en", "zh"):
        for q in NUMERIC[lang]:
            v = variant(q.id, "student-a")
            spec = run_spec(q, variant=v)
            workload = preset(spec["workload"])
            slots = spec["settings"].get("max_num_seqs") or workload.engine_hints["max_num_seqs"]
            text = fill(q.prompt, givens(q, v, workload, slots, lang))
            assert "{" not in text.replace("{cls}", ""), (q.id, text)
            if "{slots}" in q.prompt:
                assert str(v.slots) in text


@pytest.mark.slow
def test_a_sample_of_the_pool_is_what_the_engine_measures():
    """Two variants per question, drawn anew each time, run as the quiz's Run button runs them: the figures are the
    ones recorded (over many runs of the suite, every variant is checked)."""
    from engine import load_model
    from lessons.quiz_variants import metric_paths
    from lessons import metric_value
    from tools.quiz_variants import MODEL, key_of, summary_of

    loaded, rng = load_model(MODEL), random.Random()
    for q in NUMERIC["en"]:
        for v in rng.sample(pool()[q.id], 2):
            spec = run_spec(q, variant=v)
            run = summary_of(loaded, key_of(spec, spec["settings"]))
            assert {p: metric_value(run, p) for p in metric_paths(q, run)} == v.run, (q.id, v)
            if spec["versus_settings"] is not None:
                versus = summary_of(loaded, key_of(spec, spec["versus_settings"]))
                assert {p: metric_value(versus, p) for p in metric_paths(q, versus)} == v.versus, (q.id, v)


@pytest.mark.parametrize("qid", ["fcfs-support-slo-predict", "fcfs-longest-wait"])
def test_whether_the_batch_job_fills_the_slots_is_read_from_both_numbers_of_a_variant(qid):
    """The batch job's size is the student's own too: some variants leave slots to spare with fewer slots than
    others that the batch job fills, so no threshold on max_num_seqs alone (such as "more than 24") tells them
    apart."""
    workload = preset(MOMENTS["support-bot-sla"].workload)
    full = {v.slots for v in pool()[qid] if v.slots <= class_count(workload, "batch", v.scale)}
    spare = {v.slots for v in pool()[qid] if v.slots > class_count(workload, "batch", v.scale)}
    assert min(spare) < max(full), (sorted(full), sorted(spare))
