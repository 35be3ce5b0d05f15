"""Instructor mode: larger type and larger figures, for a lecture hall."""
import streamlit as st

INSTRUCTOR_CSS = """
<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 19px; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1.15rem; }
[data-testid="stMetricValue"] { font-size: 2.3rem; }
h1 { font-size: 2.8rem !important; }
</style>
"""


def instructor() -> bool:
    return bool(st.session_state.get("instructor", False))


def scaled(height: int) -> int:
    return int(height * 1.35) if instructor() else height


def apply() -> None:
    if instructor():
        st.html(INSTRUCTOR_CSS)
