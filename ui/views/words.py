"""Words for the animated views: what a frame shows, as a short summary a screen reader announces (a polite live
region beside each run's views) and, on request, as a table of the frame's slots. Both read the snapshot the charts
of that frame are drawn from."""
from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import streamlit as st

from ui.shell.i18n import lang, t
from ui.views.base import html_table, html_view

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.core.snapshot import StepSnapshot
    from engine.core.wait import Wait
    from engine.lab.experiment import LiveRun


def wait_text(wait: Wait) -> str:
    """Why the request waits, with the figures; where the batcher tried it at this step, what alone would have let it
    in (one knob raised, the others held) or that no single knob would."""
    text = t(f"wait.{wait.code}", have=wait.have, need=wait.need, behind=wait.behind)
    if not wait.asked:  # not tried at an admission check: nothing was asked
        return text
    options = [t(f"lets_in.{knob}", k=k, s="" if k == 1 else "s") for knob, k in wait.lets_in.items()]
    return text + t("lets_in.said", options=t("lets_in.or").join(options) if options else t("lets_in.none"))


def frame_summary(snap: StepSnapshot) -> str:
    """"step 89: 8 of 16 slots busy, 3 waiting, KV 71 % used, 2 partly filled blocks"."""
    used = round(100 * snap.num_used_blocks / snap.num_blocks) if snap.num_blocks else 0
    return t("words.summary", step=snap.step, busy=sum(1 for rid in snap.slots if rid), slots=len(snap.slots),
             waiting=len(snap.waiting), kv=used, partial=snap.num_partial_blocks)


def summary_html(snap: StepSnapshot, run_name: str) -> str:
    return (f'<div class="lab-words" role="status" aria-live="polite">{escape(run_name)}: '
            f'{escape(frame_summary(snap))}</div>')


def summary(run: LiveRun, frame: int, key: str, run_name: str) -> None:
    """The frame in words, for screen readers only (ui/shell/style.py keeps it out of sight, not out of reach)."""
    html_view(run, frame, ("words", lang(), run_name), lambda i: summary_html(run.snapshots[i], run_name),
              f"{key}.words")


def frame_table_html(snap: StepSnapshot) -> str:
    """Per slot: the request in it, its class and what it did this step (prefill n tokens, decode, held, idle); then
    the queue at the door and why each request in it waits."""
    ran = {b.slot: b for b in snap.batch if b.slot >= 0}
    rows = []
    for slot, rid in enumerate(snap.slots):
        entry = ran.get(slot)
        rid = entry.request_id if entry else rid
        view = snap.requests.get(rid) if rid else None
        if entry and entry.num_prefill_tokens:
            doing = f"{t('prefill')} {entry.num_prefill_tokens}"
        else:
            doing = t("decode") if entry else (t("held") if rid else t("idle"))
        rows.append([slot, rid or "–", view.request_class if view else "–", doing])
    return (f"<div>{escape(frame_summary(snap))}</div>"
            + html_table([t("slot"), t("words.request"), t("words.class"), t("words.doing")], rows)
            + waiting_table_html(snap))


def waiting_table_html(snap: StepSnapshot) -> str:
    """Per waiting request, in admission order: its class and why the scheduler did not let it in at this step (its
    Wait in words, with the figures); nothing when nobody waits."""
    rows = []
    for rid in snap.waiting:
        view, wait = snap.requests.get(rid), snap.waits.get(rid)
        if wait:
            why = wait_text(wait)
        else:  # a recording made before waits were kept names the head's reason alone
            why = t(f"why_{snap.blocked[rid]}") if rid in snap.blocked else "–"
        rows.append([rid, view.request_class if view else "–", why])
    if not rows:
        return ""
    return (f"<div>{escape(t('words.waiting_why'))}</div>"
            + html_table([t("words.request"), t("words.class"), t("words.why")], rows))


def table_switch(page: str) -> bool:
    return st.toggle(t("words.show_table"), key=f"{page}.as_table", help=t("words.show_table_help"))


def tables(page: str, runs: list[LiveRun], frame: int, names: list[str]) -> None:
    """Under the views, when the student asks: each run's frame as a table, following the player."""
    if not table_switch(page):
        return
    for col, run, name in zip(st.columns(len(runs)), runs, names):
        with col:
            st.markdown(f"**{name}**")
            html_view(run, frame, ("words-table", lang()), lambda i, r=run: frame_table_html(r.snapshots[i]),
                      f"{page}.words-table.{run.label}")
