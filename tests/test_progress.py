"""Students come back (ui/progress/saved.py): the `?s=` link restores the quiz, worksheets and predictions, a bad link
starts afresh with a message, sessions never see each other's answers, an unusable database only warns (and keeps
the answers in the session: tests/test_storage_loss.py)."""
import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from classroom import get_store
from lessons import load_moments, load_quiz, load_tasks
from ui.shell.i18n import strings

ROOT = Path(__file__).resolve().parent.parent
STRINGS = strings()


def session(path: str = "pages/quiz.py", link: str | None = None, lang: str = "en") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["lang"] = lang
    if link is not None:
        at.query_params["s"] = link
    at.run()
    if path:
        at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def choice_questions(at: AppTest):
    questions = {q.id: q for q in load_quiz("en")}
    return [questions[qid] for qid in at.session_state["quiz.order"] if questions[qid].type == "single"]


def submit(at: AppTest, q, option: int) -> None:
    """Go to question q, pick an option, submit."""
    at.session_state["quiz.index"] = at.session_state["quiz.order"].index(q.id)
    at.run()
    key = f"quiz.q.{q.id}" + (".2" if at.session_state["quiz.attempt"].tries.get(q.id) else "")
    at.radio(key=key).set_value(option)
    next(b for b in at.button if b.key == f"quiz.q.{q.id}.submit").click().run()
    assert not at.exception, [e.value for e in at.exception]


def test_the_link_brings_back_quiz_tries_worksheet_text_predictions_and_milestones():
    at = session()
    right, wrong = choice_questions(at)[:2]
    submit(at, right, right.answer)
    submit(at, wrong, (wrong.answer + 1) % len(wrong.options))
    token = at.query_params["s"][0] if isinstance(at.query_params["s"], list) else at.query_params["s"]
    assert get_store().student(token) is not None
    at.switch_page("pages/tasks.py").run()
    task = load_tasks("en")[0]
    field = next(f for f in task.fields if f.kind == "long")
    widget = next(w for w in [*at.text_area, *at.text_input] if w.key == f"task.{task.id}.{field.id}")
    widget.input("Blocks are handed out on demand, so memory follows the tokens.").run()
    assert not at.exception

    number_moment = next(m for m in load_moments().values() if m.predict.get("kind") == "number")
    get_store().record_prediction(token, number_moment.id, 2.5, 3.0)
    get_store().reach_milestone(token, "quiz-finished")

    back = session(link=token)
    assert back.session_state["predictions"][number_moment.id]["value"] == 2.5
    assert back.session_state["progress.milestones"] == {"quiz-finished"}
    attempt = back.session_state["quiz.attempt"]
    assert attempt.results[right.id].correct and attempt.tries[right.id] == 1
    assert not attempt.results[wrong.id].correct and attempt.awaiting_retry(wrong.id)
    assert back.session_state["progress.token"] == token
    back.switch_page("pages/home.py").run()
    back.switch_page("pages/quiz.py").run()
    back.switch_page("pages/tasks.py").run()
    widget = next(w for w in [*back.text_area, *back.text_input] if w.key == f"task.{task.id}.{field.id}")
    assert widget.value == "Blocks are handed out on demand, so memory follows the tokens."

    stranger = session()
    assert stranger.session_state["quiz.attempt"].results == {}
    assert "progress.token" not in stranger.session_state


@pytest.mark.parametrize("link, key", [("not-a-token", "progress.bad_link"),
                                       ("A" * 22, "progress.unknown_link"),
                                       ("'); DROP TABLE students; --", "progress.bad_link")])
def test_a_malformed_or_unknown_link_starts_afresh_with_a_message(link, key):
    at = session(path="", link=link)
    assert STRINGS[key]["en"] in [w.value for w in at.warning]
    assert "progress.token" not in at.session_state and "s" not in at.query_params


def test_app_sessions_submitting_while_forty_students_write_each_keep_exactly_their_own_answers():
    """Four AppTest sessions submit quiz answers, turn about, while 40 threads write answers of 40 other students
    into the same database; every answer is stored once, under its own student. (AppTest's script runs share
    process-wide test globals, so two runs at the very same instant can trip the harness itself: the sessions
    take turns, and the concurrency is between their writes and the 40 writers.)"""
    sessions = [session() for _ in range(4)]
    questions = choice_questions(sessions[0])[:3]
    db = get_store()
    others = [db.new_student(f"other{i}", "room") for i in range(40)]
    running, done, errors, written = threading.Event(), threading.Event(), [], [0] * len(others)

    def writer(i, tok):  # an answer every 0.1 s until the four sessions are done: 400 a second in all
        running.wait()
        try:
            while not done.wait(0.1) and written[i] < 2000:
                db.record_answer(tok, f"q{written[i]}", f"{i}:{written[i]}", 1, True)
                written[i] += 1
        except Exception as exc:  # reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=writer, args=(i, tok)) for i, tok in enumerate(others)]
    for t in threads:
        t.start()
    running.set()
    for q in questions:
        for i, at in enumerate(sessions):
            submit(at, q, i % len(q.options))
    done.set()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    tokens = [at.session_state["progress.token"] for at in sessions]
    assert len(set(tokens)) == len(sessions)
    for i, tok in enumerate(tokens):
        stored = db.quiz_answers(tok)
        assert sorted((a.question_id, a.try_no, a.answer) for a in stored) == \
            sorted((q.id, 1, i % len(q.options)) for q in questions)
    for i, tok in enumerate(others):
        assert sorted(a.answer for a in db.quiz_answers(tok)) == sorted(f"{i}:{j}" for j in range(written[i]))
    assert min(written) > 0


def test_an_unusable_database_warns_and_the_lab_still_runs(tmp_path, monkeypatch):
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"not a database at all" * 64)
    monkeypatch.setenv("SERVING_LAB_DB", str(corrupt))
    at = session(path="")
    assert any(STRINGS["progress.unavailable"]["en"].split(":")[0] in w.value for w in at.warning)
    at.switch_page("pages/quiz.py").run()
    submit(at, choice_questions(at)[0], 0)  # the quiz still grades; the answer waits in the session, retried
    assert at.session_state["quiz.attempt"].results
    box = at.session_state["progress.outbox"]
    assert [op.method for op in box.ops] == ["ensure_student", "record_answer"] and box.pending == 2
    assert box.error.code == "unavailable"


def _export_script():
    import streamlit as st

    from ui.progress import saved as progress, panel as progress_panel
    progress.restore()  # the ?s= link the test set
    st.session_state["exported"] = progress_panel.export_markdown()


def _import_script():
    import streamlit as st

    from ui.progress import panel as progress_panel
    ss = st.session_state
    if "taken" not in ss:
        ss["taken"] = progress_panel.import_markdown(ss["markdown"])


def test_export_my_progress_then_import_it_into_a_new_student_regrades_the_quiz_and_keeps_the_rest():
    store = get_store()
    questions = [q for q in load_quiz("en") if q.type == "single"][:2]
    tok = store.new_student("Ex", "")
    store.record_answer(tok, questions[0].id, questions[0].answer, 1, True)
    store.record_answer(tok, questions[1].id, (questions[1].answer + 1) % len(questions[1].options), 1, False)
    task = load_tasks("en")[0]
    store.save_draft(tok, task.id, task.fields[0].id, "```fenced``` and 中文")
    moment = next(m for m in load_moments().values() if m.predict.get("kind") == "number")
    store.record_prediction(tok, moment.id, 1.75)

    export = AppTest.from_function(_export_script, default_timeout=60)
    export.query_params["s"] = tok
    export.run()
    assert not export.exception, [e.value for e in export.exception]
    markdown = export.session_state["exported"]
    assert "中文" in markdown and questions[0].id in markdown

    imported = AppTest.from_function(_import_script, default_timeout=60)
    imported.session_state["markdown"] = markdown
    imported.run()
    assert not imported.exception, [e.value for e in imported.exception]
    new = imported.session_state["progress.token"]
    assert new != tok and imported.session_state["taken"] == 4
    tries = {(a.question_id, a.try_no): a.correct for a in store.quiz_answers(new)}
    assert tries == {(questions[0].id, 1): True, (questions[1].id, 1): False}  # graded again, not copied
    assert store.drafts(new) == {task.id: {task.fields[0].id: "```fenced``` and 中文"}}
    assert store.predictions(new)[moment.id].value == 1.75


def test_an_imported_quiz_answer_is_graded_here_not_taken_on_trust():
    q = next(q for q in load_quiz("en") if q.type == "single")
    wrong = (q.answer + 1) % len(q.options)
    forged = f"# x\n\n## Quiz (`quiz-answers`)\n\n### q (`{q.id}`)\n\n```\n[{wrong}]\n```\n"
    imported = AppTest.from_function(_import_script, default_timeout=60)
    imported.session_state["markdown"] = forged
    imported.run()
    new = imported.session_state["progress.token"]
    assert [(a.try_no, a.correct) for a in get_store().quiz_answers(new)] == [(1, False)]


def test_home_sets_a_name_and_class_code_and_start_over_opens_a_new_attempt_keeping_the_first():
    at = session(path="")
    at.text_input(key="progress.name").input("Lin 林")
    at.text_input(key="progress.class_code").input("cs-2026")
    next(b for b in at.button if b.label == STRINGS["progress.start"]["en"]).click().run()
    tok = at.session_state["progress.token"]
    me = get_store().student(tok)
    assert (me.name, me.class_code, me.attempt) == ("Lin 林", "cs-2026", 1)
    q = next(q for q in load_quiz("en") if q.type == "single")
    get_store().record_answer(tok, q.id, q.answer, 1, True)
    get_store().reach_milestone(tok, "quiz-finished")

    at.button(key="progress.start_over").click().run()
    assert not at.exception
    assert get_store().quiz_answers(tok) == [] and get_store().milestones(tok) == set()
    me = get_store().student(tok)
    assert (me.name, me.attempt, me.quiz_attempt) == ("Lin 林", 2, 2) and at.session_state["progress.token"] == tok
    assert get_store().class_quiz("cs-2026")[q.id]["first_try_correct"] == 1  # the first attempt is kept
    # (AppTest reruns only the page after the first run, so app.py's notices() would show this on the next run)
    assert at.session_state["progress.notice"][1] == "progress.started_over"


def test_after_start_over_the_students_pages_show_only_the_new_attempt():
    at = session()
    first, second = choice_questions(at)[:2]
    submit(at, first, (first.answer + 1) % len(first.options))
    submit(at, second, second.answer)
    tok = at.session_state["progress.token"]
    code = f"retake-{tok[:6]}"
    get_store().update_student(tok, "R", code)
    at.switch_page("pages/tasks.py").run()
    task = load_tasks("en")[0]
    field = next(f for f in task.fields if f.kind == "long")
    at.text_area(key=f"task.{task.id}.{field.id}").input("The first attempt's answer.").run()
    assert get_store().drafts(tok) == {task.id: {field.id: "The first attempt's answer."}}

    at.switch_page("pages/home.py").run()
    at.button(key="progress.start_over").click().run()
    at.switch_page("pages/quiz.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["quiz.attempt"].results == {}
    submit(at, first, first.answer)  # the retake, right at once
    at.switch_page("pages/tasks.py").run()
    assert at.text_area(key=f"task.{task.id}.{field.id}").value == ""

    back = session(link=tok)  # the link, opened again: the new attempt only
    attempt = back.session_state["quiz.attempt"]
    assert set(attempt.results) == {first.id} and attempt.results[first.id].correct and attempt.tries[first.id] == 1
    assert (back.session_state["progress.attempt_no"], back.session_state["progress.quiz_attempt_no"]) == (2, 2)
    back.switch_page("pages/tasks.py").run()
    assert back.text_area(key=f"task.{task.id}.{field.id}").value == ""
    assert back.session_state["answers"] == {}

    q = get_store().class_quiz(code)  # the class view: the first attempt as it was, and the retake as latest
    now = get_store().class_quiz(code, latest=True)
    assert (q[first.id]["first_try_correct"], now[first.id]["first_try_correct"]) == (0, 1)
    assert q[second.id]["first_try_correct"] == 1 and second.id not in now


def test_the_quizs_start_over_opens_a_new_quiz_attempt_and_keeps_the_earlier_tries():
    at = session()
    q = choice_questions(at)[0]
    submit(at, q, (q.answer + 1) % len(q.options))
    tok = at.session_state["progress.token"]
    code = f"quiz-{tok[:6]}"
    get_store().update_student(tok, "Q", code)
    at.button(key="quiz.restart").click().run()
    assert at.session_state["quiz.attempt"].results == {}
    submit(at, q, q.answer)
    assert [(a.try_no, a.correct) for a in get_store().quiz_answers(tok)] == [(1, True)]
    me = get_store().student(tok)
    assert (me.attempt, me.quiz_attempt) == (1, 2)  # the quiz only: the rest of the progress is the same attempt
    first, latest = get_store().class_quiz(code)[q.id], get_store().class_quiz(code, latest=True)[q.id]
    assert (first["first_try_correct"], latest["first_try_correct"]) == (0, 1)


def test_an_oversized_draft_is_refused_with_a_message_and_not_stored():
    at = session(path="pages/tasks.py")
    task = load_tasks("en")[0]
    field = next(f for f in task.fields if f.kind == "long")
    at.text_area(key=f"task.{task.id}.{field.id}").input("x" * 6000).run()
    assert not at.exception
    tok = at.session_state["progress.token"]
    assert get_store().drafts(tok) == {}
    kind, key, params = at.session_state["progress.notice"]  # shown above the next page drawn (app.py)
    assert (kind, key, params["limit"], params["length"]) == ("error", "classroom.error.too_long", 5000, 6000)
    assert "{limit}" in STRINGS[key]["en"] and "{limit}" in STRINGS[key]["zh"]
