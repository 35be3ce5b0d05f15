"""Students come back: their progress lives in the classroom store under a random token, and the token lives in
the URL (`?s=…`, kept across page switches by ui.url_state like `lang`). A run that brings a token the session
does not hold loads that student's quiz attempt, worksheet answers, predictions and milestones into session
state; every submit, draft, prediction and milestone is written through as it happens.

No token is made until there is something to keep (the first answer), or the student asks on the Home page.
When the database cannot be opened or written, the lab runs on with a visible warning (nothing is saved)."""
from __future__ import annotations

import json
from dataclasses import asdict
from urllib.parse import urlsplit

import streamlit as st

from classroom import StorageError, get_store, is_token
from lessons import answers_from_markdown, answers_to_markdown, load_moments, load_quiz, load_tasks
from lessons.attempt import Attempt
from lessons.grading import quiz_order
from lessons.predictions import Prediction
from ui.i18n import lang, t

TOKEN = "progress.token"
_NOTICE = "progress.notice"  # (kind, strings key, params): shown once, at the top of the next page drawn
_BROKEN = "progress.unavailable"
QUIZ_SECTION, PRED_SECTION = "quiz-answers", "predictions"  # extra sections of the Markdown export


def _store():
    """The store, or None with a warning for this session when the database cannot be used."""
    try:
        return get_store()
    except StorageError as err:
        st.session_state[_BROKEN] = err
        return None


def _call(method: str, *args):
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
            st.session_state[_NOTICE] = ("error", f"classroom.error.{err.code}", err.params)
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
    new = _call("new_student", "", "")
    if new:
        _adopt(new)
    return new


def _adopt(new: str) -> None:
    """A new token for this session: into the URL, and the milestones reached before it was made into the store."""
    ss = st.session_state
    ss[TOKEN] = new
    st.query_params["s"] = new
    for mid in ss.get("progress.milestones", set()):
        _call("reach_milestone", new, mid)


# -- loading a student's progress into the session ----------------------------------------------------------

_SESSION_PREFIXES = ("quiz.", "task.", "tasks.feedback.", "pred.", "progress.measured.")
_SESSION_KEYS = ("answers", "tasks.checked", "predictions", "progress.milestones")


def _forget_session_progress() -> None:
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
    _forget_session_progress()
    ss.pop(TOKEN, None)
    if student is None:
        ss[_NOTICE] = ("warning", "progress.bad_link" if not is_token(url) else "progress.unknown_link", {})
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
        _call("record_answer", tok, question.id, stored, attempt.tries[question.id],
              attempt.results[question.id].correct)


def quiz_restarted() -> None:
    if token(create=False):
        _call("clear_quiz", token(create=False))


def draft(task_id: str, field_id: str, text: str) -> None:
    tok = token()
    if tok:
        _call("save_draft", tok, task_id, field_id, text)


def grading(task, feedback) -> None:
    criteria = {f"{fid}.{c.id}": c.met for fid, fb in feedback.fields.items() for c in fb.criteria}
    tok = token()
    if tok:
        _call("record_grading", tok, task.id, feedback.passed, criteria)
        if task.milestone and feedback.passed:
            milestone(f"task:{task.id}")


def prediction(moment, made: Prediction) -> None:
    value = made.value if isinstance(made.value, (int, float)) else moment.predict["choices"].index(made.value)
    tok = token()
    if tok:
        _call("record_prediction", tok, moment.id, value)


def measured(moment_id: str, value) -> None:
    tok = token(create=False)
    ss = st.session_state
    if tok and moment_id in ss.get("predictions", {}) and ss.get(f"progress.measured.{moment_id}") != value:
        ss[f"progress.measured.{moment_id}"] = value
        moment = load_moments()[moment_id]
        number = value if isinstance(value, (int, float)) else moment.predict["choices"].index(value)
        _call("set_measured", tok, moment_id, number)


def milestone(milestone_id: str) -> None:
    """Kept in the session at once; stored now if the student has a token, else when the token is made."""
    reached = st.session_state.setdefault("progress.milestones", set())
    if milestone_id in reached:
        return
    reached.add(milestone_id)
    tok = token(create=False)
    if tok:
        _call("reach_milestone", tok, milestone_id)


# -- export / import ---------------------------------------------------------------------------------------------

def export_markdown() -> str:
    """The worksheet export, plus the quiz's tries and the predictions as two more sections it reads back."""
    ss = st.session_state
    sections = dict(ss.get("answers", {}))
    attempt = ss.get("quiz.attempt")
    tok = token(create=False)
    stored = _call("quiz_answers", tok) if tok else None
    if stored:
        tries: dict[str, list] = {}
        for a in sorted(stored, key=lambda a: a.try_no):
            tries.setdefault(a.question_id, []).append(a.answer)
        sections[QUIZ_SECTION] = {qid: json.dumps(v, ensure_ascii=False) for qid, v in tries.items()}
    elif attempt is not None and attempt.results:
        sections[QUIZ_SECTION] = {}
    preds = ss.get("predictions", {})
    if preds:
        sections[PRED_SECTION] = {mid: json.dumps(p["value"], ensure_ascii=False) for mid, p in preds.items()}
    return answers_to_markdown(sections, lang())


def import_markdown(text: str) -> int:
    """Worksheet answers, quiz tries (graded again here, never taken on trust) and predictions from an export.
    Returns how many entries were taken; raises ValueError for a file that is not an export."""
    loaded = answers_from_markdown(text)
    ss = st.session_state
    known = {task.id: {f.id for f in task.fields} for task in load_tasks(lang())}
    n = 0
    for tid, fields in loaded.items():
        for fid, value in fields.items():
            if fid in known.get(tid, ()):
                ss.setdefault("answers", {}).setdefault(tid, {})[fid] = ss[f"task.{tid}.{fid}"] = value
                draft(tid, fid, value)
                n += 1
    questions = {q.id: q for q in load_quiz(lang())}
    attempt = ss.get("quiz.attempt")
    if attempt is None:
        attempt = ss["quiz.attempt"] = Attempt(ss.get("quiz.seed", 0))
        ss["quiz.order"] = [q.id for q in quiz_order(list(questions.values()), attempt.seed)]
        ss["quiz.measured"], ss["quiz.index"], ss["quiz.hints"] = {}, 0, set()
    for qid, raw in loaded.get(QUIZ_SECTION, {}).items():
        q = questions.get(qid)
        tries = _json(raw)
        if q is None or not isinstance(tries, list) or attempt.tries.get(qid):
            continue
        for answer in tries[:2]:
            m = answer.get("measured") if q.type == "numeric" and isinstance(answer, dict) else None
            raw_answer = answer.get("answer") if q.type == "numeric" and isinstance(answer, dict) else answer
            if attempt.done(qid) or attempt.submit(q, raw_answer, m) == "unmeasured":
                break
            quiz_answer(q, raw_answer, m, attempt)
        n += 1
    moments = load_moments()
    for mid, raw in loaded.get(PRED_SECTION, {}).items():
        value, moment = _json(raw), moments.get(mid)
        if moment is None or not moment.predict or isinstance(value, bool) or value is None:
            continue
        if (moment.predict["kind"] == "number") != isinstance(value, (int, float)):
            continue
        if moment.predict["kind"] != "number" and value not in moment.predict.get("choices", ()):
            continue
        made = Prediction(mid, value, 0.0)
        ss.setdefault("predictions", {})[mid] = asdict(made)
        prediction(moment, made)
        n += 1
    return n


def _json(raw: str):
    try:
        return json.loads(raw)
    except ValueError:
        return None


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
    notice = ss.pop(_NOTICE, None)
    if notice:
        kind, key, params = notice
        text = error_text(StorageError(key.removeprefix("classroom.error."), **params)) \
            if key.startswith("classroom.error.") else t(key)
        (st.error if kind == "error" else st.warning)(text)


def _start_over() -> None:
    tok = token(create=False)
    if tok:
        _call("start_over", tok)
    _forget_session_progress()
    st.session_state[_NOTICE] = ("warning", "progress.started_over", {})


def _save_profile(name_key: str, class_key: str) -> None:
    ss = st.session_state
    name, code = ss.get(name_key, ""), ss.get(class_key, "")
    tok = token(create=False)
    if tok:
        _call("update_student", tok, name, code)
        return
    new = _call("new_student", name, code)
    if new:
        _adopt(new)


def panel() -> None:
    """Home: an optional name and class code; then the bookmark link, start over, export and import."""
    ss = st.session_state
    tok = token(create=False)
    student = _call("student", tok) if tok else None
    with st.container(border=True, key="progress-panel"):
        st.markdown(f"**💾 {t('progress.title')}**")
        if student:
            st.markdown(t("progress.your_link"))
            st.code(link(tok), language=None)
            who = ", ".join(x for x in (student.name, student.class_code and t("progress.in_class",
                                                                               code=student.class_code)) if x)
            if who:
                st.caption(who)
        else:
            st.caption(t("progress.intro"))
        with st.form("progress.profile", border=False):
            c = st.columns([2, 2, 1.4], vertical_alignment="bottom")
            c[0].text_input(t("progress.name"), value=student.name if student else "", key="progress.name",
                            max_chars=80)
            c[1].text_input(t("progress.class_code"), value=student.class_code if student else "",
                            key="progress.class_code", max_chars=40)
            c[2].form_submit_button(t("progress.save") if student else t("progress.start"),
                                    on_click=_save_profile, args=("progress.name", "progress.class_code"))
        if not tok:
            return
        c = st.columns(3)
        c[0].download_button(t("progress.export"), export_markdown, "serving-lab-progress.md", "text/markdown",
                             key="progress.export", on_click="ignore")
        with c[1].popover(t("progress.start_over")):
            st.warning(t("progress.start_over_warn"))
            st.button(t("progress.start_over_confirm"), key="progress.start_over", on_click=_start_over,
                      type="primary")
        with c[2].popover(t("progress.import")):
            upload = st.file_uploader(t("progress.import"), type=["md", "txt"], key="progress.import",
                                      label_visibility="collapsed")
            if upload is not None and ss.get("progress.imported") != upload.file_id:
                ss["progress.imported"] = upload.file_id
                try:
                    st.success(t("progress.imported", n=import_markdown(upload.getvalue().decode("utf-8",
                                                                                                  "replace"))))
                except ValueError as err:
                    st.error(t("tasks.import_error", msg=str(err)))


def sidebar_line() -> None:
    """The sidebar: where progress goes (the link once there is one), or why it is not saved."""
    sb, tok = st.sidebar, token(create=False)
    if st.session_state.get(_BROKEN) is not None:
        sb.caption(f"⚠️ {t('progress.not_saved')}")
    elif tok:
        sb.caption(f"💾 {t('progress.your_link')}")
        sb.code(link(tok), language=None)
