"""Students come back: their progress lives in the classroom store under a random token, and the token lives in
the URL (`?s=…`, kept across page switches by ui.shell.url_state like `lang`). A run that brings a token the session
does not hold loads that student's quiz attempt, worksheet answers, predictions and milestones into session
state; every submit, draft, prediction and milestone is written through as it happens.

No token is made until there is something to keep (the first answer), or the student asks on the Home page.
When the database cannot be opened or written, the lab runs on with a visible warning (nothing is saved)."""
from __future__ import annotations

from dataclasses import asdict
from urllib.parse import urlsplit

import streamlit as st

from classroom import StorageError, get_store, is_token
from lessons import load_moments, load_quiz
from lessons.attempt import Attempt
from lessons.grading import quiz_order
from lessons.predictions import Prediction
from ui.shell.i18n import lang, t

TOKEN = "progress.token"
NOTICE = "progress.notice"  # (kind, strings key, params): shown once, at the top of the next page drawn
_BROKEN = "progress.unavailable"


def _store():
    """The store, or None with a warning for this session when the database cannot be used."""
    try:
        return get_store()
    except StorageError as err:
        st.session_state[_BROKEN] = err
        return None


def call(method: str, *args):
    """A store call for this student; a refusal becomes a message on the page, never a traceback."""
    store = _store()
    if store is None:
        return None
    try:
        return getattr(store, method)(*args)
    except StorageError as err:
        if err.code == "unavailable":
            st.session_state[_BROKEN] = err
        else:
            st.session_state[NOTICE] = ("error", f"classroom.error.{err.code}", err.params)
        return None


def error_text(err: StorageError) -> str:
    key = f"classroom.error.{err.code}"
    try:
        return t(key, **err.params)
    except (KeyError, IndexError):
        return t(key)


def token(create: bool = True) -> str | None:
    """This student's token; with create, a new (anonymous) student when there is none yet."""
    ss = st.session_state
    if ss.get(TOKEN) or not create:
        return ss.get(TOKEN)
    new = call("new_student", "", "")
    if new:
        adopt(new)
    return new


def adopt(new: str) -> None:
    """A new token for this session: into the URL, and the milestones reached before it was made into the store."""
    ss = st.session_state
    ss[TOKEN] = new
    st.query_params["s"] = new
    for mid in ss.get("progress.milestones", set()):
        call("reach_milestone", new, mid)


# -- loading a student's progress into the session ----------------------------------------------------------

_SESSION_PREFIXES = ("quiz.", "task.", "tasks.feedback.", "pred.", "progress.measured.")
_SESSION_KEYS = ("answers", "tasks.checked", "predictions", "progress.milestones")


def forget_session_progress() -> None:
    ss = st.session_state
    for key in [k for k in ss if str(k).startswith(_SESSION_PREFIXES) and k != "quiz.seed"]:
        del ss[key]
    for key in _SESSION_KEYS:
        ss.pop(key, None)


def restore() -> None:
    """At the top of every run (app.py, after url_state.restore): a `?s=` this session does not hold yet."""
    ss, url = st.session_state, st.query_params.get("s")
    if url is None or url == ss.get(TOKEN):
        return
    store = _store()
    student = None
    if store is not None and is_token(url):
        try:
            student = store.student(url)
        except StorageError as err:
            ss[_BROKEN] = err
            return
    if store is None:
        return
    forget_session_progress()
    ss.pop(TOKEN, None)
    if student is None:
        ss[NOTICE] = ("warning", "progress.bad_link" if not is_token(url) else "progress.unknown_link", {})
        del st.query_params["s"]
        return
    ss[TOKEN] = url
    load(store, url)


def load(store, tok: str) -> None:
    """Put the student's stored progress where the pages read it."""
    ss = st.session_state
    _load_quiz(store.quiz_answers(tok))
    ss["answers"] = store.drafts(tok)  # the worksheet page seeds its (absent) widgets from here
    ss["tasks.checked"] = {tid: g.passed for tid, g in store.gradings(tok).items()}
    moments = load_moments()
    ss["predictions"] = {}
    for mid, p in store.predictions(tok).items():
        value = _prediction_value(moments.get(mid), p.value)
        if value is not None:
            ss["predictions"][mid] = asdict(Prediction(mid, value, p.at.timestamp()))
    ss["progress.milestones"] = store.milestones(tok)


def _load_quiz(answers) -> None:
    """Replay the stored tries through a fresh Attempt: the grades (and their explanations) come back as given."""
    ss = st.session_state
    questions = {q.id: q for q in load_quiz(lang())}
    seed = ss.get("quiz.seed", 0)
    attempt, measured = Attempt(seed), {}
    for a in sorted(answers, key=lambda a: a.try_no):
        q = questions.get(a.question_id)
        if q is None:
            continue
        raw, m = (a.answer.get("answer"), a.answer.get("measured")) if q.type == "numeric" else (a.answer, None)
        if m is not None:
            measured[q.id] = m
        attempt.submit(q, raw, m)
        key = f"quiz.q.{q.id}" + (".2" if a.try_no > 1 else "")
        if q.type == "multiple":
            for i in range(len(q.options)):
                ss[f"{key}.{i}"] = i in (raw or [])
        else:
            ss[key] = raw
    order = [q.id for q in quiz_order(list(questions.values()), seed)]
    ss["quiz.order"], ss["quiz.attempt"], ss["quiz.measured"], ss["quiz.hints"] = order, attempt, measured, set()
    ss["quiz.index"] = next((i for i, qid in enumerate(order) if not attempt.done(qid)), 0)


def _prediction_value(moment, stored: float):
    """Number predictions are stored as they are; a choice as its index in the moment's choices."""
    if moment is None or not moment.predict:
        return None
    if moment.predict.get("kind") == "number":
        return stored
    choices = moment.predict.get("choices", [])
    return choices[int(stored)] if 0 <= int(stored) < len(choices) else None


# -- writing through -------------------------------------------------------------------------------------------

def quiz_answer(question, answer, measured: float | None, attempt: Attempt) -> None:
    if question.id not in attempt.results:  # not graded (a numeric question without a run): nothing to keep
        return
    stored = {"answer": answer, "measured": measured} if question.type == "numeric" else answer
    tok = token()
    if tok:
        call("record_answer", tok, question.id, stored, attempt.tries[question.id],
              attempt.results[question.id].correct)


def quiz_restarted() -> None:
    if token(create=False):
        call("clear_quiz", token(create=False))


def draft(task_id: str, field_id: str, text: str) -> None:
    tok = token()
    if tok:
        call("save_draft", tok, task_id, field_id, text)


def grading(task, feedback) -> None:
    criteria = {f"{fid}.{c.id}": c.met for fid, fb in feedback.fields.items() for c in fb.criteria}
    tok = token()
    if tok:
        call("record_grading", tok, task.id, feedback.passed, criteria)
        if task.milestone and feedback.passed:
            milestone(f"task:{task.id}")


def prediction(moment, made: Prediction) -> None:
    value = made.value if isinstance(made.value, (int, float)) else moment.predict["choices"].index(made.value)
    tok = token()
    if tok:
        call("record_prediction", tok, moment.id, value)


def measured(moment_id: str, value) -> None:
    tok = token(create=False)
    ss = st.session_state
    if tok and moment_id in ss.get("predictions", {}) and ss.get(f"progress.measured.{moment_id}") != value:
        ss[f"progress.measured.{moment_id}"] = value
        moment = load_moments()[moment_id]
        number = value if isinstance(value, (int, float)) else moment.predict["choices"].index(value)
        call("set_measured", tok, moment_id, number)


def milestone(milestone_id: str) -> None:
    """Kept in the session at once; stored now if the student has a token, else when the token is made."""
    reached = st.session_state.setdefault("progress.milestones", set())
    if milestone_id in reached:
        return
    reached.add(milestone_id)
    tok = token(create=False)
    if tok:
        call("reach_milestone", tok, milestone_id)


# -- what the student sees ------------------------------------------------------------------------------------------

def link(tok: str) -> str:
    """The address that brings this student back (the Home page, in the current language)."""
    url = st.context.url or ""
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}/" if parts.scheme and parts.netloc else "/"
    return f"{base}?s={tok}&lang={lang()}"


def notices() -> None:
    """Above the page: a message left by the last action, and the warning when nothing can be saved."""
    ss = st.session_state
    if not ss.get("progress.probed"):  # once a session: say at once when nothing can be saved
        ss["progress.probed"] = True
        _store()
    if ss.get(_BROKEN) is not None:
        st.warning(t("progress.unavailable", reason=error_text(ss[_BROKEN])), icon="⚠️")
    notice = ss.pop(NOTICE, None)
    if notice:
        kind, key, params = notice
        text = error_text(StorageError(key.removeprefix("classroom.error."), **params)) \
            if key.startswith("classroom.error.") else t(key)
        (st.error if kind == "error" else st.warning)(text)


def sidebar_line() -> None:
    """The sidebar: where progress goes (the link once there is one), or why it is not saved."""
    sb, tok = st.sidebar, token(create=False)
    if st.session_state.get(_BROKEN) is not None:
        sb.caption(f"⚠️ {t('progress.not_saved')}")
    elif tok:
        sb.caption(f"💾 {t('progress.your_link')}")
        sb.code(link(tok), language=None)
