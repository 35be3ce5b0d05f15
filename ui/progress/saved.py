"""Students come back: their progress lives in the classroom store under a random token, and the token lives in
the URL (`?s=…`, kept across page switches by ui.shell.url_state like `lang`). A run that brings a token the session
does not hold loads that student's quiz attempt, worksheet answers, predictions and milestones into session
state; every submit, draft, prediction and milestone is written through as it happens, by way of the session's
outbox (ui/progress/unsaved.py): a write the database cannot take now waits in the session and is retried.

No token is made until there is something to keep (the first answer), or the student asks on the Home page.
When the database cannot be opened or written, the lab runs on with a visible warning: what waits to be saved,
and that it is being retried; once it all went through, a brief "saved"."""
from __future__ import annotations

from dataclasses import asdict
from typing import Callable, TypeVar
from urllib.parse import urlsplit

import streamlit as st

from classroom import StorageError, Store, get_store, is_token
from classroom.outbox import Progress, progress_ops
from lessons import load_moments, load_quiz
from lessons.attempt import Attempt
from lessons import predictions
from lessons.predictions import Prediction
from ui.progress import keys, quiz_state, unsaved
from ui.progress.unsaved import send
from ui.progress.keys import NOTICE, TOKEN, UNAVAILABLE
from ui.shell.i18n import lang, t

T = TypeVar("T")


def _store():
    """The store, or None with a warning for this session when the database cannot be used."""
    try:
        return get_store()
    except StorageError as err:
        st.session_state[UNAVAILABLE] = err
        return None


def with_store(action: Callable[[Store], T]) -> T | None:
    """`action(store)` for this student; a refusal becomes a message on the page, never a traceback."""
    store = _store()
    if store is None:
        return None
    try:
        done = action(store)
    except StorageError as err:
        if err.code == "unavailable":
            st.session_state[UNAVAILABLE] = err
        else:
            st.session_state[NOTICE] = ("error", f"classroom.error.{err.code}", err.params)
        return None
    if not unsaved.pending():  # the database answered: its warning goes (unless writes still wait)
        st.session_state.pop(UNAVAILABLE, None)
    return done


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
    return unsaved.new_student()


def attempts() -> tuple[int | None, int | None]:
    """The attempt and the quiz attempt this session's writes go into (set when the student is loaded or made;
    read from the store should the session not hold them). None while neither can say: a write then goes into
    the student's current attempt, never a guessed one."""
    ss = st.session_state
    if ss.get(keys.ATTEMPT_NO) is None or ss.get(keys.QUIZ_ATTEMPT_NO) is None:
        tok = token(create=False)
        me = with_store(lambda store: store.student(tok)) if tok else None
        if me is None:
            return None, None
        ss[keys.ATTEMPT_NO], ss[keys.QUIZ_ATTEMPT_NO] = me.attempt, me.quiz_attempt
    return ss[keys.ATTEMPT_NO], ss[keys.QUIZ_ATTEMPT_NO]


def _cannot_open_attempt() -> None:
    """A new attempt is opened by its number; while the store cannot say which is next, the page says so."""
    st.session_state[NOTICE] = ("error", "progress.attempt_unknown", {})


# -- loading a student's progress into the session ----------------------------------------------------------

_SESSION_PREFIXES = (keys.QUIZ_PREFIX, keys.TASK_PREFIX, keys.SELF_ASSESS_PREFIX, keys.PREDICTION_WIDGET_PREFIX,
                     keys.MEASURED_PREFIX)
_SESSION_KEYS = (keys.ANSWERS, keys.SUBMITTED, keys.RECORDED, keys.SELF_ASSESSED, keys.MARKS,
                 keys.EVIDENCE_VERDICTS, keys.PREDICTIONS, keys.MILESTONES)


def forget_session_progress() -> None:
    ss = st.session_state
    for key in [k for k in ss if str(k).startswith(_SESSION_PREFIXES) and k != keys.QUIZ_SEED]:
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
            ss[UNAVAILABLE] = err
            return
    if store is None:
        return
    unsaved.flush()  # another student's link: what the last one did goes out first, if it can
    ss.pop(keys.OUTBOX, None)
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
    saved = Progress.read(store, tok)
    ss[keys.ATTEMPT_NO], ss[keys.QUIZ_ATTEMPT_NO] = saved.student.attempt, saved.student.quiz_attempt
    _load_quiz(saved.answers)
    ss[keys.ANSWERS] = saved.drafts  # the worksheet page seeds its (absent) widgets from here
    ss[keys.SUBMITTED] = set(saved.gradings)  # tasks submitted before: their rubric shows again
    ss[keys.SELF_ASSESSED] = saved.assessed
    ss[keys.MARKS] = store.marks(tok)
    moments = load_moments()
    ss[keys.PREDICTIONS] = {}
    for mid, p in saved.predictions.items():
        value = _prediction_value(moments.get(mid), p.value)
        if value is not None:
            ss[keys.PREDICTIONS][mid] = asdict(Prediction(mid, value, p.at.timestamp()))
    ss[keys.MILESTONES] = saved.milestones
    # the same progress as writes: should the database lose it, the session writes it again
    unsaved.loaded(store, progress_ops(saved))


def _load_quiz(answers) -> None:
    """Replay the stored tries through a fresh Attempt: the grades (and their explanations) come back as given."""
    ss = st.session_state
    questions = {q.id: q for q in load_quiz(lang())}
    attempt, measured, predicted = Attempt(ss.get(keys.QUIZ_SEED, 0)), {}, {}
    for a in sorted(answers, key=lambda a: a.try_no):
        q = questions.get(a.question_id)
        if q is None:
            continue
        numeric = q.type == "numeric" and isinstance(a.answer, dict)
        raw, m = (a.answer.get("answer"), a.answer.get("measured")) if numeric else (a.answer, None)
        if m is not None:
            measured[q.id] = m
        if attempt.submit(q, raw, m) in ("incomplete", "unmeasured"):  # stored before the question changed
            continue
        key = keys.quiz_widget(q.id, second_try=a.try_no > 1)
        if q.type == "multiple":
            for i in range(len(q.options)):
                ss[f"{key}.{i}"] = i in (raw or [])
        elif q.type == "two_tier":
            ss[f"{key}.a"], ss[f"{key}.r"] = (raw.get("answer"), raw.get("reason")) if isinstance(raw, dict) else raw
        else:
            ss[key] = raw
        if q.predict:
            predicted[q.id] = raw
    quiz_state.begin(questions, attempt, measured, at_first_unanswered=True, predicted=predicted)


def _prediction_value(moment, stored: float):
    """Number predictions are stored as they are; a choice as its index in the moment's choices."""
    if moment is None or not moment.predict:
        return None
    return stored if moment.predict.get("kind") == "number" else predictions.as_choice(moment, stored)


# -- writing through -------------------------------------------------------------------------------------------

def quiz_answer(question, answer, measured: float | None, attempt: Attempt) -> None:
    if question.id not in attempt.results:  # not graded (a numeric question without a run): nothing to keep
        return
    stored = {"answer": answer, "measured": measured} if question.type == "numeric" else answer
    tok = token()
    if tok:
        send("record_answer", tok, question.id, stored, attempt.tries[question.id],
             attempt.results[question.id].correct, attempts()[1])


def quiz_restarted() -> None:
    """A new quiz attempt: the next quiz attempt opened; the earlier one's tries stay in the store."""
    tok = token(create=False)
    if tok and attempts()[1] is None:
        _cannot_open_attempt()
    elif tok:
        quiz_n = attempts()[1] + 1
        send("clear_quiz", tok, quiz_n)
        st.session_state[keys.QUIZ_ATTEMPT_NO] = quiz_n


def started_over() -> bool:
    """A new attempt of everything (the Home page's "start over"): the next attempt and quiz attempt opened, the
    session's progress forgotten; every earlier attempt stays in the store. False (and nothing forgotten) when
    the next attempt's number cannot be known now."""
    ss = st.session_state
    tok = token(create=False)
    if tok and attempts()[0] is None:
        _cannot_open_attempt()
        return False
    if tok:
        n, quiz_n = (k + 1 for k in attempts())
        send("start_over", tok, n, quiz_n)
        ss[keys.ATTEMPT_NO], ss[keys.QUIZ_ATTEMPT_NO] = n, quiz_n
    forget_session_progress()
    return True


def draft(task_id: str, field_id: str, text: str) -> None:
    tok = token()
    if tok:
        send("save_draft", tok, task_id, field_id, text, attempts()[0])


def worksheet_status(task, status) -> None:
    """Where a task stands (lessons.worksheet_status.TaskStatus): complete or not, and each part of it."""
    parts = {"evidence": bool(status.evidence), "choices": all(status.choices.values()),
             **{f"{fid}.self_assessed": e.self_assessment == "met" for fid, e in status.explanations.items()},
             **{f"{fid}.guessed": fid in status.guessed for fid in status.choices},  # past the free try
             **({"goal_changed": status.goal_attempts > 1} if task.evidence == "goal" else {})}
    tok = token()
    if tok:
        send("record_grading", tok, task.id, status.complete, parts, attempts()[0])
    if task.milestone and status.complete:
        milestone(f"task:{task.id}")


def self_assessed(task_id: str, field_id: str, value: str) -> None:
    tok = token()
    if tok:
        send("self_assess", tok, task_id, field_id, value, attempts()[0])


def me():
    """This student's record (name, class code), or None without a token."""
    tok = token(create=False)
    return with_store(lambda store: store.student(tok)) if tok else None


def refresh_marks() -> None:
    """The instructor's marks as they stand now (the worksheet page reads them on every run: a mark given
    while the student has the page open shows at the next run)."""
    tok = token(create=False)
    found = with_store(lambda store: store.marks(tok)) if tok else None
    if found is not None:
        st.session_state[keys.MARKS] = found


def prediction(moment, made: Prediction) -> None:
    tok = token()
    if tok:
        send("record_prediction", tok, moment.id, predictions.as_number(moment, made.value), None, attempts()[0])


def measured(moment_id: str, value) -> None:
    tok = token(create=False)
    ss = st.session_state
    if tok and moment_id in ss.get(keys.PREDICTIONS, {}) and ss.get(keys.MEASURED_PREFIX + moment_id) != value:
        ss[keys.MEASURED_PREFIX + moment_id] = value
        send("set_measured", tok, moment_id, predictions.as_number(load_moments()[moment_id], value), attempts()[0])


def milestone(milestone_id: str) -> None:
    """Kept in the session at once; stored now if the student has a token, else when the token is made."""
    reached = st.session_state.setdefault(keys.MILESTONES, set())
    if milestone_id in reached:
        return
    reached.add(milestone_id)
    tok = token(create=False)
    if tok:
        send("reach_milestone", tok, milestone_id, attempts()[0])


# -- what the student sees ------------------------------------------------------------------------------------------

def link(tok: str) -> str:
    """The address that brings this student back (the Home page, in the current language)."""
    url = st.context.url or ""
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}/" if parts.scheme and parts.netloc else "/"
    return f"{base}?s={tok}&lang={lang()}"


RETRY_EVERY_S = 5  # while writes wait, the page tries them again this often by itself


def retry() -> None:
    """At the top of every run (app.py, after restore): the writes still waiting go out again, and a database
    opened anew (a deleted or replaced SQLite file) gets this session's progress."""
    unsaved.flush()
    st.session_state[keys.RETRIED] = True


def notices() -> None:
    """Above the page: a message left by the last action; while writes wait, that they are retried; the warning
    when nothing can be saved; a brief "saved" once writes that waited all went through."""
    ss = st.session_state
    if not ss.get(keys.PROBED):  # once a session: say at once when nothing can be saved
        ss[keys.PROBED] = True
        _store()
    if unsaved.pending():
        st.fragment(_retrying, run_every=RETRY_EVERY_S)()
    else:
        ss.pop(keys.RETRIED, None)
        if ss.get(UNAVAILABLE) is not None:
            st.warning(t("progress.unavailable", reason=error_text(ss[UNAVAILABLE])), icon="⚠️")
    if ss.pop(keys.SAVED_AGAIN, False):
        st.toast(t("progress.saved_again"), icon="💾")
    notice = ss.pop(NOTICE, None)
    if notice:
        kind, key, params = notice
        text = error_text(StorageError(key.removeprefix("classroom.error."), **params)) \
            if key.startswith("classroom.error.") else t(key)
        (st.error if kind == "error" else st.warning)(text)


def _retrying() -> None:
    """The warning while writes wait, run again every RETRY_EVERY_S by itself (a student who just reads is saved
    too); once nothing waits, the whole page runs again: its warnings go and "saved" shows."""
    ss = st.session_state
    if not ss.pop(keys.RETRIED, False):  # a run of this fragment alone: retry() did not run
        unsaved.flush()
    if not unsaved.pending():
        st.rerun()
    why = ss.get(UNAVAILABLE) or unsaved.outbox().error
    st.warning(t("progress.pending", n=unsaved.pending(), reason=error_text(why) if why else ""), icon="⏳")


def sidebar_line() -> None:
    """The sidebar: where progress goes (the link once there is one), or why it is not saved."""
    sb, tok = st.sidebar, token(create=False)
    if unsaved.pending():
        sb.caption(f"⏳ {t('progress.pending_short', n=unsaved.pending())}")
    elif st.session_state.get(UNAVAILABLE) is not None:
        sb.caption(f"⚠️ {t('progress.not_saved')}")
    elif tok:
        sb.caption(f"💾 {t('progress.your_link')}")
        sb.code(link(tok), language=None)
