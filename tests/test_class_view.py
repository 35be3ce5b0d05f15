"""The instructor's class view and the live polls under streamlit.testing: the passcode gate, the class's
aggregates with names hidden by default, and a poll from opening to the measured value on every screen."""
import json
import uuid
from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from classroom import get_store
from engine import EngineConfig
from engine.lab.experiment import LiveRun, workload_requests
from engine.lab.workload import preset
from lessons import load_moments, load_quiz, load_tasks, predictions
from ui.instructor import passcode, poll_job
from ui.playback.run_cache import RUNS, run_bytes
from ui.shell.i18n import strings
from viz.classroom import RIGHT, WRONG
from app_support import runs_ended

ROOT = Path(__file__).resolve().parent.parent
PASSCODE = "correct horse 7"
NAME = "Zelda Quorum"  # a name that appears nowhere else in the lab
STRINGS = strings()


@pytest.fixture(autouse=True)
def app_frame_every_run(monkeypatch):
    """Every run goes through app.py, as under `python -m ui.serve` (which turns the pages-folder mode off).
    AppTest turns that mode back on before each run, and a rerun would then run the page file alone: no
    sidebar, and no poll banner, which app.py draws."""
    init = PagesManager.__init__

    def without_pages_folder(self, *args, **kwargs):
        init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False
    monkeypatch.setattr(PagesManager, "__init__", without_pages_folder)


@pytest.fixture
def configured(monkeypatch, tmp_path):
    monkeypatch.setattr(passcode, "SECRETS", tmp_path / "secrets.toml")  # never the repository's own file
    monkeypatch.setenv(passcode.ENV, PASSCODE)


@pytest.fixture
def unconfigured(monkeypatch, tmp_path):
    monkeypatch.setattr(passcode, "SECRETS", tmp_path / "secrets.toml")
    monkeypatch.delenv(passcode.ENV, raising=False)


@pytest.fixture
def klass():
    """A class of two students with quiz answers, a graded worksheet, predictions and an open poll."""
    code, db = f"c-{uuid.uuid4().hex[:8]}", get_store()
    q = next(q for q in load_quiz("en") if q.type == "single")
    wrong = next(i for i in range(len(q.options)) if i != q.answer)
    zelda, bob = db.new_student(NAME, code), db.new_student("Bob Other", code)
    db.record_answer(zelda, q.id, wrong, 1, False)
    db.record_answer(zelda, q.id, q.answer, 2, True)
    db.record_answer(bob, q.id, q.answer, 1, True)
    task = load_tasks("en")[0]
    db.record_grading(zelda, task.id, True, {"evidence": True, "choices": True, "why_online.self_assessed": True})
    db.record_grading(bob, task.id, False, {"evidence": False, "choices": True, "why_online.self_assessed": False})
    db.record_prediction(zelda, "chat-and-reports", 3.0, 5.5)
    db.record_prediction(bob, "chat-and-reports", 8.0, 5.5)
    poll = db.open_poll(code, "fixed-batch-holes")
    db.answer_poll(poll, zelda, 1.5)
    return {"code": code, "question": q, "task": task, "tokens": (zelda, bob), "poll": poll}


def class_view(lang: str = "en") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["lang"] = lang
    at.session_state["instructor"] = True
    at.run()
    at.switch_page("pages/class_view.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def enter(at: AppTest, given: str) -> AppTest:
    at.text_input(key="class-view.passcode").input(given)
    next(b for b in at.button if b.label in ("Enter", "进入")).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown_text(at: AppTest) -> str:
    parts = [e.value for e in [*at.title, *at.markdown, *at.caption, *at.info, *at.warning, *at.error, *at.success]]
    parts += [str(df.value.to_dict()) for df in at.dataframe]
    return "\n".join(str(p) for p in parts)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_without_a_passcode_the_class_view_says_how_to_set_one_and_shows_nothing(unconfigured, klass, lang):
    at = class_view(lang)
    assert "SERVING_LAB_PASSCODE" in at.warning[0].value and "secrets.toml" in at.warning[0].value
    assert not [w for w in at.text_input if w.key == "class-view.passcode"]  # nothing to type a passcode into
    assert not at.get("plotly_chart") and not at.get("download_button")
    assert klass["code"] not in shown_text(at)


def test_a_wrong_passcode_is_refused(configured, klass):
    at = enter(class_view(), "correct horse 8")
    assert "not the passcode" in at.error[0].value
    assert not at.get("plotly_chart") and not at.get("download_button")
    assert not [w for w in at.text_input if w.key == "class-view.class.widget"]
    assert not passcode.matches("") and not passcode.matches("correct horse")


def test_the_right_passcode_shows_the_class_aggregates(configured, klass):
    at = enter(class_view(), PASSCODE)
    at.text_input(key="class-view.class.widget").input(klass["code"]).run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.caption]
    assert f"Class {klass['code']} · 2 students · refreshes every 3 s" in captions
    assert "2 answered · right first try 1 · right on the second try 1" in captions  # the quiz question
    assert "2 submitted · 1 complete" in captions  # the worksheet
    assert "2 predictions" in captions
    assert "Poll open (class {}): 1 answers so far".format(klass["code"]) in captions
    charts = at.get("plotly_chart")
    assert len(charts) == 4  # the question's answers, the worksheet's criteria, the predictions, the poll
    answers = json.loads(charts[0].proto.spec)["data"][0]
    assert sorted(answers["marker"]["color"]) == sorted([RIGHT, WRONG])  # the right answer green, the wrong grey
    assert at.get("download_button")
    assert not any(token in shown_text(at) for token in klass["tokens"])


def test_a_retake_shows_beside_the_first_attempts_which_stay_as_they_were(configured, klass):
    db, q = get_store(), klass["question"]
    zelda = klass["tokens"][0]
    db.start_over(zelda)
    db.record_answer(zelda, q.id, q.answer, 1, True)
    at = enter(class_view(), PASSCODE)
    at.text_input(key="class-view.class.widget").input(klass["code"]).run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.caption]
    assert "2 answered · right first try 1 · right on the second try 1" in captions  # the first attempts
    assert "Latest attempts: 2 answered · right first try 2 · right on the second try 0" in captions
    assert "Latest attempts: 1 submitted · 0 complete" in captions  # Zelda's retake has no worksheet yet
    table = at.dataframe[0].value
    assert list(table["Attempts"]) == [2, 1] and list(table["Quiz"]) == [1, 1]


def test_names_are_hidden_unless_the_instructor_shows_them(configured, klass):
    at = enter(class_view(), PASSCODE)
    at.text_input(key="class-view.class.widget").input(klass["code"]).run()
    assert NAME not in shown_text(at)
    assert "student 1" in shown_text(at)
    at.checkbox(key="class-view.names").check().run()
    assert NAME in shown_text(at)


def test_the_passcode_also_comes_from_secrets_toml(monkeypatch, tmp_path):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('instructor_passcode = "from the file"\n', encoding="utf-8")
    monkeypatch.setattr(passcode, "SECRETS", secrets)
    monkeypatch.delenv(passcode.ENV, raising=False)
    assert passcode.configured() == "from the file"
    assert passcode.matches("from the file") and not passcode.matches("from the fil")
    monkeypatch.setenv(passcode.ENV, "the environment wins")
    assert passcode.matches("the environment wins") and not passcode.matches("from the file")


def student_app(token: str, lang: str = "en") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["lang"] = lang
    at.session_state["progress.token"] = token  # as ui.progress.saved keeps it, after a `?s=` link or a first answer
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow
def test_a_live_poll_from_open_to_the_measured_value_on_every_screen(configured):
    code, db = f"p-{uuid.uuid4().hex[:8]}", get_store()
    students = [student_app(db.new_student("", code)) for _ in range(2)]
    teacher = enter(class_view(), PASSCODE)
    teacher.text_input(key="class-view.class.widget").input(code).run()
    teacher.button(key="side.moment.online-uniform").click().run()  # a numeric prediction, and a short run
    teacher.switch_page("pages/static_vs_continuous.py")  # AppTest would rerun the page it last switched to
    next(b for b in teacher.button if b.label == f"📊 Open the poll for class {code}").click().run()
    assert not teacher.exception, [e.value for e in teacher.exception]
    poll = db.current_poll(code)
    assert poll.prompt_id == "online-uniform"

    for at, value in zip(students, ("2", "abc")):
        at.run()
        assert any("Class poll: How many times higher" in m.value for m in at.markdown)
        at.text_input(key=f"poll.answer.{poll.id}").input(value)
        next(b for b in at.button if b.label == "Send").click().run()
    assert students[1].error[0].value == "A prediction here is a number, such as 2 or 1.5."  # and nothing stored
    assert db.poll_values(poll.id) == [2.0]
    students[1].text_input(key=f"poll.answer.{poll.id}").input("6.5")
    next(b for b in students[1].button if b.label == "Send").click().run()
    assert "Sent: 6.5×. You can change it until the poll closes." in [c.value for c in students[1].caption]

    teacher.run()
    assert f"Poll open (class {code}): 2 answers so far" in [m.value for m in teacher.markdown]
    next(b for b in teacher.button if b.label == "Close and run").click().run(timeout=300)
    poll_job.join(timeout=300)  # the server publishes the measured value once the runs end
    runs_ended(teacher)
    assert not teacher.exception, [e.value for e in teacher.exception]
    measured = db.latest_poll(code).measured
    assert db.latest_poll(code).state == "closed" and measured > 1
    figure = predictions.shown(load_moments()["online-uniform"], measured, "en")  # a ratio: "28.5×"
    assert f"Poll (2 answers) · the room's median 4.25× · measured {figure}" in [m.value for m in teacher.markdown]
    for at, mine in zip(students, ("2×", "6.5×")):
        at.run()
        result = next(m.value for m in at.markdown if m.value.startswith("📊"))
        assert f"Measured: **{figure}** · your answer: {mine} · the class: 2 answers, median 4.25×" in result
    assert {p.measured for p in db.predictions(students[0].session_state["progress.token"]).values()} == {measured}


@pytest.mark.slow
def test_a_poll_on_one_requests_next_step_is_answered_by_choice_and_the_engine_grades_it(configured):
    """A choice poll: students pick what the engine does next with one request (a choice by its name, none picked
    is refused), the instructor sees a bar per choice, and "close and run" reveals the engine's next step beside
    the choice most of the room made."""
    moment_id, code, db = "fixed-batch-next-step", f"n-{uuid.uuid4().hex[:8]}", get_store()
    moment = load_moments()[moment_id]
    tokens = [db.new_student("", code) for _ in range(3)]
    teacher = enter(class_view(), PASSCODE)
    teacher.text_input(key="class-view.class.widget").input(code).run()
    teacher.button(key=f"side.moment.{moment_id}").click().run()
    teacher.switch_page("pages/static_vs_continuous.py")
    next(b for b in teacher.button if b.label == f"📊 Open the poll for class {code}").click().run()
    poll = db.current_poll(code)
    assert poll.prompt_id == moment_id

    students = [student_app(tok, lang) for tok, lang in zip(tokens[:2], ("en", "zh"))]
    en, zh = students
    assert any(moment.predict["en"] in m.value for m in en.markdown)
    next(b for b in en.button if b.label == "Send").click().run()  # nothing picked
    assert en.error[0].value == STRINGS["pred.pick"]["en"] and db.poll_values(poll.id) == []
    assert en.radio(key=f"poll.answer.{poll.id}").options == [STRINGS[f"journey.next.{c}"]["en"]
                                                              for c in moment.predict["choices"]]
    for at, picked, lang in ((en, "prefill", "en"), (zh, "waiting", "zh")):
        at.radio(key=f"poll.answer.{poll.id}").set_value(picked)
        next(b for b in at.button if b.label == STRINGS["poll.send"][lang]).click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert STRINGS["poll.sent"][lang].format(value=STRINGS[f"journey.next.{picked}"][lang]) in [
            c.value for c in at.caption]
    db.answer_poll(poll.id, tokens[2], predictions.as_number(moment, "prefill"))  # a third, from another replica
    assert sorted(db.poll_values(poll.id)) == [0.0, 0.0, 1.0]

    teacher.run()
    assert f"Poll open (class {code}): 3 answers so far" in [m.value for m in teacher.markdown]
    live = json.loads(teacher.get("plotly_chart")[-1].proto.spec)["data"][0]
    assert dict(zip(live["y"], live["x"])) == {"it enters the batch: prefill": 2, "it keeps waiting": 1,
                                               "it decodes a token": 0, "it finishes": 0}
    next(b for b in teacher.button if b.label == "Close and run").click().run(timeout=300)
    poll_job.join(timeout=300)
    runs_ended(teacher)
    assert not teacher.exception, [e.value for e in teacher.exception]
    assert db.latest_poll(code).measured == predictions.as_number(moment, "waiting")  # the engine's next step
    assert STRINGS["poll.closed_line_choice"]["en"].format(
        n=3, room="it enters the batch: prefill", measured="it keeps waiting") in [m.value for m in teacher.markdown]
    assert "The room's prediction: it enters the batch: prefill · measured: it keeps waiting" in [
        i.value for i in teacher.info]
    for at, lang, mine in ((en, "en", "prefill"), (zh, "zh", "waiting")):
        at.run()
        words = {c: STRINGS[f"journey.next.{c}"][lang] for c in ("prefill", "waiting")}
        assert STRINGS["poll.result_choice"][lang].format(
            question=moment.predict[lang], measured=words["waiting"], mine=words[mine], n=3,
            room=words["prefill"]) in [m.value for m in at.markdown]
    kept = db.class_predictions(code)[moment_id]  # the two students' own predictions, with the engine's answer
    assert sorted(kept["values"]) == [0.0, 1.0] and kept["measured"] == 1.0
    fresh = enter(class_view(), PASSCODE)
    fresh.text_input(key="class-view.class.widget").input(code).run()
    bars = [json.loads(c.proto.spec)["data"][0] for c in fresh.get("plotly_chart")]
    drawn = [dict(zip(b["y"], b["x"])) for b in bars if b.get("orientation") == "h"]
    assert {"it enters the batch: prefill": 1, "it keeps waiting": 1, "it decodes a token": 0,
            "it finishes": 0} in drawn  # the predictions tab: a bar per choice, not a histogram of indices


@pytest.mark.slow
def test_with_the_instructor_gone_after_close_and_run_the_server_reveals_the_value_in_chinese(configured):
    """Nothing reruns the instructor's script after "close and run" (its tab is gone): the server's job publishes
    the measured value, the students (in zh) see it beside their answers, and a class view opened anew shows it."""
    moment_id, code, db = "online-uniform", f"g-{uuid.uuid4().hex[:8]}", get_store()
    tokens = [db.new_student("", code) for _ in range(2)]
    teacher = enter(class_view("zh"), PASSCODE)
    teacher.text_input(key="class-view.class.widget").input(code).run()
    teacher.button(key=f"side.moment.{moment_id}").click().run()
    teacher.switch_page("pages/static_vs_continuous.py")
    next(b for b in teacher.button if b.label == STRINGS["poll.open"]["zh"].format(code=code)).click().run()
    poll = db.current_poll(code)
    students = [student_app(tok, "zh") for tok in tokens]
    for at, value in zip(students, ("2", "6.5")):
        at.text_input(key=f"poll.answer.{poll.id}").input(value)
        next(b for b in at.button if b.label == STRINGS["poll.send"]["zh"]).click().run()
    teacher.run()
    next(b for b in teacher.button if b.label == STRINGS["poll.close_run"]["zh"]).click().run(timeout=300)
    assert not teacher.exception, [e.value for e in teacher.exception]
    del teacher  # the tab is closed: the instructor's session runs no more

    poll_job.join(timeout=300)
    measured = db.latest_poll(code).measured
    assert db.latest_poll(code).state == "closed" and measured is not None
    figure = predictions.shown(load_moments()[moment_id], measured, "zh")
    question = load_moments()[moment_id].predict["zh"]
    for at, mine in zip(students, ("2×", "6.5×")):
        at.run()
        assert STRINGS["poll.result"]["zh"].format(question=question, measured=figure, mine=mine, n=2,
                                                   median="4.25×") in [m.value for m in at.markdown]
    assert db.class_predictions(code)[moment_id] == {"values": [2.0, 6.5], "measured": measured}
    fresh = enter(class_view("zh"), PASSCODE)
    fresh.text_input(key="class-view.class.widget").input(code).run()
    assert STRINGS["poll.closed_line"]["zh"].format(n=2, median="4.25×", measured=figure) in [
        c.value for c in fresh.caption]


def test_a_poll_whose_run_fails_tells_the_students_so_in_their_language(configured, tiny):
    """A run that fails mid-way (a real one: a policy key that divides by zero once a request has 3 tokens) marks
    the poll failed; each student reads that in their language instead of waiting, and so does the class view.
    A second "close and run" for the poll finds its job running and starts none."""
    code, db = f"f-{uuid.uuid4().hex[:8]}", get_store()
    tokens = [db.new_student("", code) for _ in range(2)]
    poll = db.open_poll(code, "online-uniform")
    db.answer_poll(poll, tokens[0], 3.0)
    db.close_poll(poll)
    requests = workload_requests(tiny, preset("high-variance").scaled(0.2), seed=0)[:6]
    config = EngineConfig(max_num_seqs=4, policy_key="100 / (num_output_tokens - 3)")

    def runs():
        return [RUNS.get(("failing", code), lambda: LiveRun(tiny, requests, config, "continuous"), run_bytes)]
    moment = load_moments()["online-uniform"]
    assert poll_job.start(db, poll, moment, runs)
    assert not poll_job.start(db, poll, moment, runs)
    poll_job.join(timeout=120)
    assert (db.latest_poll(code).state, db.latest_poll(code).measured) == ("failed", None)
    for tok, lang in zip(tokens, ("zh", "en")):
        assert STRINGS["poll.failed"][lang] in [m.value for m in student_app(tok, lang).markdown]
    teacher = enter(class_view("zh"), PASSCODE)
    teacher.text_input(key="class-view.class.widget").input(code).run()
    assert STRINGS["poll.failed_room"]["zh"] in [e.value for e in teacher.error]


def test_the_instructor_marks_an_explanation_and_the_mark_is_stored_on_the_text_it_read(configured, klass):
    db, (zelda, bob) = get_store(), klass["tokens"]
    db.save_draft(zelda, "paged-attention-purpose", "answer", "Blocks on demand through a block table.")
    db.self_assess(zelda, "paged-attention-purpose", "answer", "met")
    at = enter(class_view(), PASSCODE)
    at.text_input(key="class-view.class.widget").input(klass["code"]).run()
    shown = shown_text(at)
    assert "> Blocks on demand through a block table." in shown and "self-assessed: meets it" in shown
    assert "student 2: not written yet." in shown and NAME not in shown
    form = "class-view.review.paged-attention-purpose.answer.1"
    at.button(key=f"FormSubmitter:{form}-Save").click().run()  # no mark picked yet: said, nothing stored
    assert "Pick ✓ or “needs work” first." in shown_text(at) and db.marks(zelda) == {}
    at.radio(key=f"{form}.mark").set_value("needs_work")
    at.text_input(key=f"{form}.comment").input("Say what stays the same.")
    at.button(key=f"FormSubmitter:{form}-Save").click().run()
    assert not at.exception, [e.value for e in at.exception]
    mark = db.marks(zelda)["paged-attention-purpose"]["answer"]
    assert (mark.mark, mark.comment, mark.text) == ("needs_work", "Say what stays the same.",
                                                    "Blocks on demand through a block table.")
    assert db.marks(bob) == {}


def test_an_explanation_shows_as_the_student_typed_it_not_as_markdown(configured, klass):
    zelda = klass["tokens"][0]
    get_store().save_draft(zelda, "paged-attention-purpose", "answer",
                           "p95 ≤ $5 and $6 *per* chat\n![x](http://example.invalid/x.png)")
    at = enter(class_view(), PASSCODE)
    at.text_input(key="class-view.class.widget").input(klass["code"]).run()
    quoted = next(m.value for m in at.markdown if m.value.startswith("> p95"))
    # no formula, no emphasis, no image: every sign escaped
    assert quoted == "> p95 ≤ \\$5 and \\$6 \\*per\\* chat\n> \\!\\[x\\](http://example.invalid/x.png)"
