"""The class view's form for the policy challenge's targets: the instructor sets them for the class (the defaults
until then); the page, the submissions' scores and the leaderboard all read them from the store."""
from __future__ import annotations

import streamlit as st

from classroom import StorageError
from classroom.challenge_pace import CLASS_PER_HOUR, SUBMIT_GAP_S
from engine.lab.challenge_score import AXES, DEFAULT_TARGETS, TARGET_RANGES
from ui.progress import saved as progress
from ui.shell.i18n import t

PAGE = "challenge-targets"
LABELS = {"slo_attainment": "ch.axis.slo_attainment", "throughput_vs_fcfs": "ch.axis.throughput",
          "worst_class_slowdown": "ch.targets.worst_slowdown", "jain": "ch.axis.jain",
          "preemptions": "ch.axis.preemptions"}


def form(db, code: str) -> None:
    """Every axis's target for the class, saved together; "the defaults" puts them back."""
    try:
        current = db.challenge_targets(code)
    except StorageError as e:
        st.error(progress.error_text(e))
        return
    with st.expander(t("ch.targets.title"), expanded=False):
        st.caption(t("ch.targets.help", gap=round(SUBMIT_GAP_S / 60), per_hour=CLASS_PER_HOUR))
        with st.form(key=f"{PAGE}.{code}"):
            cols = st.columns(len(AXES))
            chosen = {}
            for col, axis in zip(cols, AXES):
                low, high = TARGET_RANGES[axis]
                chosen[axis] = col.number_input(t(LABELS[axis]), min_value=low, max_value=high,
                                                value=float(current[axis]), step=0.05 if high <= 2 else 0.5,
                                                key=f"{PAGE}.{code}.{axis}")
            c = st.columns(2)
            save = c[0].form_submit_button(t("ch.targets.save"), type="primary")
            reset = c[1].form_submit_button(t("ch.targets.defaults"))
        if save or reset:
            try:
                db.set_challenge_targets(code, dict(DEFAULT_TARGETS) if reset else chosen)
            except StorageError as e:
                st.error(progress.error_text(e))
                return
            if reset:
                for axis in AXES:
                    st.session_state.pop(f"{PAGE}.{code}.{axis}", None)
            st.success(t("ch.targets.saved"))
