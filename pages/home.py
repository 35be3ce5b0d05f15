"""Home: what the lab is, how to use it, and every lecture moment one click away."""
import streamlit as st

from lessons import page_slugs as slugs
from ui.shell import nav
from ui.instructor import moments
from ui.progress import panel as progress_panel
from ui.shell.i18n import t

st.title(t("home.title"))
st.markdown(t("home.intro"))
c = st.columns([2, 2, 2, 4])
if c[0].button(t("home.start"), type="primary", key="home.start"):
    nav.go(slugs.lesson_page("overview"))
if c[1].button(t("home.tasks"), key="home.tasks"):
    nav.go(slugs.TASKS)
if c[2].button(t("home.quiz"), key="home.quiz"):
    nav.go(slugs.QUIZ)
progress_panel.panel()
st.subheader(t("home.moments"))
cols = st.columns(3)
for i, p in enumerate(moments.all_moments().values()):
    with cols[i % 3].container(border=True):
        st.markdown(f"**🎓 {moments.title(p.id)}** · {moments.page_title(p.page)}")
        st.caption(moments.narration_text(p.id))
        if st.button(t("home.open"), key=f"home.open.{p.id}"):
            moments.open_moment(p.id)
