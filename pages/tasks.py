"""Worksheets: write answers, get feedback on each element, see what the engine measured beside them.
Answers persist in the session and export to (and import from) a Markdown file."""
import streamlit as st

from lessons import answers_from_markdown, answers_to_markdown, check_task, load_tasks
from ui.labs import experiments
from ui.shell import nav
from ui.instructor import moments
from ui.progress import saved as progress
from ui.shell.i18n import lang, t

ss = st.session_state
answers: dict = ss.setdefault("answers", {})  # task id -> field id -> text: outlives the widgets
checked: dict = ss.setdefault("tasks.checked", {})  # task id -> passed
tasks = load_tasks(lang())
BATCHING = [("static", {"batcher": "static"}), ("continuous", {"batcher": "continuous"}),
            ("contiguous", {"batcher": "continuous", "kv_layout": "contiguous"})]

st.title(t("tasks.title"))
st.markdown(t("tasks.intro"))

# --- the three milestones ---------------------------------------------------------------
milestones = [task for task in tasks if task.milestone]
done = [task for task in milestones if checked.get(task.id)]
st.progress(len(done) / len(milestones), text=t("tasks.progress", done=len(done), total=len(milestones)))
cols = st.columns(len(milestones))
for col, task in zip(cols, milestones):
    col.markdown(("✅ " if checked.get(task.id) else "⬜ ") + task.title)

# --- export / import --------------------------------------------------------------------
def import_answers(text: str) -> None:
    try:
        loaded = answers_from_markdown(text)
    except ValueError as e:
        st.error(t("tasks.import_error", msg=str(e)))
        return
    known = {task.id: {f.id for f in task.fields} for task in tasks}
    n = 0
    for tid, fields in loaded.items():
        for fid, value in fields.items():
            if fid in known.get(tid, ()):
                answers.setdefault(tid, {})[fid] = ss[f"task.{tid}.{fid}"] = value
                progress.draft(tid, fid, value)
                n += 1
    st.success(t("tasks.imported", n=n))


with st.expander(t("tasks.save")):
    c = st.columns(2)
    c[0].download_button(t("tasks.export"), lambda: answers_to_markdown(answers, lang()), "serving-lab-answers.md",
                         "text/markdown", key="tasks.export", on_click="ignore")
    upload = c[1].file_uploader(t("tasks.import"), type=["md", "txt"], key="tasks.import")
    if upload is not None and ss.get("tasks.imported") != upload.file_id:
        ss["tasks.imported"] = upload.file_id
        import_answers(upload.getvalue().decode("utf-8", errors="replace"))
    pasted = st.text_area(t("tasks.paste"), key="tasks.paste", height=80)
    if st.button(t("tasks.paste_import"), key="tasks.paste_import", disabled=not pasted.strip()):
        import_answers(pasted)


def keep(tid: str, fid: str) -> None:
    answers.setdefault(tid, {})[fid] = ss[f"task.{tid}.{fid}"]
    progress.draft(tid, fid, ss[f"task.{tid}.{fid}"])


def text_field(container, task, f, label_visibility="visible") -> None:
    key = f"task.{task.id}.{f.id}"
    if key not in ss:
        ss[key] = answers.get(task.id, {}).get(f.id, "")
    widget = container.text_area if f.kind == "long" else container.text_input
    widget(f.label, key=key, on_change=keep, args=(task.id, f.id), label_visibility=label_visibility)


def comparison_table(task) -> None:
    """Rows x (fixed, continuous), and beside them what the engine measured on the same question."""
    runs = st.session_state.get("measured", {}).get("batching")
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


for task in tasks:
    with st.container(border=True):
        st.subheader(("✅ " if checked.get(task.id) else "") + task.title)
        st.markdown(task.prompt)
        moment = task.link.get("moment")
        if st.button(f"🎓 {moments.title(moment)}" if moment else t("tasks.open"), key=f"tasks.link.{task.id}"):
            moments.open_moment(moment) if moment else nav.go(task.link["page"])
        if task.id == "compare-batching":
            comparison_table(task)
        else:
            for f in task.fields:
                text_field(st, task, f)
        if st.button(t("tasks.check"), type="primary", key=f"tasks.check.{task.id}"):
            feedback = check_task(task, answers.get(task.id, {}))
            checked[task.id] = feedback.passed
            ss[f"tasks.feedback.{task.id}"] = feedback
            progress.grading(task, feedback)
            st.rerun()
        feedback = ss.get(f"tasks.feedback.{task.id}")
        if feedback is not None:
            labels = {f.id: f.label for f in task.fields}
            if feedback.passed:
                st.success(t("tasks.passed"))
            for fid, fb in feedback.fields.items():
                if not fb.checked or (fb.passed and feedback.passed):
                    continue
                lines = [("✅ " if c.met else "❌ " if c.required else "💡 ") + c.feedback for c in fb.criteria]
                if fb.empty or fb.rejected or fb.stuffed or fb.same_as:
                    lines = ["⚠️ " + m for m in fb.messages[:1]] + lines
                st.markdown(f"**{labels[fid]}**\n\n" + "\n\n".join(lines))
            with st.expander(t("tasks.model_answers")):
                for fid, examples in task.model_answers.items():
                    st.markdown(f"**{labels.get(fid, fid)}**: " + " / ".join(examples[:2]))
