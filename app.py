"""Serving Lab: navigation, the language switch and the shared sidebar; every page runs inside this frame."""
import streamlit as st

from ui import nav, sidebar, style

st.set_page_config(page_title="Serving Lab", page_icon="🧪", layout="wide")
sidebar.language_switch()  # first: page titles in the navigation are translated
page = nav.navigation()
sidebar.render()
style.apply()
page.run()
