"""Serving Lab: navigation, the language switch and the shared sidebar; every page runs inside this frame."""
import streamlit as st

from ui.instructor import moments, poll
from ui.labs import model_picker
from ui.progress import saved as progress
from ui.shell import nav, sidebar, style, url_state
from ui.views import lesson

st.set_page_config(page_title="Serving Lab", page_icon="🧪", layout="wide")
url_state.restore()  # ?lang= and ?instructor= first: a deep link or reload opens as it was left
progress.restore()  # ?s=: a student's saved progress
progress.retry()  # writes that could not be saved yet: again, in order
sidebar.language_switch()  # before the navigation: page titles in it are translated
page = nav.navigation(lesson.render)
model_picker.sidebar_picker()
sidebar.instructor_switch()
sidebar.motion_switch()
progress.sidebar_line()
moments.sidebar_list()
url_state.persist()
style.apply()
progress.notices()
poll.student_banner()  # a live poll of the student's class, above every page
page.run()
