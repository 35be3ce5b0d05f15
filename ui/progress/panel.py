"""The Home page's progress panel: an optional name and class code, the bookmark link, start over, and the
progress export (the worksheet Markdown plus the quiz's tries and the predictions) with its import."""
from __future__ import annotations

import json
from dataclasses import asdict

import streamlit as st

from classroom import StorageError
from classroom.checks import class_code as checked_class_code, name as checked_name
from lessons import load_moments, load_quiz, load_tasks
from lessons.answers_markdown import answers_from_markdown, answers_to_markdown
from lessons.predictions import Prediction
from ui.progress import keys, quiz_state, unsaved, worksheet_state
from ui.progress.saved import link, prediction, quiz_answer, started_over, token, with_store
from ui.shell.i18n import lang, t

QUIZ_SECTION, PRED_SECTION = "quiz-answers", "predictions"  # extra sections of the Markdown export


def export_markdown() -> str:
    """The worksheet export, plus the quiz's tries and the predictions as two more sections it reads back."""
    ss = st.session_state
    sections = dict(ss.get(keys.ANSWERS, {}))
    attempt = ss.get(keys.QUIZ_ATTEMPT)
    tok = token(create=False)
    stored = with_store(lambda store: store.quiz_answers(tok)) if tok else None
    if stored:
        tries: dict[str, list] = {}
        for a in sorted(stored, key=lambda a: a.try_no):
            tries.setdefault(a.question_id, []).append(a.answer)
        sections[QUIZ_SECTION] = {qid: json.dumps(v, ensure_ascii=False) for qid, v in tries.items()}
    elif attempt is not None and attempt.results:
        sections[QUIZ_SECTION] = {}
    preds = ss.get(keys.PREDICTIONS, {})
    if preds:
        sections[PRED_SECTION] = {mid: json.dumps(p["value"], ensure_ascii=False) for mid, p in preds.items()}
    return answers_to_markdown(sections, lang())


def import_markdown(text: str) -> int:
    """Worksheet answers, quiz tries (graded again here, never taken on trust) and predictions from an export.
    Returns how many entries were taken; raises ValueError for a file that is not an export."""
    loaded = answers_from_markdown(text)
    ss = st.session_state
    n = worksheet_state.take(loaded, load_tasks(lang()))
    questions = {q.id: q for q in load_quiz(lang())}
    attempt = ss.get(keys.QUIZ_ATTEMPT) or quiz_state.begin(questions)
    for qid, raw in loaded.get(QUIZ_SECTION, {}).items():
        q = questions.get(qid)
        tries = _json(raw)
        if q is None or not isinstance(tries, list) or attempt.tries.get(qid):
            continue
        for answer in tries[:2]:
            m = answer.get("measured") if q.type == "numeric" and isinstance(answer, dict) else None
            raw_answer = answer.get("answer") if q.type == "numeric" and isinstance(answer, dict) else answer
            if attempt.done(qid) or attempt.submit(q, raw_answer, m) in ("unmeasured", "incomplete"):
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
        ss.setdefault(keys.PREDICTIONS, {})[mid] = asdict(made)
        prediction(moment, made)
        n += 1
    return n


def _json(raw: str):
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _start_over() -> None:
    if started_over():
        st.session_state[keys.NOTICE] = ("warning", "progress.started_over", {})


def _save_profile(name_key: str, class_key: str) -> None:
    ss = st.session_state
    try:  # refused here, before it waits in the outbox: a name that can never be saved is said at once
        name, code = checked_name(ss.get(name_key, "")), checked_class_code(ss.get(class_key, ""))
    except StorageError as err:
        ss[keys.NOTICE] = ("error", f"classroom.error.{err.code}", err.params)
        return
    tok = token(create=False)
    if tok:
        unsaved.send("update_student", tok, name, code)
    else:
        unsaved.new_student(name, code)


def panel() -> None:
    """Home: an optional name and class code; then the bookmark link, start over, export and import."""
    ss = st.session_state
    tok = token(create=False)
    student = with_store(lambda store: store.student(tok)) if tok else None
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
            if upload is not None and ss.get(keys.IMPORTED) != upload.file_id:
                ss[keys.IMPORTED] = upload.file_id
                try:
                    st.success(t("progress.imported", n=import_markdown(upload.getvalue().decode("utf-8",
                                                                                                  "replace"))))
                except ValueError as err:
                    st.error(t("tasks.import_error", msg=str(err)))
