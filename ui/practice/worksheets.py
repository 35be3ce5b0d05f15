"""The worksheet page's pieces: text fields whose text outlives the widgets, the import of answers, the batching
comparison with what the engine measured beside it, and a check's feedback."""
from __future__ import annotations

import streamlit as st

from lessons import answers_from_markdown
from ui.labs import experiments
from ui.labs.experiments import BATCHING
from ui.progress import keys, worksheet_state
from ui.shell.i18n import t


def import_answers(text: str, tasks) -> None:
    try:
        loaded = answers_from_markdown(text)
    except ValueError as e:
        st.error(t("tasks.import_error", msg=str(e)))
        return
    st.success(t("tasks.imported", n=worksheet_state.take(loaded, tasks)))


def _keep(task_id: str, field_id: str) -> None:
    worksheet_state.keep(task_id, field_id, st.session_state[keys.task_field(task_id, field_id)])


def text_field(container, task, f, label_visibility="visible") -> None:
    key = keys.task_field(task.id, f.id)
    if key not in st.session_state:
        st.session_state[key] = worksheet_state.answers().get(task.id, {}).get(f.id, "")
    widget = container.text_area if f.kind == "long" else container.text_input
    widget(f.label, key=key, on_change=_keep, args=(task.id, f.id), label_visibility=label_visibility)


def comparison_table(task) -> None:
    """Rows x (fixed, continuous), and beside them what the engine measured on the same question."""
    runs = experiments.measurements().get("batching")
    rows = [f.id.rsplit("_", 1)[0] for f in task.fields if f.id.endswith("_fixed")]
    head = st.columns([1.3, 2, 2, 2])
    head[1].markdown(f"**{t('tasks.fixed')}**")
    head[2].markdown(f"**{t('tasks.continuous')}**")
    head[3].markdown(f"**{t('tasks.measured')}**")
    fields = {f.id: f for f in task.fields}
    for row in rows:
        c = st.columns([1.3, 2, 2, 2])
        c[0].markdown(t(f"tasks.row.{row}"))
        text_field(c[1], task, fields[f"{row}_fixed"], "collapsed")
        text_field(c[2], task, fields[f"{row}_continuous"], "collapsed")
        c[3].caption(measured_cell(row, runs))
    if runs is None and st.button(t("tasks.measure"), key="tasks.measure"):
        experiments.measured("batching", "chat-and-reports", BATCHING)
        st.rerun()
    text_field(st, task, fields["why_online"])


def measured_cell(row: str, runs: dict | None) -> str:
    if runs is None:
        return "…"
    s, c = runs["static"], runs["continuous"]
    if row == "throughput":
        return t("tasks.m.throughput", s=s["throughput_tok_per_step"], c=c["throughput_tok_per_step"])
    if row == "waiting":
        return t("tasks.m.waiting", s=s["latency"]["queue_steps"]["p50"], c=c["latency"]["queue_steps"]["p50"],
                 sc=s["by_class"]["chat"]["ttft_steps"]["p50"], cc=c["by_class"]["chat"]["ttft_steps"]["p50"])
    return "—"


def feedback(task, fb_all) -> None:
    """What the last check found, field by field; then the model answers."""
    labels = {f.id: f.label for f in task.fields}
    if fb_all.passed:
        st.success(t("tasks.passed"))
    for fid, fb in fb_all.fields.items():
        if not fb.checked or (fb.passed and fb_all.passed):
            continue
        lines = [("✅ " if c.met else "❌ " if c.required else "💡 ") + c.feedback for c in fb.criteria]
        if fb.empty or fb.rejected or fb.stuffed or fb.same_as:
            lines = ["⚠️ " + m for m in fb.messages[:1]] + lines
        st.markdown(f"**{labels[fid]}**\n\n" + "\n\n".join(lines))
    with st.expander(t("tasks.model_answers")):
        for fid, examples in task.model_answers.items():
            st.markdown(f"**{labels.get(fid, fid)}**: " + " / ".join(examples[:2]))
