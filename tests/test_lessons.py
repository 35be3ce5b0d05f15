"""The teaching layer: lessons, worksheets and quiz in zh + en, their loader, checker and grader."""
import math
import re
import shutil

import pytest

import lessons
from lessons import (
    LANGS,
    check_field,
    check_task,
    grade,
    load_lessons,
    load_moments,
    load_quiz,
    load_tasks,
    metric_value,
    quiz_order,
    run_spec,
    shown_value,
    shuffled_items,
    valid_pages,
)
from lessons.answers_markdown import answers_from_markdown, answers_to_markdown
from lessons.attempt import Attempt, option_order, reason_order
from lessons.loader import LAB_PAGES, TOPICS
from lessons.strings import strings
from tools.quiz_cues import cue_figures

MOMENTS = load_moments()
LESSONS = {lang: load_lessons(lang) for lang in LANGS}
TASKS = {lang: load_tasks(lang) for lang in LANGS}
QUIZ = {lang: load_quiz(lang) for lang in LANGS}
OFF_TOPIC = ["The weather is nice today.", "今天天气不错。", "asdf", "I don't know", "不知道", "   "]


def by_id(items):
    return {x.id: x for x in items}


def task_field(task, field_id):
    return next(f for f in task.fields if f.id == field_id)


# --- lessons -----------------------------------------------------------------------------
def test_lessons_cover_the_chapter():
    en = LESSONS["en"]
    assert 8 <= len(en) <= 10
    assert [le.order for le in en] == sorted(le.order for le in en)
    assert [le.live_table for le in en].count("mechanisms") == 1
    assert en[0].id == "overview"


def test_lessons_zh_en_parity():
    zh, en = by_id(LESSONS["zh"]), by_id(LESSONS["en"])
    assert list(zh) == list(en)
    for lid in en:
        for key in ("order", "experiments", "live_table"):
            assert getattr(zh[lid], key) == getattr(en[lid], key), (lid, key)
        assert zh[lid].title and zh[lid].summary and zh[lid].title != en[lid].title


def _zh_length(body):
    return len(re.findall(r"[\u4e00-\u9fff]", body)) + len(re.findall(r"[A-Za-z0-9_]+", body))


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_bodies(lang):
    try_heading, check_heading = {"en": ("## Try it", "## Check yourself"), "zh": ("## 动手试试", "## 自测")}[lang]
    for le in LESSONS[lang]:
        size = len(le.body.split()) if lang == "en" else _zh_length(le.body)
        assert (250 <= size <= 600) if lang == "en" else (400 <= size <= 900), (le.id, size)
        assert try_heading in le.body and check_heading in le.body, le.id
        assert not re.search(r"<[a-zA-Z/][^>]*>|!\[|\$\$|\\\(|\\\[", le.body), f"{le.id}: HTML, image or LaTeX"
        named = set(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", le.body))
        assert named <= set(MOMENTS), (le.id, named - set(MOMENTS))
        assert named <= set(le.experiments), f"{le.id} names moments it does not list: {named - set(le.experiments)}"
        assert le.summary.count(".") <= 1 and le.summary.count("。") <= 1


@pytest.mark.parametrize("lang", LANGS)
def test_mechanism_table_and_misconceptions(lang):
    lesson = next(le for le in LESSONS[lang] if le.live_table == "mechanisms")
    rows = [line for line in lesson.body.splitlines() if line.startswith("|")]
    assert len(rows) == 5 and all(row.count("|") == 5 for row in rows)  # header, rule, three mechanisms
    for moment in ("contiguous-vs-paged", "online-uniform", "support-bot-sla"):  # refute a, b (攒够再跑), c
        assert f"`{moment}`" in lesson.body and moment in lesson.experiments


def test_vllm_names_verbatim():
    names = ["block_table", "slot_mapping", "max_num_seqs", "max_num_batched_tokens", "num_computed_tokens",
             "prefill", "decode", "TTFT", "KV cache"]
    for lang in LANGS:
        text = "\n".join(le.body for le in LESSONS[lang])
        assert all(name in text for name in names), [n for n in names if n not in text]


# --- links and moments -------------------------------------------------------------------
def _links(lang):
    yield from ((f"task {t.id}", t.link) for t in TASKS[lang])
    yield from ((f"question {q.id}", q.link) for q in QUIZ[lang])


@pytest.mark.parametrize("lang", LANGS)
def test_links_point_to_real_pages_and_moments(lang):
    pages = valid_pages(lang)
    assert {"home", "quiz", "tasks", "lesson-overview"} <= set(pages)
    for where, link in _links(lang):
        assert link["page"] in pages, where
        if link["moment"] is not None:
            assert link["page"] in LAB_PAGES and MOMENTS[link["moment"]].page == link["page"], where
    for le in LESSONS[lang]:
        assert all(p in MOMENTS for p in le.experiments)
    for q in QUIZ[lang]:
        if q.type == "numeric":
            assert MOMENTS[q.run["moment"]].workload is not None


# --- worksheets --------------------------------------------------------------------------
def test_tasks_shape():
    en = by_id(TASKS["en"])
    assert list(en) == ["compare-batching", "hard-requests", "paged-attention-purpose", "chat-slo-goal"]
    milestones = [t.id for t in en.values() if t.milestone]
    assert milestones == ["compare-batching", "hard-requests", "paged-attention-purpose"]
    assert [t.evidence for t in en.values()] == ["batching", "effects", "paging", "goal"]
    compare = en["compare-batching"]
    assert [f.id for f in compare.fields if f.kind == "number"] == [
        f"{row}_{col}" for row in ("throughput", "waiting") for col in ("fixed", "continuous")]
    assert all(f.answer for f in compare.fields if f.kind == "choice" and not f.options_from)
    assert {f"{k}_{i}" for k in ("change", "metric", "who", "why") for i in (1, 2, 3)} <= \
        {f.id for f in en["hard-requests"].fields}
    assert task_field(en["paged-attention-purpose"], "answer").reject_if_only
    for t in en.values():
        assert t.explanations() and all(f.rubric and f.criteria for f in t.explanations()), t.id
        assert set(t.model_answers) == {f.id for f in t.explanations()}, t.id


def test_tasks_zh_en_parity():
    zh, en = by_id(TASKS["zh"]), by_id(TASKS["en"])
    assert list(zh) == list(en)
    for tid, t in en.items():
        z = zh[tid]
        assert (z.milestone, z.link) == (t.milestone, t.link)
        assert (z.evidence, [(f.id, f.kind) for f in z.fields]) == (t.evidence, [(f.id, f.kind) for f in t.fields])
        for f in t.fields:
            assert ([v for v, _ in task_field(z, f.id).options], task_field(z, f.id).answer,
                    task_field(z, f.id).options_from, len(task_field(z, f.id).rubric)) == \
                ([v for v, _ in f.options], f.answer, f.options_from, len(f.rubric)), (tid, f.id)
            g = task_field(z, f.id)
            assert [c.id for c in g.criteria] == [c.id for c in f.criteria]
            # students mix languages: both files carry the same bilingual keywords
            assert [c.any for c in g.criteria] == [c.any for c in f.criteria], (tid, f.id)
            assert g.reject_if_only == f.reject_if_only
        assert set(z.model_answers) == set(t.model_answers) and set(z.bad_answers) == set(t.bad_answers)


@pytest.mark.parametrize("lang", LANGS)
def test_model_answers_pass_in_either_language(lang):
    for task in TASKS[lang]:
        for source in TASKS.values():  # an English answer checked against the zh task, and vice versa
            for fid, answers in by_id(source)[task.id].model_answers.items():
                for answer in answers:
                    fb = check_field(task_field(task, fid), answer, lang)
                    assert fb.passed, (task.id, fid, answer, fb.messages)
        best = {fid: answers[0] for fid, answers in task.model_answers.items()}
        result = check_task(task, best)
        assert result.passed and not result.missing


@pytest.mark.parametrize("lang", LANGS)
def test_bad_empty_and_off_topic_answers_fail(lang):
    empty_word = {"en": "empty", "zh": "空"}[lang]
    for task in TASKS[lang]:
        for source in TASKS.values():
            for fid, answers in by_id(source)[task.id].bad_answers.items():
                for answer in answers:
                    assert not check_field(task_field(task, fid), answer, lang).passed, (task.id, fid, answer)
        for fid in (f.id for f in task.explanations()):
            for answer in OFF_TOPIC:
                assert not check_field(task_field(task, fid), answer, lang).passed, (task.id, fid, answer)
        result = check_task(task, {})
        assert not result.passed and set(result.missing) == {f.id for f in task.explanations()}
        assert all(fb.empty and empty_word in fb.messages[0] for fb in result.fields.values() if fb.checked)


@pytest.mark.parametrize("lang", LANGS)
def test_feedback_per_criterion(lang):
    tasks = by_id(TASKS[lang])
    goal = task_field(tasks["chat-slo-goal"], "why")
    fb = check_field(goal, "chat users feel the first token (TTFT) before anything else", lang)
    met = {c.id: c.met for c in fb.criteria}
    assert met == {"ttft": True, "throughput": False, "fairness": False}
    assert [c.feedback for c in fb.criteria] == [c.ok if met[c.id] else c.missing for c in goal.criteria]

    paged = task_field(tasks["paged-attention-purpose"], "answer")
    for speed_only in ("It makes attention much faster.", "让注意力计算更快，加速推理"):
        fb = check_field(paged, speed_only, lang)
        assert fb.rejected and not fb.passed and fb.messages[0] == paged.reject_feedback
    fb = check_field(paged, "Not faster: KV cache memory in blocks allocated on demand, so less waste.", lang)
    assert fb.passed and not fb.rejected



def test_keyword_matching_is_forgiving():
    assert lessons.matches("Ｂlock-Table and 首token", ["block_table", "首 token"]) == ["block_table", "首 token"]
    assert lessons.matches("preemption happens", ["preempt*"]) == ["preempt*"]
    assert lessons.matches("preemption happens", ["preempt"]) == []  # ASCII keywords are whole words...
    # ...with endings
    assert lessons.matches("it was preempted while waiting", ["preempt", "wait"]) == ["preempt", "wait"]
    assert lessons.matches("I understand it", ["under"]) == []
    assert lessons.matches("slow and allowed", ["slo", "low"]) == []
    assert lessons.matches("SLOs were missed", ["slo"]) == ["slo"]
    assert lessons.matches("不低，也没有空槽", ["低", "空槽"]) == []  # denied keywords do not count
    assert lessons.matches("不只是更快", ["更快"]) == ["更快"]  # "not just faster" is not a denial


# --- quiz --------------------------------------------------------------------------------
def test_quiz_coverage():
    qs = QUIZ["en"]
    kinds = [q.type for q in qs]
    assert len(qs) >= 22 and kinds.count("numeric") >= 4 and kinds.count("ordering") >= 3
    assert kinds.count("multiple") >= 5
    assert {q.topic for q in qs} == set(TOPICS)
    assert sum(q.self_check for q in qs) == 5  # the chapter's five self-checks...
    assert all(q.type == "two_tier" for q in qs if q.self_check)  # ...each an answer, then its reason
    assert {q.misconception for q in qs} - {None} == {"a", "b", "c"}
    assert len({q.answer for q in qs if q.type == "single"}) > 1  # the right option is not always first
    numeric = [q for q in qs if q.type == "numeric"]
    assert all(q.predict or q.compare for q in numeric)  # none only copies one figure off a run
    assert sum(q.predict for q in numeric) >= 2 and sum(q.compare == "ratio" and not q.predict for q in numeric) >= 2
    assert any(q.compare == "max_class" for q in numeric)  # which class waited longest


@pytest.mark.parametrize("lang", LANGS)
def test_multiple_select_varies_how_many_are_right(lang):
    """1 to n-1 right per question, not always the same count, never all but two; mostly five options."""
    multiple = [q for q in QUIZ[lang] if q.type == "multiple"]
    counts = [len(q.answer) for q in multiple]
    assert all(1 <= k <= len(q.options) - 1 for k, q in zip(counts, multiple))
    assert len(set(counts)) >= 3 and {1, len(multiple[0].options) - 1} & set(counts)
    assert len({len(q.options) - k for k, q in zip(counts, multiple)}) >= 3  # not always two wrong options
    assert sum(len(q.options) == 5 for q in multiple) > len(multiple) / 2


@pytest.mark.parametrize("lang", LANGS)
def test_the_quiz_cannot_be_passed_by_the_options_form(lang):
    """The right option is the longest in at most 30 % of single-choice questions, neither always taking the longest
    nor always the shortest scores over 40 %, right answers sit in all four positions, and the longer half of the
    options holds the right one no more often than chance."""
    f = cue_figures(QUIZ[lang], lang)
    assert f["single"] >= 14 and f["multiple"] >= 5
    assert f["longest_is_right"] <= 0.30, f
    assert f["longest_strategy"] <= 0.40 and f["shortest_strategy"] <= 0.40, f  # no reverse cue either
    assert f["top_position_share"] <= 0.40 and len(f["positions"]) == 4, f  # right answers sit everywhere
    assert f["longest_half"] <= f["chance"], f


def test_options_are_shuffled_with_the_attempts_seed():
    q = next(q for q in QUIZ["en"] if q.type == "single")
    assert option_order(q, 3) == option_order(q, 3) and sorted(option_order(q, 3)) == list(range(len(q.options)))
    assert {option_order(q, seed).index(q.answer) for seed in range(40)} == set(range(len(q.options)))


def test_a_wrong_first_try_gets_a_second_and_the_score_keeps_them_apart():
    single = [q for q in QUIZ["en"] if q.type == "single"][:3]
    a = Attempt(seed=1)
    assert a.submit(single[0], single[0].answer) == "correct"
    wrong = (single[1].answer + 1) % len(single[1].options)
    assert a.submit(single[1], wrong) == "retry" and a.awaiting_retry(single[1].id) and not a.done(single[1].id)
    assert a.submit(single[1], single[1].answer) == "correct" and a.done(single[1].id)
    assert a.submit(single[2], wrong % len(single[2].options) if wrong != single[2].answer else
                    (single[2].answer + 1) % len(single[2].options)) == "retry"
    assert a.submit(single[2], (single[2].answer + 1) % len(single[2].options)) == "wrong" and a.done(single[2].id)
    assert a.submit(single[2], single[2].answer) == "wrong"  # no third try
    assert a.score() == {"first": 1, "second": 1, "answered": 3}
    numeric = next(q for q in QUIZ["en"] if q.type == "numeric")
    assert a.submit(numeric, "12") == "unmeasured" and numeric.id not in a.tries  # no run, no try used


def test_multiple_select_is_scored_per_option_and_exactly_apart():
    q = next(q for q in QUIZ["en"] if q.id == "batch-curve-reading")  # [0, 1, 3] of five
    full, one_off, none_right = grade(q, [3, 1, 0]), grade(q, [0, 1]), grade(q, [2, 4])
    assert full.correct and full.credit == 1.0
    assert not one_off.correct and one_off.credit == pytest.approx(0.8)  # four of five options as they should be
    assert not none_right.correct and none_right.credit == 0.0
    assert grade(q, [0, 1, 3, 2]).credit == pytest.approx(0.8) and not grade(q, [0, 1, 3, 2]).correct
    a = Attempt(seed=0)
    assert a.submit(q, [0, 1]) == "retry" and a.submit(q, [0, 1, 3]) == "correct"
    assert a.score() == {"first": 0, "second": 1, "answered": 1}  # per-option credit is no part of the score


@pytest.mark.parametrize("lang", LANGS)
def test_a_two_tier_question_is_right_only_when_both_tiers_are(lang):
    q = next(q for q in QUIZ[lang] if q.type == "two_tier")
    other_a, other_r = (q.answer + 1) % len(q.options), (q.reason + 1) % len(q.reasons)
    assert grade(q, {"answer": q.answer, "reason": q.reason}).correct
    assert grade(q, {"answer": q.answer, "reason": q.reason}).tiers == (True, True)
    assert grade(q, {"answer": q.answer, "reason": other_r}).tiers == (True, False)
    assert not grade(q, {"answer": q.answer, "reason": other_r}).correct
    assert not grade(q, {"answer": other_a, "reason": q.reason}).correct
    assert sorted(reason_order(q, 3)) == list(range(len(q.reasons))) and reason_order(q, 3) == reason_order(q, 3)
    a = Attempt()
    # an unticked reason is not graded and uses no try; the message is in the question's language
    assert a.submit(q, {"answer": q.answer, "reason": None}) == "incomplete" and q.id not in a.tries
    said = lessons.incomplete(q, {"answer": q.answer, "reason": None})
    assert said and (re.search(r"[\u4e00-\u9fff]", said) if lang == "zh" else "reason" in said)
    assert lessons.incomplete(q, {"answer": None, "reason": None}) != said
    assert a.submit(q, {"answer": q.answer, "reason": q.reason}) == "correct"


@pytest.mark.parametrize("lang", LANGS)
def test_answers_that_cannot_be_graded_yet_are_refused_with_a_message(lang):
    qs = {q.type: q for q in QUIZ[lang] if not q.predict}
    predict = next(q for q in QUIZ[lang] if q.predict and q.compare != "max_class")
    which = next(q for q in QUIZ[lang] if q.compare == "max_class")
    for q, bad in ((qs["single"], None), (qs["multiple"], []), (qs["two_tier"], {}), (qs["ordering"], ["x"]),
                   (qs["numeric"], "many"), (predict, "about ten"), (which, "nobody"), (qs["two_tier"], "garbage")):
        said = lessons.incomplete(q, bad)
        assert said, (q.id, bad)
        assert bool(re.search(r"[\u4e00-\u9fff]", said)) == (lang == "zh"), said
        assert Attempt().submit(q, bad, 1.0) == "incomplete"
    assert lessons.incomplete(predict, "1.5") is None and lessons.incomplete(which, which.classes[0][0]) is None


def test_a_prediction_has_one_try_and_shows_what_was_measured():
    q = next(q for q in QUIZ["en"] if q.id == "fcfs-support-slo-predict")
    a = Attempt()
    assert a.submit(q, "50", 0.0) == "wrong" and a.done(q.id)  # no second try: the run showed the answer
    g = a.results[q.id]
    assert "You predicted 50 %" in g.message and "measured 0.0 %" in g.message and g.expected == 0.0
    assert Attempt().submit(q, "5", 0.0) == "correct"  # within the stated 10 points


def test_ratio_and_longest_wait_are_graded_against_the_runs():
    ratio = next(q for q in QUIZ["en"] if q.id == "fixed-slot-ratio")
    run, versus = {"slot_utilisation": 0.874}, {"slot_utilisation": 0.379}
    measured = lessons.measure(ratio, run, versus)
    assert measured[0] == pytest.approx(0.874 / 0.379) and lessons.measured_value(measured) == measured[0]
    assert grade(ratio, "2.3", measured).correct and not grade(ratio, "0.43", measured).correct
    assert "a ratio of 2.31× (87.4 % ÷ 37.9 %)" in grade(ratio, "2.3", measured).message  # as people write them
    assert lessons.measure(ratio, run, {"slot_utilisation": 0}) is None and lessons.measure(ratio, None) is None
    which = next(q for q in QUIZ["en"] if q.compare == "max_class")
    summary = {"by_class": {"batch": {"ttft_steps": {"p50": 159.5}}, "support": {"ttft_steps": {"p50": 502.0}}}}
    figures = lessons.measure(which, summary)
    assert figures == {"batch": 159.5, "support": 502.0} and lessons.measured_value(figures) == "support"
    assert grade(which, "support", figures).correct and not grade(which, "batch", figures).correct
    assert grade(which, "batch", figures).expected == "support" and "support questions" in grade(which, "batch",
                                                                                                     figures).message


def test_quiz_zh_en_parity():
    zh, en = by_id(QUIZ["zh"]), by_id(QUIZ["en"])
    assert list(zh) == list(en)
    for qid, q in en.items():
        z = zh[qid]
        for key in ("type", "topic", "answer", "reason", "run", "metric", "tolerance", "self_check", "misconception",
                    "link", "predict", "compare"):
            assert getattr(z, key) == getattr(q, key), (qid, key)
        assert bool(z.hint) == bool(q.hint), qid
        assert [c for c, _ in z.classes] == [c for c, _ in q.classes], qid
        assert (len(z.options), len(z.items), len(z.reasons)) == (len(q.options), len(q.items), len(q.reasons))


@pytest.mark.parametrize("lang", LANGS)
def test_every_question_has_a_right_answer_and_explanation(lang):
    ends = r"[.!?](?=\s|$)" if lang == "en" else r"[。！？]"
    for q in QUIZ[lang]:
        assert 2 <= len(re.findall(ends, q.explanation)) <= 4, q.id
        if q.type == "single":
            assert 0 <= q.answer < len(q.options)
            assert grade(q, q.answer).correct and not grade(q, (q.answer + 1) % len(q.options)).correct
            assert grade(q, q.answer).explanation == q.explanation
        elif q.type == "multiple":
            assert all(0 <= i < len(q.options) for i in q.answer)
            assert grade(q, list(reversed(q.answer))).correct and not grade(q, list(q.answer)[:-1]).correct
        elif q.type == "two_tier":
            assert grade(q, {"answer": q.answer, "reason": q.reason}).correct
            assert not grade(q, {"answer": q.answer, "reason": (q.reason + 1) % len(q.reasons)}).correct
        elif q.type == "ordering":
            assert grade(q, list(q.items)).correct and not grade(q, shuffled_items(q, 0)).correct
        assert not grade(q, None).correct


def test_quiz_order_and_shuffles_are_seeded():
    qs = QUIZ["en"]
    first, again, other = quiz_order(qs, 7), quiz_order(qs, 7), quiz_order(qs, 8)
    assert [q.id for q in first] == [q.id for q in again] != [q.id for q in other]
    assert sorted(q.id for q in first) == sorted(q.id for q in qs) and qs == QUIZ["en"]
    q = next(q for q in qs if q.type == "ordering")
    assert shuffled_items(q, 3) == shuffled_items(q, 3) and sorted(shuffled_items(q, 3)) == sorted(q.items)


def test_metric_value_and_numbers():
    summary = {"steps": 12, "by_class": {"chat": {"ttft_steps": {"p95": 3.5}, "slo_attainment": None}}, "ok": True}
    assert metric_value(summary, "steps") == 12.0
    assert metric_value(summary, "by_class.chat.ttft_steps.p95") == 3.5
    for path in ("by_class.chat.slo_attainment", "by_class.report.ttft_steps.p95", "by_class", "ok", "steps.x"):
        assert metric_value(summary, path) is None
    assert lessons.parse_number("38%") == pytest.approx(0.38) and lessons.parse_number("1,169") == 1169
    assert lessons.parse_number("38%", percent=True) == 38 and lessons.parse_number(" ３８ ") == 38
    assert lessons.parse_number("many") is None


@pytest.fixture(scope="module")
def live_runs():
    """Each numeric question's run (and the runs the content's claims rest on), once, on the tiny model."""
    from engine.lab.experiment import run_requests, workload_requests
    from engine.lab.workload import engine_config_for
    from engine.models.loader import load_model
    from engine.lab.workload import preset

    model, cache = load_model("tiny"), {}

    def run(moment_id, **settings):
        p = MOMENTS[moment_id]
        settings = {**p.settings, **settings}
        key = (p.workload, tuple(sorted(settings.items())))
        if key not in cache:
            workload = preset(p.workload).scaled(0.5)
            cache[key] = run_requests(model, workload_requests(model, workload, p.seed),
                                      engine_config_for(workload, **settings)).summary
        return cache[key]
    return run


@pytest.mark.slow
def test_numeric_questions_grade_against_a_real_run(live_runs):
    """Each numeric question against real runs: its own run's figure, the ratio of its two runs, or the class that
    waited longest; right within the stated tolerance, wrong outside it, ungraded without the runs."""
    for lang in LANGS:
        for q in (q for q in QUIZ[lang] if q.type == "numeric"):
            spec = run_spec(q)
            assert spec["workload"] == MOMENTS[q.run["moment"]].workload
            run = live_runs(q.run["moment"], **q.run["settings"])
            versus = live_runs(q.run["moment"], **q.run["versus"]) if q.run["versus"] else None
            measured = lessons.measure(q, run, versus)
            assert measured is not None, q.id
            unmeasured = grade(q, "1", None)
            assert not unmeasured.correct and unmeasured.message and unmeasured.expected is None
            if q.compare == "max_class":
                top = lessons.measured_value(measured)
                assert set(measured) == set(run["by_class"]) and top in dict(q.classes), q.id
                assert grade(q, top, measured).correct
                assert not grade(q, next(c for c, _ in q.classes if c != top), measured).correct
                continue
            value = lessons.measured_value(measured)
            assert math.isfinite(value), q.id
            if q.compare == "ratio":
                assert value == pytest.approx(metric_value(run, q.metric) / metric_value(versus, q.metric))
            shown = shown_value(q, value)  # what the page displays and the student types
            assert grade(q, shown, measured).correct and grade(q, f"{shown:.6f}", measured).correct
            if q.unit == "%":
                assert 0 <= value <= 1 and grade(q, f"{shown:.2f}%", measured).correct
            off = shown * (1 + 3 * q.tolerance.get("rel", 0)) + 3 * q.tolerance.get("abs", 0) + 1e-6
            result = grade(q, off, measured)
            assert not result.correct and result.expected == shown and result.message


@pytest.mark.slow
def test_claims_the_content_makes_hold(live_runs):
    """What lessons and explanations say about the moments' runs (at half scale)."""
    uniform = [live_runs("uniform-control", batcher=b)["steps"] for b in ("static", "continuous")]
    assert uniform[0] == uniform[1]
    # the same lengths arriving over time: hole 2 alone, newcomers wait for the whole fixed batch
    online = [live_runs("online-uniform", batcher=b)["latency"]["ttft_steps"]["p50"] for b in ("static", "continuous")]
    assert online[0] > 2 * online[1], online
    holes = [live_runs("fixed-batch-holes", batcher=b)["slot_utilisation"] for b in ("static", "continuous")]
    assert holes[0] < holes[1]
    fcfs, edf = live_runs("support-bot-sla", policy="fcfs"), live_runs("support-bot-sla", policy="edf")
    assert fcfs["throughput_tok_per_step"] >= 0.95 * edf["throughput_tok_per_step"]  # "as high or a little higher"
    assert fcfs["by_class"]["support"]["slo_attainment"] < 0.2 < 0.8 < edf["by_class"]["support"]["slo_attainment"]
    paged, contiguous = live_runs("contiguous-vs-paged"), live_runs("contiguous-vs-paged", kv_layout="contiguous")
    static = live_runs("chat-and-reports", batcher="static")
    chat_ttft = [r["by_class"]["chat"]["ttft_steps"]["p50"] for r in (paged, contiguous, static)]
    assert chat_ttft == sorted(chat_ttft) and len(set(chat_ttft)) == 3  # the cache-ceiling-order question
    assert paged["kv_waste_share"] < 0.1 < contiguous["kv_waste_share"]
    assert paged["max_concurrent"] > contiguous["max_concurrent"]
    # the numeric questions' explanations
    assert paged["throughput_tok_per_step"] > 1.2 * contiguous["throughput_tok_per_step"]  # more running at once
    assert holes[1] > 1.5 * holes[0]  # continuous ÷ static slot use
    continuous = live_runs("chat-and-reports", batcher="continuous")
    assert static["by_class"]["chat"]["ttft_steps"]["p50"] > 50 * continuous["by_class"]["chat"]["ttft_steps"]["p50"]
    which = next(q for q in QUIZ["en"] if q.id == "fcfs-longest-wait")
    assert lessons.measured_value(lessons.measure(which, fcfs)) == "support"  # the batch job arrived first
    assert 0.8 < edf["throughput_tok_per_step"] / fcfs["throughput_tok_per_step"] <= 1.0  # near FCFS, a little lower


# --- export / import ---------------------------------------------------------------------
TRICKY = {
    "compare-batching": {"why_online": "line one\nline two\n\n# not a heading\n---\n## fake (`x`)\n",
                         "throughput_fixed": "", "waiting_fixed": "  leading and trailing  ",
                         "scenarios_fixed": "```python\nprint('fenced')\n```\n````"},
    "hard-requests": {"feature_1": "超长的提示（long context）", "why_1": "显存被占满 -> 抢占\r\n下一行",
                      "feature_2": "\n", "why_2": "*bold* _it_ | table | `code` <b>html</b> $x$"},
    "chat-slo-goal": {"goal": "### (`goal`)\n~~~\n\n"},
    "unknown-task": {"free": "kept too"},
}


@pytest.mark.parametrize("lang", LANGS)
def test_markdown_export_round_trips(lang):
    text = answers_to_markdown(TRICKY, lang)
    assert answers_from_markdown(text) == TRICKY
    title = by_id(TASKS[lang])["compare-batching"].title
    assert f"## {title} (`compare-batching`)" in text  # readable: titles and labels as headings
    assert answers_from_markdown(answers_to_markdown({}, lang)) == {}
    assert answers_from_markdown(text.replace("\n", "\r\n")) == answers_from_markdown(text)


def test_markdown_export_round_trips_any_text():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    pieces = st.sampled_from(list("ab #-`~|*_\n\r\t中文（）：") + ["```", "\n---\n", "\n## t (`x`)\n", "\n```\n"])
    text = st.lists(pieces, max_size=30).map("".join)
    ids = st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True)

    @hypothesis.settings(max_examples=80, deadline=None, database=None)
    @hypothesis.given(st.dictionaries(ids, st.dictionaries(ids, text, max_size=4), max_size=3), st.sampled_from(LANGS))
    def round_trip(answers, lang):
        assert answers_from_markdown(answers_to_markdown(answers, lang)) == answers

    round_trip()


# --- content errors ----------------------------------------------------------------------
def test_broken_content_names_file_and_entry(tmp_path, monkeypatch):
    root = tmp_path / "lessons"
    shutil.copytree(lessons.loader.ROOT, root, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    monkeypatch.setattr(lessons.loader, "ROOT", root)
    quiz = root / "en" / "quiz.yaml"
    quiz.write_text(quiz.read_text(encoding="utf-8").replace("  answer: [0, 1, 3]", "  answer: [0, 1, 9]", 1),
                    encoding="utf-8")
    with pytest.raises(ValueError, match=r"quiz\.yaml: question #2 \(batch-curve-reading\)"):
        load_quiz("en")
    lesson = root / "zh" / "02-why-batching.md"
    lesson.write_text(lesson.read_text(encoding="utf-8").replace("[batch-curve]", "[no-such-preset]"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"02-why-batching\.md: lesson 'why-batching'.*experiments"):
        load_lessons("zh")
    tasks = root / "en" / "tasks.yaml"
    tasks.write_text(tasks.read_text(encoding="utf-8").replace("moment: fixed-batch-holes}", "moment: batch-curve}"),
                     encoding="utf-8")
    with pytest.raises(ValueError, match=r"tasks\.yaml: task #1 \(compare-batching\).*batch-curve"):
        load_tasks("en")
    with pytest.raises(ValueError, match="language"):
        load_quiz("fr")


def test_every_string_of_the_lessons_layer_is_in_both_languages_with_the_same_fields():
    for key, by_lang in strings().items():
        assert set(by_lang) == {"zh", "en"}, key
        assert set(re.findall(r"{(\w+)}", by_lang["zh"])) == set(re.findall(r"{(\w+)}", by_lang["en"])), key


@pytest.mark.parametrize("lang", LANGS)
def test_a_features_model_answer_follows_the_change_the_student_chose(lang):
    from lessons.evidence.runs import CHANGES
    task = by_id(TASKS[lang])["hard-requests"]
    assert set(task.answers_by_change) == set(CHANGES)
    chose = {"change_1": "longer-outputs", "change_2": "tighter-memory", "change_3": "no-such-change"}
    assert task.model_answers_for("why_1", chose) == task.answers_by_change["longer-outputs"]
    assert task.model_answers_for("why_2", chose) == task.answers_by_change["tighter-memory"]
    assert task.model_answers_for("why_3", chose) == task.model_answers["why_3"]  # no known change: the default
    for change, answers in task.answers_by_change.items():
        for answer in answers:
            assert check_field(task_field(task, "why_1"), answer, lang).passed, (change, answer)
