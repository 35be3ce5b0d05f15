"""A policy challenge grade on the page: the per-axis table, one chart, who paid (the public seed's alone); and the
class leaderboard, scores only."""
from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from classroom import StorageError
from engine.lab.challenge_score import FLOORS, points
from ui.progress import saved as progress
from ui.shell.i18n import class_name, t
from ui.shell.style import CHART_CONFIG, scale_fonts, scaled
from ui.views.base import fmt
from viz.charts import grouped_bars

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.challenge import Grade


def _pct(value: float | None) -> str:
    return fmt(None if value is None else 100 * value, ".0f", "%")


def axis_rows(grade: Grade) -> list[dict]:
    """One row per axis: the student's figure, FCFS's on the same requests, the target, where it earns nothing,
    the points earned."""
    won, targets = points(grade.axes(), grade.targets), grade.targets
    head = (t("ch.axis"), t("ch.yours"), "FCFS", t("ch.target"), t("ch.floor"), t("ch.points"))
    rows = [(t("ch.axis.slo_attainment"), _pct(grade.slo_attainment), _pct(grade.slo_attainment_fcfs),
             f"≥ {_pct(targets['slo_attainment'])}", _pct(FLOORS["slo_attainment"]), won["slo_attainment"])]
    rows += [(t("ch.axis.slo_class", cls=class_name(cls)), _pct(value), _pct(grade.slo_by_class_fcfs.get(cls)), "",
              "", None) for cls, value in sorted(grade.slo_by_class.items())]
    rows += [(t("ch.axis.throughput"), f"{grade.throughput_vs_fcfs:.2f}×", "1.00×",
              f"≥ {targets['throughput_vs_fcfs']:.2f}×", f"{FLOORS['throughput_vs_fcfs']:.2f}×",
              won["throughput_vs_fcfs"]),
             (t("ch.axis.worst_slowdown", cls=class_name(grade.worst_class)), f"{grade.worst_class_slowdown:.2f}",
              f"{grade.worst_class_slowdown_fcfs:.2f}", f"≤ {targets['worst_class_slowdown']:.1f}",
              f"{FLOORS['worst_class_slowdown']:.1f}", won["worst_class_slowdown"]),
             (t("ch.axis.jain"), f"{grade.jain:.2f}", f"{grade.jain_fcfs:.2f}", f"≥ {targets['jain']:.2f}",
              f"{FLOORS['jain']:.2f}", won["jain"]),
             (t("ch.axis.preemptions"), f"{grade.preemptions:.1f}", f"{grade.preemptions_fcfs:.1f}",
              f"≤ {targets['preemptions']:.1f}", f"{FLOORS['preemptions']:.1f}", won["preemptions"])]
    return [dict(zip(head, (*row[:5], "" if row[5] is None else f"{row[5]:.2f}" + (" ✅" if row[5] == 1 else ""))))
            for row in rows]


def show(grade: Grade, key: str) -> None:
    left, right = st.columns([3, 2])
    with left:
        st.dataframe(axis_rows(grade), hide_index=True, key=f"{key}.table")
        st.markdown(t("ch.score", score=f"{grade.score():.1f}"))
        st.caption(t("ch.targets_note", met=sum(grade.met().values()), total=len(grade.met())))
    with right:
        names = {cls: class_name(cls) for cls in grade.slo_by_class}
        bars = grouped_bars({t("ch.yours"): grade.slo_by_class, "FCFS": grade.slo_by_class_fcfs}, {}, t("m.slo"),
                            percent=True, height=scaled(260), names=names)
        st.plotly_chart(scale_fonts(bars), key=f"{key}.chart", config=CHART_CONFIG, theme=None)
    st.markdown(f"**{t('ch.who_paid')}**")
    if not grade.payers:
        st.caption(t("ch.nobody_paid"))
        return
    st.dataframe([{t("ch.request"): p.request_id, t("m.class"): class_name(p.request_class),
                   t("ch.waited_fcfs"): p.waited_fcfs, t("ch.waited_yours"): p.waited_key,
                   t("ch.extra"): f"+{p.extra}"} for p in grade.payers], hide_index=True, key=f"{key}.payers")
    st.caption(t("ch.who_paid_note"))


def board_rows(rows, instructor: bool) -> list[dict]:
    out = []
    for r in rows:
        row = {"#": r.rank, t("ch.board.name"): (r.name or t("ch.board.anonymous")) + (" ⭐" if r.mine else ""),
               t("ch.board.score"): f"{r.score:.1f}"}
        if instructor or r.mine:
            row[t("ch.board.policy")] = r.policy_key or ""
        out.append(row)
    return out


def class_board() -> None:
    """The student's class leaderboard: scores for everyone, the policy text of their own row only."""
    me = progress.me()
    if not me or not me.class_code:
        st.caption(t("ch.board.no_class"))
        return
    rows = progress.with_store(lambda db: db.leaderboard(me.class_code, viewer_token=me.token))
    if rows:
        st.subheader(t("ch.board.title", code=me.class_code))
        with st.container(key="challenge-board"):
            st.table(board_rows(rows, instructor=False))


def instructor_board(db, code: str) -> None:
    """In the class view: every student's best, with its policy text."""
    try:
        rows = db.leaderboard(code, instructor=True)
    except StorageError as e:
        st.error(progress.error_text(e))
        return
    if not rows:
        st.info(t("ch.board.empty"))
        return
    with st.container(key="class-challenge-board"):  # a plain table: readable on a projector, text selectable
        st.table(board_rows(rows, instructor=True))
