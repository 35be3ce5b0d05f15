"""Worksheets: evidence the lab checks against the student's own runs, choices of fact, and explanations the
student self-assesses against a rubric (and, in a class, the instructor marks). Answers persist in the
session and the student's progress, and export to (and import from) a Markdown file."""
import streamlit as st

from lessons import load_tasks
from lessons.answers_markdown import answers_to_markdown
from ui.instructor import moments
from ui.practice import worksheets
from ui.progress import saved as progress
from ui.progress import worksheet_state
from ui.shell import nav
from ui.shell.i18n import lang, t

ss = st.session_state
answers = worksheet_state.answers()
tasks = load_tasks(lang())
progress.refresh_marks()
status = {task.id: worksheets.status(task) for task in tasks}
for task in tasks:
    worksheets.record(task, status[task.id])

st.title(t("tasks.title"))
st.markdown(t("tasks.intro"))

# --- the three milestones ---------------------------------------------------------------
milestones = [task for task in tasks if task.milestone]
done = [task for task in milestones if status[task.id].complete]
st.progress(len(done) / len(milestones), text=t("tasks.progress", done=len(done), total=len(milestones)))
cols = st.columns(len(milestones))
for col, task in zip(cols, milestones):
    col.markdown(("✅ " if status[task.id].complete else "⬜ ") + task.title)

# --- export / import --------------------------------------------------------------------
with st.expander(t("tasks.save")):
    c = st.columns(2)
    c[0].download_button(t("tasks.export"), lambda: answers_to_markdown(answers, lang()), "serving-lab-answers.md",
                         "text/markdown", key="tasks.export", on_click="ignore")
    upload = c[1].file_uploader(t("tasks.import"), type=["md", "txt"], key="tasks.import")
    if upload is not None and ss.get("tasks.imported") != upload.file_id:
        ss["tasks.imported"] = upload.file_id
        worksheets.import_answers(upload.getvalue().decode("utf-8", errors="replace"), tasks)
    pasted = st.text_area(t("tasks.paste"), key="tasks.paste", height=80)
    if st.button(t("tasks.paste_import"), key="tasks.paste_import", disabled=not pasted.strip()):
        worksheets.import_answers(pasted, tasks)

for task in tasks:
    with st.container(border=True, key=f"task-{task.id}"):
        st.subheader(("✅ " if status[task.id].complete else "") + task.title)
        st.markdown(task.prompt)
        moment = task.link.get("moment")
        if st.button(f"🎓 {moments.title(moment)}" if moment else t("tasks.open"), key=f"tasks.link.{task.id}"):
            moments.open_moment(moment) if moment else nav.go(task.link["page"])
        worksheets.fields(task)
        worksheets.still_empty(task)
        if st.button(t("tasks.check"), type="primary", key=f"tasks.check.{task.id}"):
            worksheets.submit(task)
        worksheets.after_submit(task)
