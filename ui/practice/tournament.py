"""The policy tournament, a lecture moment in the class view: the class's top three keys replayed side by side on
the public seed, in the Policies views, for the projector (names as the leaderboard shows them)."""
from __future__ import annotations

import streamlit as st

from classroom import StorageError
from engine.lab.challenge import PUBLIC_SEED, run_key
from engine.policy_key import PolicyKeyError
from ui.labs import experiments, models
from ui.labs.models import get_model
from ui.playback.player import player, show_end
from ui.progress import saved as progress
from ui.shell.i18n import engine_message, t
from ui.views import slots

PAGE = "tournament"
NAMES = f"{PAGE}.names"  # run label -> who wrote the key, for the run headings


def start(db, code: str) -> None:
    """Run the top three of the class's leaderboard (their keys, as the instructor reads them) to the end."""
    try:
        top = db.leaderboard(code, instructor=True, limit=3)
    except StorageError as e:
        st.error(progress.error_text(e))
        return
    if not top:
        st.info(t("ch.board.empty"))
        return
    loaded, made, names = get_model(models.chosen()), [], {}
    for row in top:
        label = f"top{row.rank}"
        try:
            made.append((label, run_key(loaded, PUBLIC_SEED, row.policy_key, row.victim_key, row.preemptive)))
        except PolicyKeyError as e:  # a key graded once fails here only if the engine changed: say so, go on
            st.warning(t("ch.tournament.failed", rank=row.rank, msg=engine_message(e)))
            continue
        names[label] = f"#{row.rank} · {row.name or t('ch.board.anonymous')}"
    st.session_state[NAMES] = names
    show_end(PAGE, experiments.show_recorded(PAGE, made))


def show(db, code: str) -> None:
    st.subheader(t("ch.tournament.title"))
    st.caption(t("ch.tournament.help"))
    if st.button(t("ch.tournament.start"), key=f"{PAGE}.start", type="primary"):
        with st.spinner(t("ch.running")):
            start(db, code)
    runs = experiments.runs(PAGE)
    if runs:
        names = st.session_state.get(NAMES, {})
        player(PAGE, runs, lambda frame: slots.side_by_side(PAGE, runs, frame, lambda run: names.get(run.label,
                                                                                                     run.label),
                                                            by_class=True, height=220), in_browser=True)
