"""A policy challenge grade on the page: the per-axis table, one chart, who paid; and the class leaderboard."""
from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from classroom import StorageError
from engine.lab.challenge import DEFAULT_TARGETS as CHALLENGE_TARGETS
from ui.progress import saved as progress
from ui.shell.i18n import class_name, t
from ui.shell.style import CHART_CONFIG, scale_fonts, scaled
from ui.views.base import fmt
from viz.charts import grouped_bars

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.challenge import Grade


GOAL_TASK = "chat-slo-goal"  # Task 4: the student's goal for the chat service, as numbers


def _number(text) -> float | None:
    try:
        value = float(str(text).strip())
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def goal_targets(goal: dict[str, str]) -> dict[str, float]:
    """The challenge targets the student's own Task 4 goal sets (the others stay the challenge's): throughput as
    a share of FCFS's, and fairness as Jain's index or as a worst slowdown (the challenge's is over every class,
    the goal's over the reports). A throughput in tokens per step belongs to that task's workload: not taken."""
    targets = {}
    floor, bound = _number(goal.get("throughput_min", "")), _number(goal.get("fairness_bound", ""))
    if goal.get("throughput_mode") == "pct_of_fcfs" and floor is not None and floor > 0:
        targets["throughput_vs_fcfs"] = floor / 100
    if goal.get("fairness_mode") == "jain" and bound is not None and 0 < bound <= 1:
        targets["jain"] = bound
    if goal.get("fairness_mode") == "report_slowdown" and bound is not None and bound >= 1:
        targets["worst_class_slowdown"] = bound
    return targets


def _pct(value: float | None) -> str:
    return fmt(None if value is None else 100 * value, ".0f", "%")


def axis_rows(grade: Grade) -> list[dict]:
    """One row per axis: the student's figure, FCFS's on the same requests, the target, met or not."""
    met, targets = grade.met(), grade.targets
    fcfs_slo = sum(grade.slo_by_class_fcfs.values()) / len(grade.slo_by_class_fcfs)
    head = (t("ch.axis"), t("ch.yours"), "FCFS", t("ch.target"), t("ch.met"))
    rows = [(t("ch.axis.slo_attainment"), _pct(grade.slo_attainment), _pct(fcfs_slo),
             f"≥ {_pct(targets['slo_attainment'])}", met["slo_attainment"])]
    rows += [(t("ch.axis.slo_class", cls=class_name(cls)), _pct(value), _pct(grade.slo_by_class_fcfs.get(cls)), "",
              None) for cls, value in sorted(grade.slo_by_class.items())]
    rows += [(t("ch.axis.throughput"), f"{grade.throughput_vs_fcfs:.2f}×", "1.00×",
              f"≥ {targets['throughput_vs_fcfs']:.2f}×", met["throughput_vs_fcfs"]),
             (t("ch.axis.worst_slowdown", cls=class_name(grade.worst_class)), f"{grade.worst_class_slowdown:.2f}",
              f"{grade.worst_class_slowdown_fcfs:.2f}", f"≤ {targets['worst_class_slowdown']:.1f}",
              met["worst_class_slowdown"]),
             (t("ch.axis.jain"), f"{grade.jain:.2f}", f"{grade.jain_fcfs:.2f}", f"≥ {targets['jain']:.2f}",
              met["jain"])]
    return [dict(zip(head, (*row[:4], "" if row[4] is None else ("✅" if row[4] else "❌")))) for row in rows]


def show(grade: Grade, key: str) -> None:
    left, right = st.columns([3, 2])
    with left:
        st.dataframe(axis_rows(grade), hide_index=True, key=f"{key}.table")
        st.caption(t("ch.targets_note", met=sum(grade.met().values()), total=len(grade.met())))
        if grade.targets != CHALLENGE_TARGETS:
            st.caption(t("ch.targets_own"))
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
               t("ch.board.met"): r.targets_met, t("ch.axis.slo_attainment"): _pct(r.slo_attainment),
               t("ch.axis.throughput"): f"{r.throughput_vs_fcfs:.2f}×",
               t("ch.board.worst"): f"{r.worst_class_slowdown:.2f}"}
        if instructor or r.mine:
            row[t("ch.board.policy")] = r.policy_key or ""
        out.append(row)
    return out


def class_board() -> None:
    """The student's class leaderboard: figures for everyone, the policy text of their own row only."""
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
