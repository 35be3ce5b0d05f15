"""Live polls: the instructor opens a lecture moment's prediction question to the class, students on that
class code answer from whatever page they are on, and "close and run" reveals the measured value to all.

Both sides poll the store (a fragment every POLL_S seconds): sessions never talk to each other directly,
so several app processes behind one database work the same. The measured value is published by the server
(ui.instructor.poll_job), not by the instructor's session: the room gets it even if that tab is closed."""
from __future__ import annotations

from datetime import datetime, timezone

import streamlit as st

from classroom import StorageError
from lessons import load_moments, parse_number, predictions
from ui.instructor import poll_job
from ui.instructor.access import instructor_class, message, store, student, unlocked
from ui.labs.experiments import moment_runs
from ui.progress import keys, unsaved
from ui.shell.i18n import lang, t
from viz.classroom import answer_bars, prediction_histogram

POLL_S = 2
SHOW_RESULT_FOR_S = 30 * 60  # a closed poll's result stays on a student's screen this long (or until dismissed)
ss = st.session_state


def pollable(moment) -> bool:
    return bool(moment.predict) and moment.predict.get("kind") in ("number", "choice")


def _choice(moment) -> bool:
    return moment is not None and moment.predict.get("kind") == "choice"


def choice_names(moment) -> dict[str, str]:
    """A choice question's choices and their names in the user's language, in the question's order."""
    return {c: t(predictions.choice_key(moment, c)) for c in moment.predict["choices"]}


def histogram_labels(moment_id: str) -> dict:
    """The prediction histogram's words, its numbers in the moment's unit ("measured 2.31×")."""
    moment = load_moments().get(moment_id)
    unit = predictions.unit(moment, lang())
    return {"count": t("cv.count"), "value": t("cv.value") + (f" ({unit.strip()})" if unit else ""),
            "measured": t("cv.measured"), "none": t("cv.none_yet"),
            "figure": lambda v: predictions.shown(moment, v, lang())}


def _num(v: float | None, moment_id: str, typed: bool = False) -> str:
    """A stored answer or measured value as people read it: a number in the moment's unit, a choice by its name."""
    moment = load_moments().get(moment_id)
    if _choice(moment) and v is not None:
        picked = predictions.as_choice(moment, v)
        return choice_names(moment)[picked] if picked else "–"
    return predictions.shown(moment, v, lang(), typed)


def summary_line(values: list[float], measured: float | None, moment_id: str) -> str:
    moment = load_moments().get(moment_id)
    room, measured = _num(_room(moment, values), moment_id), _num(measured, moment_id)
    if _choice(moment):
        return t("poll.closed_line_choice", n=len(values), room=room, measured=measured)
    return t("poll.closed_line", n=len(values), median=room, measured=measured)


def _room(moment, values: list[float]) -> float | None:
    return predictions.room_answer(moment, values) if moment else None


def answers_chart(values: list[float], measured: float | None, moment_id: str, height: int = 260):
    """The class's answers: a histogram of numbers with the measured value marked, or a bar per choice (the
    measured one green once it is known)."""
    moment = load_moments().get(moment_id)
    if not _choice(moment):
        return prediction_histogram(values, measured, histogram_labels(moment_id), height=height)
    names = choice_names(moment)
    counts = dict.fromkeys(names.values(), 0)
    for v in values:
        if (picked := predictions.as_choice(moment, v)) is not None:
            counts[names[picked]] += 1
    right = None if measured is None else {_num(measured, moment_id)}
    return answer_bars(counts, right, {"count": t("cv.count")}, height=height)


# -- the instructor's side ---------------------------------------------------------------------------------

def instructor_panel(moment) -> bool:
    """Under the room's prediction question: open the poll, watch the answers come in, close and run.
    True when "close and run" was pressed (the room's median is then the room's prediction)."""
    if not pollable(moment):
        return False
    code = instructor_class()
    if code is None:
        st.caption(t("poll.locked"))
        return False
    db = store()
    if db is None:
        return False
    key = f"poll.{moment.id}"
    if (refused := ss.pop(f"{key}.refused", None)) is not None:
        st.error(message(refused))
    if ss.pop(f"{key}.ran", None) is not None:  # "close and run" was pressed: its callback closed the poll
        return True
    try:
        current = db.current_poll(code)
        if current is None or current.prompt_id != moment.id:
            if st.button(t("poll.open", code=code), key=f"{key}.open", type="primary"):
                ss[key] = db.open_poll(code, moment.id)
                st.rerun()
            return False
    except StorageError as e:
        st.error(message(e))
        return False
    ss[key] = current.id
    left, right = st.columns([1, 2])
    with right:
        st.fragment(_live_answers, run_every=POLL_S)(db, current.id, code, moment.id)
    left.button(t("poll.close_run"), key=f"{key}.close", type="primary", icon="▶️", on_click=_close_and_run,
                args=(db, current.id, moment))
    return False


def _close_and_run(db, poll_id: int, moment) -> None:
    """"Close and run", in the button's callback: it runs before the script and draws nothing, so a tab closed right
    after the press cannot cut it short (Streamlit stops a closed tab's script at the next element it draws). No
    more answers; the server starts the moment's runs and publishes their measured value (poll_job), whatever
    becomes of this session; the room's median is the room's prediction, and the page runs the moment (the same
    shared runs: computed once)."""
    key = f"poll.{moment.id}"
    try:
        db.close_poll(poll_id)
        values = db.poll_values(poll_id)
    except StorageError as e:
        ss[f"{key}.refused"] = e
        return
    poll_job.start(db, poll_id, moment, moment_runs(moment))
    if values:
        room = predictions.room_answer(moment, values)
        predictions.record(ss.setdefault(keys.PREDICTIONS, {}), moment,
                           predictions.as_choice(moment, room) if _choice(moment) else room, by_room=True)
    ss[key], ss[f"{key}.ran"] = poll_id, True


def _live_answers(db, poll_id: int, code: str, moment_id: str) -> None:
    try:
        values = db.poll_values(poll_id)
    except StorageError as e:
        st.error(message(e))
        return
    with st.container(key="poll-live"):
        st.markdown(t("poll.live", code=code, n=len(values)))
        st.plotly_chart(answers_chart(values, None, moment_id, height=220), key="poll.live.chart",
                        config={"displayModeBar": False})


def reveal(moment_id: str, measured) -> None:
    """After the moment's runs: the poll this session closed for it, the class's answers against the measured
    value. The server publishes that value to the students (poll_job, from the same runs); this only shows it."""
    poll_id = ss.get(f"poll.{moment_id}")
    moment = load_moments().get(moment_id)
    measured = predictions.as_number(moment, measured) if moment else None
    if poll_id is None or measured is None:
        return
    db = store()
    if db is None:
        return
    code = instructor_class()
    try:
        values = db.poll_values(poll_id)
        latest = db.latest_poll(code) if code else None
    except StorageError as e:
        st.error(message(e))
        return
    with st.container(border=True, key="poll-reveal"):
        if latest is not None and latest.id == poll_id and latest.state == "failed":  # the students got no value
            st.error(t("poll.failed_room"))
        st.markdown(summary_line(values, float(measured), moment_id))
        st.plotly_chart(answers_chart(values, float(measured), moment_id, height=220), key=f"poll.reveal.{poll_id}",
                        config={"displayModeBar": False})


# -- the students' side ------------------------------------------------------------------------------------

def student_banner() -> None:
    """On every page of a student with a class code: the class's open poll, or the result of the last one."""
    if unlocked():
        return  # the instructor's own screen shows the poll beside the moment
    token, code = student()
    if not token or not code:
        return
    db = store()
    if db is not None:
        st.fragment(_banner, run_every=POLL_S)(db, token, code)


def _question(prompt_id: str) -> str:
    moment = load_moments().get(prompt_id)
    return moment.predict.get(lang(), prompt_id) if moment and moment.predict else prompt_id


def _banner(db, token: str, code: str) -> None:
    try:
        poll = db.latest_poll(code)
    except StorageError:
        return  # the database is unavailable: the progress panel says so
    if poll is None:
        return
    mine, dismissed = ss.setdefault("poll.mine", {}), ss.setdefault("poll.dismissed", set())
    if poll.state == "open":
        with st.container(border=True, key="poll-banner"):
            _answer_form(db, token, poll)
        return
    age = (datetime.now(timezone.utc) - poll.opened_at).total_seconds()
    if poll.id in dismissed or (poll.id not in mine and age > SHOW_RESULT_FOR_S):
        return
    with st.container(border=True, key="poll-banner"):
        if poll.state == "failed":
            st.markdown(t("poll.failed"))
            return
        if poll.measured is None:
            st.markdown(t("poll.waiting"))
            return
        try:
            values = db.poll_values(poll.id)
            if poll.id in mine and ss.get("poll.measured_saved") != poll.id:
                db.set_measured(token, poll.prompt_id, poll.measured)
                ss["poll.measured_saved"] = poll.id
        except StorageError:
            values = []
        c = st.columns([6, 1], vertical_alignment="center")
        pid = poll.prompt_id
        moment = load_moments().get(pid)
        room = _num(_room(moment, values), pid)
        said = {"question": _question(pid), "measured": _num(poll.measured, pid), "n": len(values),
                "mine": _num(mine[poll.id], pid, typed=True) if poll.id in mine else t("poll.no_answer")}
        c[0].markdown(t("poll.result_choice", room=room, **said) if _choice(moment) else
                      t("poll.result", median=room, **said))
        c[1].button(t("poll.dismiss"), key=f"poll.dismiss.{poll.id}", on_click=dismissed.add, args=(poll.id,))


def _answer_form(db, token: str, poll) -> None:
    mine = ss["poll.mine"]
    st.markdown(t("poll.banner", question=_question(poll.prompt_id)))
    moment = load_moments().get(poll.prompt_id)
    with st.form(f"poll.form.{poll.id}", border=False):
        c = st.columns([3, 1], vertical_alignment="bottom")
        if _choice(moment):
            names = choice_names(moment)
            picked = c[0].radio(t("poll.answer_choice"), list(names), key=f"poll.answer.{poll.id}", index=None,
                                format_func=names.get, horizontal=True)
            value = None if picked is None else predictions.as_number(moment, picked)
        else:
            value = parse_number(c[0].text_input(t("poll.answer"), key=f"poll.answer.{poll.id}"))
        sent = c[1].form_submit_button(t("poll.send"), type="primary")
    if sent:
        if value is None:
            st.error(t("pred.pick" if _choice(moment) else "pred.not_number"))
        else:
            try:
                db.answer_poll(poll.id, token, value)
                unsaved.send("record_prediction", token, poll.prompt_id, value)  # the student's own: kept
                mine[poll.id] = value
            except StorageError as e:
                st.error(t("poll.refused", reason=message(e)))
    if poll.id in mine:
        st.caption(t("poll.sent", value=_num(mine[poll.id], poll.prompt_id, typed=True)))
