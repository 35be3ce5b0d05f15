"""A lesson page: the lesson's text (lessons/<lang>/*.md), its experiments one click away, and for the
mechanism table a column of figures the engine measures on this machine. ui/shell/nav.py makes one page
per lesson and calls render()."""
from urllib.parse import urlencode

import streamlit as st

from lessons import load_lessons
from lessons.glossary import render_links
from lessons.vllm_v1 import load_vllm_boxes
from ui.labs import experiments
from ui.instructor import moments
from ui.shell import nav, url_state
from ui.shell.i18n import lang, t


def render(lesson_id: str) -> None:
    lessons = load_lessons(lang())
    index = next(i for i, lesson in enumerate(lessons) if lesson.id == lesson_id)
    lesson = lessons[index]
    st.title(lesson.title)
    st.caption(lesson.summary)
    st.markdown(render_links(moments.named(demote_headings(lesson.body)), urlencode(url_state.kept())))
    vllm_box(lesson_id)
    if lesson.live_table == "mechanisms":
        mechanisms_measured()
    if lesson.experiments:
        st.subheader(t("lesson.experiments"))
        for pid in lesson.experiments:
            c = st.columns([2, 6], vertical_alignment="center")
            if c[0].button(f"🎓 {moments.title(pid)}", key=f"lesson.{lesson_id}.{pid}", width="stretch"):
                moments.open_moment(pid)
            c[1].caption(moments.narration_text(pid))
    st.divider()
    c = st.columns(2)
    if index > 0 and c[0].button(f"← {lessons[index - 1].title}", key=f"lesson.{lesson_id}.prev"):
        nav.go(lessons[index - 1].page)
    if index + 1 < len(lessons) and c[1].button(f"{lessons[index + 1].title} →", key=f"lesson.{lesson_id}.next"):
        nav.go(lessons[index + 1].page)


def vllm_box(lesson_id: str) -> None:
    box = load_vllm_boxes(lang()).get(lesson_id)
    if box is not None:
        files = "、".join(f"`{f}`" for f in box.read) if lang() == "zh" else ", ".join(f"`{f}`" for f in box.read)
        st.info(f"**{t('lesson.vllm_v1')}**\n\n{box.text}\n\n{t('lesson.vllm_v1_read', files=files)}", icon="🔎")


def demote_headings(markdown: str) -> str:
    """The page title is the only level-1 heading: the lesson's own headings move one level down."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        out.append("#" + line if not fenced and line.startswith("#") else line)
    return "\n".join(out)


def mechanisms_measured() -> None:
    """The table's extra column: the same mechanisms, measured now on chat-and-reports."""
    st.subheader(t("mech.title"))
    have = "batching" in experiments.measurements()
    if not have and not st.button(t("mech.measure"), type="primary", key="mech.measure"):
        st.caption(t("mech.press"))
        return
    runs = experiments.measured("batching", "chat-and-reports", experiments.BATCHING)
    if not runs:
        return
    s, c, k = runs["static"], runs["continuous"], runs["contiguous"]
    chat = lambda r: r["by_class"]["chat"]["ttft_steps"]["p50"]  # noqa: E731
    st.table([
        {t("mech.col"): t("mech.fixed"), t("mech.measured"): t("mech.fixed_fig", tps=s["throughput_tok_per_step"],
                                                                 ttft=chat(s), busy=100 * s["slot_utilisation"])},
        {t("mech.col"): t("mech.continuous"), t("mech.measured"): t(
            "mech.continuous_fig", tps=c["throughput_tok_per_step"],
            x=c["throughput_tok_per_step"] / s["throughput_tok_per_step"],
            ttft=chat(c), busy=100 * c["slot_utilisation"])},
        {t("mech.col"): t("mech.paged"), t("mech.measured"): t(
            "mech.paged_fig", waste=100 * c["kv_waste_share"], cwaste=100 * k["kv_waste_share"], n=c["max_concurrent"],
            cn=k["max_concurrent"], refused=k["admissions_refused_by_fragmentation"])},
    ])
