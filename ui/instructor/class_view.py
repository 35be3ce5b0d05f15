"""The instructor's class view: behind the passcode, one class's results summed, refreshed live.

Nothing here names a student unless the instructor ticks "show names"; the store hands back counts, and
the student list and CSV label students "student N" by default."""
from __future__ import annotations

import csv
import io
import json
import time

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from classroom import StorageError, class_code
from lessons import grade, load_moments, load_quiz, load_tasks, measured_value, parse_number, shown_value
from lessons.grading import figure, typed
from lessons import quiz_variants
from ui.instructor import access, moments
from ui.instructor.attempts import ATTEMPTS
from ui.instructor.poll import answers_chart, summary_line
from ui.instructor.access import CLASS, message
from ui.shell.i18n import lang, t
from viz.classroom import answer_bars, criteria_bars

REFRESH_S = 3
PAGE = "class-view"
ss = st.session_state


def passcode_form() -> None:
    with st.form(f"{PAGE}.unlock", border=True):
        given = st.text_input(t("cv.passcode"), type="password", key=f"{PAGE}.passcode")
        go = st.form_submit_button(t("cv.unlock"), type="primary")
    if go:
        ctx = get_script_run_ctx()
        try:  # bounded misses, counted in the store across sessions and replicas
            outcome = ATTEMPTS.check(given, ctx.session_id if ctx else "?", st.context.ip_address)
        except StorageError as e:
            st.error(message(e))
            return
        if outcome.ok:
            if access.grant():
                ss.pop(f"{PAGE}.passcode", None)
                time.sleep(0.3)  # let the browser take the cookie before the rerun replaces the element that sets it
                st.rerun()
            return
        if outcome.retry_after_s:
            st.error(t("cv.too_many", s=outcome.retry_after_s), icon="⏳")
        else:
            st.error(t("cv.wrong"), icon="🔒")


def _copy_class() -> None:
    ss[CLASS] = (ss.get(f"{PAGE}.class.widget") or "").strip()
    ss[f"{PAGE}.remember"] = True  # the stored session follows the class (kept from the page, not this callback)


def _linked_class() -> str:
    """The class the address names (`?class=`, written below): a reload or a bookmark of the class view opens on
    it even when the store could not keep the session's class."""
    try:
        return class_code(st.query_params.get("class", ""))
    except StorageError:
        return ""


def controls() -> tuple[str, bool]:
    if not ss.get(f"{PAGE}.linked"):  # once per session: later runs may carry an address written before
        ss[f"{PAGE}.linked"] = True
        if (linked := _linked_class()) and linked != ss.get(CLASS):
            ss[CLASS], ss[f"{PAGE}.remember"] = linked, True
    ss[f"{PAGE}.class.widget"] = ss.get(CLASS, "")  # the value lives in CLASS: a page switch drops widget state
    c = st.columns([3, 2, 1, 2], vertical_alignment="bottom")
    c[0].text_input(t("cv.class_code"), key=f"{PAGE}.class.widget", help=t("cv.class_help"), on_change=_copy_class,
                    max_chars=40)
    show_names = c[1].checkbox(t("cv.show_names"), key=f"{PAGE}.names", help=t("cv.show_names_help"))
    if ss.get(f"{PAGE}.remember") and access.remember():
        ss.pop(f"{PAGE}.remember")
    if st.query_params.get("class") != (ss.get(CLASS) or None):
        if ss.get(CLASS):
            st.query_params["class"] = ss[CLASS]
        else:
            del st.query_params["class"]
    if c[2].button(t("cv.lock"), key=f"{PAGE}.lock"):
        access.revoke()
        time.sleep(0.3)
        st.rerun()
    if c[3].button(t("cv.sign_out_all"), key=f"{PAGE}.sign-out-all", help=t("cv.sign_out_all_help")):
        access.sign_out_everywhere()
        time.sleep(0.3)
        st.rerun()
    return ss.get(CLASS, ""), show_names


def live(db, code: str, show_names: bool) -> None:
    try:
        size = db.class_size(code)
        quiz, tasks, preds = db.class_quiz(code), db.class_worksheets(code), db.class_predictions(code)
        latest = {"quiz": db.class_quiz(code, latest=True), "tasks": db.class_worksheets(code, latest=True),
                  "preds": db.class_predictions(code, latest=True)}
        poll = db.latest_poll(code)
        poll_values = db.poll_values(poll.id) if poll else []
        table = db.class_csv(code, show_names=show_names)
        attempts = db.class_attempts(code, show_names=show_names)
    except StorageError as e:
        st.error(message(e))
        return
    top = st.columns([4, 2], vertical_alignment="center")
    top[0].caption(t("cv.refreshed", code=code, students=size, seconds=REFRESH_S))
    top[1].download_button(t("cv.csv"), table, file_name=f"class-{code}.csv", mime="text/csv", key=f"{PAGE}.csv",
                           icon="⬇️", on_click="ignore")
    tabs = st.tabs([t("cv.tab.quiz"), t("cv.tab.tasks"), t("cv.tab.predictions"), t("cv.tab.poll"),
                    t("cv.tab.students")])
    with tabs[0]:
        _quiz(quiz, latest["quiz"])
    with tabs[1]:
        _tasks(tasks, latest["tasks"])
    with tabs[2]:
        _predictions(preds, latest["preds"])
    with tabs[3]:
        _poll(poll, poll_values)
    with tabs[4]:
        _students(table, attempts)


def _stored(answer):
    """A stored answer as the store keeps it (JSON text for anything but a plain value) back as a value."""
    if isinstance(answer, str) and answer[:1] in "[{":
        try:
            return json.loads(answer)
        except ValueError:
            pass
    return answer


def answer_label(question, answer) -> str:
    """A stored answer as the student saw it: an option's text, several options (in the bank's order, however they
    were ticked), a two-tier answer and its reason, an order, a class, or a numeric answer's number with the
    question's unit ("491 steps", "2.3×"), never the stored record. Text, to be escaped wherever it is drawn."""
    answer = _stored(answer)
    options = getattr(question, "options", ()) or ()
    kind = getattr(question, "type", None)
    if isinstance(answer, dict) and kind == "two_tier":
        reasons = question.reasons
        a, r = answer.get("answer"), answer.get("reason")
        tier = options[a] if isinstance(a, int) and 0 <= a < len(options) else str(a)
        why = reasons[r] if isinstance(r, int) and 0 <= r < len(reasons) else str(r)
        return f"{tier} {t('quiz.because')} {why}"
    if isinstance(answer, dict) and "answer" in answer:  # numeric: {"answer", "measured"}
        answer = answer["answer"]
        if getattr(question, "compare", None) == "max_class":
            return dict(question.classes).get(answer, str(answer))
        if kind == "numeric":
            number = parse_number(answer, percent=question.unit == "%")
            return typed(question, number) if number is not None else str(answer)
    if isinstance(answer, bool) or answer is None:
        return str(answer)
    if isinstance(answer, int) and 0 <= answer < len(options):
        return options[answer]
    if isinstance(answer, list):
        if kind == "multiple" and all(isinstance(a, int) and not isinstance(a, bool) for a in answer):
            answer = sorted(set(answer))
        parts = [options[a] if isinstance(a, int) and 0 <= a < len(options) else str(a) for a in answer]
        return " + ".join(parts) if kind == "multiple" else " → ".join(parts)
    if isinstance(answer, float):
        return f"{answer:.4g}"
    return str(answer)


def _correct_labels(question) -> set[str]:
    if question is None or question.answer is None:
        return set()
    if question.type == "two_tier":
        return {answer_label(question, {"answer": question.answer, "reason": question.reason})}
    return {answer_label(question, question.answer if question.type == "single" else list(question.answer))}


def answer_right(question, answer) -> bool:
    """Whether a stored first try was right: a numeric answer graded against the figure its own run measured (kept
    beside it), any other against the bank's answer."""
    if question is None:
        return False
    value = _stored(answer)
    if question.type == "numeric":
        return isinstance(value, dict) and grade(question, value.get("answer"), value.get("measured")).correct
    return answer_label(question, answer) in _correct_labels(question)


def measured_label(question, answer) -> str | None:
    """The figure a stored numeric answer was graded against (its own run's), as the quiz prints it; None for other
    questions or before any run."""
    if question is None or question.type != "numeric":
        return None
    value = _stored(answer)
    measured = measured_value(value.get("measured")) if isinstance(value, dict) else None
    if isinstance(measured, str):
        return dict(question.classes).get(measured, measured)
    if isinstance(measured, (int, float)) and not isinstance(measured, bool):
        return figure(shown_value(question, measured), question.unit, question.lang)
    return None


def own_figures(question, answers) -> set[str]:
    """The figures the students' own runs measured for a numeric question, as the quiz prints them."""
    return {measured_label(question, answer) for answer in answers} - {None}


def answer_counts(question, answers: dict) -> tuple[dict[str, int], set[str]]:
    """The bars of a question's answers: {label: students} and the labels that are right. Where the students' own
    runs measured different figures (each student's variant), every numeric answer stands beside the figure its
    own run measured, so the instructor sees what each was graded against."""
    own = own_figures(question, answers)
    counts: dict[str, int] = {}
    right: set[str] = set()
    for answer, k in _in_order(question, answers):
        label = _short(answer_label(question, answer), 24)  # the full text is the question's help and the CSV's
        measured = measured_label(question, answer) if len(own) > 1 else None
        if measured is not None:
            label = t("cv.answer_and_measured", answer=label, measured=measured)
        counts[label] = counts.get(label, 0) + k
        if answer_right(question, answer):
            right.add(label)
    return counts, right


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"


def _quiz(quiz: dict, latest: dict) -> None:
    """Per question, the students' first attempts (its chart and first line) and their latest (a second line)."""
    if not quiz:
        st.info(t("cv.no_quiz"))
        return
    questions = {q.id: (i, q) for i, q in enumerate(load_quiz(lang()), 1)}
    shown = sorted(quiz, key=lambda qid: questions.get(qid, (999, None))[0])
    cols = st.columns(2)
    for n, qid in enumerate(shown):
        entry = quiz[qid]
        number, question = questions.get(qid, (None, None))
        with cols[n % 2].container(border=True, key=f"{PAGE}-q-{qid}"):
            asked = quiz_variants.for_the_class(question.prompt) if question else ""
            heading = f"**{number}. {_short(asked)}**" if question else f"**{qid}**"
            st.markdown(heading, help=asked or None)
            now = latest.get(qid, {})
            st.caption(t("cv.question_line", n=entry["students"], first=entry["first_try_correct"],
                         second=entry["second_try_correct"]), help=t("cv.first_help"))
            st.caption(t("cv.question_line_latest", n=now.get("students", 0), first=now.get("first_try_correct", 0),
                         second=now.get("second_try_correct", 0)), help=t("cv.latest_help"))
            own = own_figures(question, entry["answers"])
            if len(own) > 1:
                st.caption(t("cv.quiz_measured_each"))
            elif own:
                st.caption(t("cv.quiz_measured", value=own.pop()))
            counts, right = answer_counts(question, entry["answers"])
            st.plotly_chart(answer_bars(counts, right, {"count": t("cv.count")}),
                            key=f"{PAGE}.q.{qid}", config={"displayModeBar": False})


def _in_order(question, answers: dict) -> list:
    """A numeric question's answers from the smallest number up; the others as they came."""
    items = list(answers.items())
    if question is None or question.type != "numeric" or question.compare == "max_class":
        return items

    def number(item):
        value = _stored(item[0])
        n = parse_number(value.get("answer"), percent=question.unit == "%") if isinstance(value, dict) else None
        return (n is None, n or 0.0)
    return sorted(items, key=number)


def _tasks(tasks: dict, latest: dict) -> None:
    if not tasks:
        st.info(t("cv.no_tasks"))
        return
    known = {task.id: task for task in load_tasks(lang())}
    cols = st.columns(2)
    for n, task_id in enumerate(sorted(tasks, key=lambda i: list(known).index(i) if i in known else 999)):
        entry, task = tasks[task_id], known.get(task_id)
        field_labels = {f.id: f.label for f in task.fields} if task else {}
        with cols[n % 2].container(border=True, key=f"{PAGE}-task-{task_id}"):
            st.markdown(f"**{task.title if task else task_id}**")
            st.caption(t("cv.task_line", n=entry["students"], passed=entry["passed"]), help=t("cv.first_help"))
            now = latest.get(task_id, {})
            st.caption(t("cv.task_line_latest", n=now.get("students", 0), passed=now.get("passed", 0)),
                       help=t("cv.latest_help"))
            passed = {_criterion_label(name, field_labels): k for name, k in entry["criteria"].items()}
            if passed:
                st.plotly_chart(criteria_bars(passed, entry["students"], {"students": t("cv.count")}),
                                key=f"{PAGE}.task.{task_id}", config={"displayModeBar": False})


def _criterion_label(name: str, field_labels: dict[str, str]) -> str:
    """A part of a task (ui/progress/saved.py worksheet_status) as the worksheet names it: evidence, choices, and
    `field.self_assessed` reads "field label: self-assessed as met", `field.guessed` "field label: guessed through"."""
    field, _, part = name.partition(".")
    if not part:
        return t(f"cv.part.{name}") if name in ("evidence", "choices", "goal_changed") else name
    known = part if part in ("self_assessed", "guessed") else None
    return f"{_short(field_labels.get(field, field), 30)}: {t(f'cv.part.{known}') if known else part}"


def _question(prompt_id: str) -> str:
    moment = load_moments().get(prompt_id)
    return moment.predict.get(lang(), prompt_id) if moment and moment.predict else prompt_id


def _predictions(preds: dict, latest: dict) -> None:
    if not preds:
        st.info(t("cv.no_predictions"))
        return
    cols = st.columns(2)
    for n, (prompt_id, entry) in enumerate(sorted(preds.items())):
        with cols[n % 2].container(border=True, key=f"{PAGE}-pred-{prompt_id}"):
            st.markdown(f"**{moments.title(prompt_id)}** — {_question(prompt_id)}")
            st.caption(t("cv.prediction_line", n=len(entry["values"])), help=t("cv.first_help"))
            st.caption(t("cv.prediction_line_latest", n=len(latest.get(prompt_id, {}).get("values", ()))),
                       help=t("cv.latest_help"))
            st.plotly_chart(answers_chart(entry["values"], entry["measured"], prompt_id),
                            key=f"{PAGE}.pred.{prompt_id}", config={"displayModeBar": False})


def _poll(poll, values: list[float]) -> None:
    if poll is None:
        st.info(t("cv.no_poll"))
        return
    st.markdown(f"**{moments.title(poll.prompt_id)}** — {_question(poll.prompt_id)}")
    if poll.state == "open":
        st.caption(t("poll.live", code=poll.class_code, n=len(values)))
    else:
        st.caption(summary_line(values, poll.measured, poll.prompt_id))
        if poll.state == "failed":
            st.error(t("poll.failed_room"))
    st.plotly_chart(answers_chart(values, poll.measured, poll.prompt_id), key=f"{PAGE}.poll",
                    config={"displayModeBar": False})


def _students(table: str, attempts: dict[str, tuple[int, int]]) -> None:
    """Every student: how many records their current attempt holds of each kind, and how many attempts (and quiz
    attempts) they have opened."""
    if not attempts:
        st.info(t("cv.no_students"))
        return
    per = {name: {"quiz": 0, "worksheet": 0, "prediction": 0} for name in attempts}
    for row in csv.DictReader(io.StringIO(table)):
        if row["latest"] == "True" and row["student"] in per:
            per[row["student"]][row["kind"]] += 1
    st.dataframe([{t("cv.tab.students"): name, t("cv.tab.quiz"): c["quiz"], t("cv.tab.tasks"): c["worksheet"],
                   t("cv.tab.predictions"): c["prediction"], t("cv.attempts"): attempts[name][0],
                   t("cv.quiz_attempts"): attempts[name][1]} for name, c in per.items()],
                 hide_index=True, key=f"{PAGE}.students")
