"""Serving Lab: the entry page (navigation and the shared sidebar)."""
import streamlit as st

st.set_page_config(page_title="Serving Lab", page_icon="🧪", layout="wide")
page = st.navigation([st.Page("pages/generate.py", title="Generate", icon="✍️", default=True)])
page.run()
