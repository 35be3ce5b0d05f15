"""Practice: the policy challenge. Write a priority key, run it beside FCFS, submit it to the class leaderboard."""
import streamlit as st

from ui.practice import challenge
from ui.shell.i18n import t

st.title(t("ch.title"))
st.markdown(t("ch.intro"))
challenge.page()
