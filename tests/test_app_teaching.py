"""The teaching pages under streamlit.testing: lessons, worksheets (feedback, export/import), the quiz."""
import json
from pathlib import Path

import pytest
import yaml
from run_store import spec_summary
from streamlit.testing.v1 import AppTest

from engine import load_model
from lessons import load_lessons, load_quiz, load_tasks, measure, measured_value, run_spec, shown_value
from lessons.answers_markdown import answers_to_markdown
from lessons.evidence import METRICS, RunSpec, goal_specs
from lessons.evidence.runs import worksheet_seed
from ui.progress.keys import TOKEN
from ui.shell.i18n import STRINGS_FILE

ROOT = Path(__file__).resolve().parent.parent


def page(path: str, lang: str = "en") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["lang"] = lang
    at.run()
    at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def lesson_script(lesson_id: str):
    from ui.views.lesson import render
    render(lesson_id)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_lesson_renders_with_its_experiments(lang):
    for lesson in load_lessons(lang):
        at = AppTest.from_function(lesson_script, args=(lesson.id,), default_timeout=60)
        at.session_state["lang"] = lang
        at.run()
        assert not at.exception, (lesson.id, [e.value for e in at.exception])
        assert at.title[0].value == lesson.title
        titles = yaml.load(STRINGS_FILE.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        assert {f"🎓 {titles[f'moment.name.{p}'][lang]}" for p in lesson.experiments} <= {b.label for b in at.button}


@pytest.mark.slow
def test_mechanism_table_gets_measured_figures():
    at = AppTest.from_function(lesson_script, args=("mechanisms-myths",), default_timeout=120)
    at.session_state["lang"] = "en"
    at.run()
    next(b for b in at.button if b.key == "mech.measure").click().run()
    assert not at.exception
    cells = [str(v) for table in at.table for v in table.value.to_numpy().ravel()]
    assert any("tokens/step" in c for c in cells) and any("KV waste" in c for c in cells)


def fill(at: AppTest, task_id: str, field_id: str, text: str) -> None:
    key = f"task.{task_id}.{field_id}"
    widget = next(w for w in [*at.text_input, *at.text_area] if w.key == key)
    widget.input(text)


def make_run(at: AppTest, task_id: str, workload: str, variant: str) -> None:
    at.selectbox(key=f"ev.{task_id}.workload").set_value(workload).run()
    at.button_group(key=f"ev.{task_id}.variant").set_value(variant).run()
    at.button(key=f"ev.{task_id}.run").click().run()
    assert not at.exception, [e.value for e in at.exception]


def test_a_worksheet_task_is_complete_only_with_checked_evidence_and_a_self_assessed_explanation():
    """paged-attention-purpose as a student does it: two runs at the same memory, their figures copied from the
    page's table into the columns, an explanation that uses the right words to say the wrong thing."""
    task = next(t for t in load_tasks("en") if t.id == "paged-attention-purpose")
    at = page("pages/tasks.py")
    for layout in ("contiguous", "paged"):
        make_run(at, task.id, "chat-and-reports", layout)
    table = next(d.value for d in at.dataframe if "KV waste (%)" in d.value.columns)
    keys = [RunSpec.from_dict(d).key for d in json.loads(at.session_state["answers"][task.id]["runs"])]
    assert len(table) == len(keys) == 2
    for i, layout in enumerate(("contiguous", "paged")):
        run = table.iloc[i]
        picker = at.selectbox(key=f"task.{task.id}.{layout}_run")
        assert picker.options[i] == run.iloc[0] and layout in run.iloc[0]
        picker.set_value(keys[i]).run()
        for row, column in (("running", "running at once (most)"), ("kv_waste", "KV waste (%)"),
                            ("refusals", "refusals by fragmentation (steps)")):
            fill(at, task.id, f"{row}_{layout}", str(run[column]))
    at.run()
    fill(at, task.id, "answer", "Cache organisation and memory management are not what it is about; paged "
                                "attention mostly makes the attention computation itself faster.")
    at.button(key=f"tasks.check.{task.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(m.value for m in [*at.markdown, *at.success, *at.caption, *at.error])
    assert "The evidence checks out" in shown and "Hints (from a keyword reader, not a verdict" in shown
    assert "Milestones: 0 / 3" in at.get("progress")[0].proto.text  # the words decide nothing either way

    at.radio(key=f"tasks.sa.{task.id}.answer").set_value("met").run()  # the student judges it against the rubric
    assert "Milestones: 1 / 3" in at.get("progress")[0].proto.text

    fill(at, task.id, "kv_waste_paged", "0.0")  # a figure the run did not measure
    at.button(key=f"tasks.check.{task.id}").click().run()
    shown = " ".join(m.value for m in [*at.markdown, *at.error])
    assert "“KV waste, paged”: 0.0 does not match what #2 measured." in shown  # never the value itself
    assert "Milestones: 0 / 3" in at.get("progress")[0].proto.text


def test_worksheet_export_import_round_trip():
    tasks = load_tasks("en")
    at = page("pages/tasks.py")
    written = {}
    for task in tasks:
        for f in [f for f in task.fields if f.kind in ("text", "long", "number")][:2]:
            text = f"{task.id}/{f.id}: line one\n# not a heading\n```fenced```"
            fill(at, task.id, f.id, text)
            written.setdefault(task.id, {})[f.id] = text
    at.run()
    exported = answers_to_markdown(at.session_state["answers"], "en")  # what the export button serves

    fresh = page("pages/tasks.py")
    fresh.text_area(key="tasks.paste").input(exported).run()
    next(b for b in fresh.button if b.key == "tasks.paste_import").click().run()
    assert not fresh.exception
    for task_id, fields in written.items():
        for field_id, text in fields.items():
            widget = next(w for w in [*fresh.text_input, *fresh.text_area] if w.key == f"task.{task_id}.{field_id}")
            assert widget.value == text


def correct_answer(at: AppTest, q, measured=None):
    """The right answer; a numeric one from what the quiz's runs measured (or `measured`, for a prediction)."""
    if q.type == "single":
        return q.answer
    if q.type == "multiple":
        return list(q.answer)
    if q.type == "two_tier":
        return {"answer": q.answer, "reason": q.reason}
    if q.type == "ordering":
        return list(q.items)
    value = measured_value(measured if measured is not None else at.session_state["quiz.measured"][q.id])
    return value if q.compare == "max_class" else f"{shown_value(q, value):.6g}"


def answer(at: AppTest, q, value, key: str | None = None) -> None:
    key = key or f"quiz.q.{q.id}"
    if q.type == "single" or q.compare == "max_class":
        at.radio(key=key).set_value(value)
    elif q.type == "multiple":
        for i in range(len(q.options)):
            at.checkbox(key=f"{key}.{i}").check() if i in value else at.checkbox(key=f"{key}.{i}").uncheck()
    elif q.type == "two_tier":
        at.radio(key=f"{key}.a").set_value(value["answer"])
        at.radio(key=f"{key}.r").set_value(value["reason"])
    elif q.type == "ordering":
        at.multiselect(key=key).set_value(value)
    else:
        at.text_input(key=key).input(value)


def engine_measured(q, token: str):
    """What the quiz's Run button will measure for q, from the same runs made outside the app (the default model,
    the student's variant of the moment's workload): what a prediction is graded against."""
    from engine.lab.experiment import run_requests, workload_requests
    from engine.lab.workload import engine_config_for
    from engine.models.loader import DEFAULT_MODEL, load_model
    from lessons import workload_of
    from lessons.quiz_variants import variant

    spec, model = run_spec(q, variant=variant(q.id, token)), load_model(DEFAULT_MODEL)
    workload = workload_of(spec)

    def run(settings):
        return run_requests(model, workload_requests(model, workload, spec["seed"]),
                            engine_config_for(workload, **settings)).summary
    return measure(q, run(spec["settings"]), run(spec["versus_settings"]) if spec["versus_settings"] else None)


@pytest.mark.slow
def test_a_full_quiz_attempt():
    """Every question answered right, except the first single-choice one: wrong, then the hint and a
    second try, then right. The score keeps the two tries apart."""
    questions = {q.id: q for q in load_quiz("en")}
    at = page("pages/quiz.py")
    order = at.session_state["quiz.order"]
    assert sorted(order) == sorted(questions)
    wrong_once = next(qid for qid in order if questions[qid].type == "single")
    for i, qid in enumerate(order):
        q = questions[qid]
        if q.predict:  # committed before the run, which is disabled until then
            run = next(b for b in at.button if b.key == f"quiz.q.{qid}.run")
            assert run.disabled
            answer(at, q, correct_answer(at, q, engine_measured(q, at.session_state["progress.token"])))
            next(b for b in at.button if b.key == f"quiz.q.{qid}.commit").click().run()
            assert at.session_state["quiz.predicted"].get(qid) is not None
        if q.type == "numeric":
            next(b for b in at.button if b.key == f"quiz.q.{qid}.run").click().run()
            assert qid in at.session_state["quiz.measured"], f"{qid}: the run did not finish"
        value = correct_answer(at, q)
        if qid == wrong_once:
            answer(at, q, (q.answer + 1) % len(q.options))
            next(b for b in at.button if b.key == f"quiz.q.{qid}.submit").click().run()
            assert any(w.value.startswith("Not yet") for w in at.warning)
            assert any("💡" in e.value or e.icon == "💡" for e in at.info), [e.value for e in at.info]
            assert not any(e.value == q.explanation for e in at.info)  # no answer before the second try
            answer(at, q, value, key=f"quiz.q.{qid}.2")
        elif not q.predict:
            answer(at, q, value)
        next(b for b in at.button if b.key == f"quiz.q.{qid}.submit").click().run()
        assert not at.exception, [e.value for e in at.exception]
        right = "Correct at the second try." if qid == wrong_once else "Correct."
        assert any(e.value == right for e in at.success), (qid, [c.value for c in at.caption])
        assert any(e.value == q.explanation for e in at.info)
        if q.predict:  # the measured value shows after, beside the prediction
            assert any(c.value.startswith("You predicted") and "measured" in c.value for c in at.caption), qid
        if i + 1 < len(order):
            next(b for b in at.button if b.key == "quiz.next").click().run()
    attempt = at.session_state["quiz.attempt"]
    assert attempt.score() == {"first": len(order) - 1, "second": 1, "answered": len(order)}
    assert any(f"Right at the first try: {len(order) - 1} / {len(order)}; at the second: 1" in h.value
               for h in at.subheader)

    at.session_state["quiz.seed"] = 7
    next(b for b in at.button if b.key == "quiz.restart").click().run()
    assert at.session_state["quiz.attempt"].results == {} and at.session_state["quiz.order"] != order


@pytest.mark.slow
def test_the_goal_is_checked_against_runs_of_the_chosen_policy_and_kept_in_the_answers():
    task = next(t for t in load_tasks("en") if t.id == "chat-slo-goal")
    at = page("pages/tasks.py")
    for field_id, value in (("ttft_max", "10"), ("throughput_min", "95"), ("fairness_bound", "2")):
        fill(at, task.id, field_id, value)
    for field_id, value in (("throughput_mode", "pct_of_fcfs"), ("fairness_mode", "report_slowdown"),
                            ("policy", "priority")):
        at.selectbox(key=f"task.{task.id}.{field_id}").set_value(value).run()
    at.button(key=f"tasks.check.{task.id}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(m.value for m in [*at.markdown, *at.success, *at.error])
    seed = worksheet_seed(at.session_state[TOKEN], task.id)  # the goal runs on the student's own requests
    priority = spec_summary(load_model("tiny"), "tiny", goal_specs(("priority",), seed)["priority"])
    ttft = METRICS["ttft_p95"].value(priority, "chat")
    assert f"Chat TTFT p95 = {round(ttft, 2)} steps (priority): {'met' if ttft <= 10 else 'not met'}." in shown
    assert "This is your goal attempt 1." in " ".join(c.value for c in at.caption)
    assert at.session_state["answers"][task.id]["policy"] == "priority"  # kept with the progress
    at.selectbox(key=f"task.{task.id}.policy").set_value("fcfs").run()
    at.button(key=f"tasks.check.{task.id}").click().run()
    shown = " ".join(m.value for m in [*at.markdown, *at.success, *at.error])
    fcfs = METRICS["ttft_p95"].value(spec_summary(load_model("tiny"), "tiny", goal_specs(("fcfs",), seed)["fcfs"]),
                                     "chat")
    assert f"Chat TTFT p95 = {round(fcfs, 2)} steps (FCFS): {'met' if fcfs <= 10 else 'not met'}." in shown
    if fcfs > 10:  # a part not met: the goal is not reached (on this student's requests FCFS may reach it)
        assert "The evidence does not check out yet" in shown
    assert "This is your goal attempt 1." in " ".join(c.value for c in at.caption)  # the policy is not the goal
    fill(at, task.id, "ttft_max", "4")
    at.button(key=f"tasks.check.{task.id}").click().run()
    assert "This is your goal attempt 2." in " ".join(c.value for c in at.caption)


def test_an_imported_answer_naming_a_run_never_made_is_refused_by_name():
    at = page("pages/tasks.py")
    make_run(at, "compare-batching", "uniform", "static")
    made = json.loads(at.session_state["answers"]["compare-batching"]["runs"])
    never = RunSpec("uniform", {"batcher": "continuous"}).key  # a run this student did not make
    exported = answers_to_markdown({"compare-batching": {"runs": json.dumps(made), "fixed_run": RunSpec.from_dict(
        made[0]).key, "continuous_run": never, "throughput_fixed": "8.00"}}, "en")
    at.text_area(key="tasks.paste").input(exported).run()
    at.button(key="tasks.paste_import").click().run()
    at.button(key="tasks.check.compare-batching").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(m.value for m in at.markdown)
    assert f"The run {never} is not one of your runs (you never made it)" in shown
    figure = METRICS["throughput"].value(spec_summary(load_model("tiny"), "tiny", RunSpec.from_dict(made[0])))
    assert ("“Throughput, fixed batch” = " if abs(figure - 8) <= METRICS["throughput"].tolerance(figure)
            else "“Throughput, fixed batch”: 8.00 does not match what #1 measured") in shown  # said either way


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_for_whom_says_to_pick_the_baseline_first_before_any_submit(lang):
    """Task 2's "for whom" lists the baseline workload's classes: before a baseline is picked it says so in its box,
    and once one is, it offers that workload's classes."""
    strings = yaml.safe_load(STRINGS_FILE.read_text(encoding="utf-8"))
    at = page("pages/tasks.py", lang)
    who = at.selectbox(key="task.hard-requests.who_1")
    assert who.proto.placeholder == strings["ev.pick_baseline_first"][lang]
    at.selectbox(key="task.hard-requests.workload").set_value("chat-and-reports").run()
    who = at.selectbox(key="task.hard-requests.who_1")
    assert who.proto.placeholder == strings["ev.choose"][lang] and len(who.options) == 3  # all, chat, report


def test_the_fields_still_empty_are_named_before_check():
    """Before Check, each task names the fields it still needs; a field filled leaves its task's list."""
    tasks = load_tasks("en")
    at = page("pages/tasks.py")
    lines = [c.value for c in at.caption if " still empty (the task needs every one): " in c.value]
    assert [int(line.split()[0]) for line in lines] == [len([f for f in t.fields if f.kind != "runs"]) for t in tasks]
    task = tasks[0]
    before = lines[0].split(": ", 1)[1].split("; ")
    assert len(set(before)) == len(before), f"two fields with one name: {before}"
    text = next(f for f in task.fields if f.kind in ("text", "long"))
    fill(at, task.id, text.id, "a line")
    at.run()
    line = next(c.value for c in at.caption if " still empty (the task needs every one): " in c.value)
    after = line.split(": ", 1)[1].split("; ")
    assert int(line.split()[0]) == len(before) - 1 and len(set(before) - set(after)) == 1
