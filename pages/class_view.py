"""Instructor: one class's quiz answers, worksheets, predictions and live poll, and its explanations to mark,
behind the passcode."""
import streamlit as st

from ui.instructor import class_view, passcode, review
from ui.instructor.access import keep_cookie, store, unlocked
from ui.practice import challenge_grade, challenge_targets, tournament
from ui.shell.i18n import t

st.title(t("cv.title"))
if passcode.configured() is None:
    st.warning(t("cv.no_passcode"), icon="🔒")
elif not unlocked():
    class_view.passcode_form()
else:
    code, show_names = class_view.controls()
    db = store(warn=True) if code else None
    if not code:
        st.info(t("cv.pick_class"))
    elif db is not None:
        st.fragment(class_view.live, run_every=class_view.REFRESH_S)(db, code, show_names)
        review.explanations(db, code, show_names)
        st.subheader(t("ch.board.instructor_title"))
        challenge_targets.form(db, code)
        challenge_grade.instructor_board(db, code)
        tournament.show(db, code)
    keep_cookie()  # last: the script element it may draw adds no gap between the views
