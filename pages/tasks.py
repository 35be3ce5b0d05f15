"""Worksheets: write answers, get feedback on each element, see what the engine measured beside them.
Answers persist in the session and export to (and import from) a Markdown file."""
import streamlit as st

from lessons import answers_to_markdown, check_task, load_tasks
from ui.instructor import moments
from ui.practice import worksheets
from ui.progress import keys, worksheet_state
from ui.progress import saved as progress
from ui.shell import nav
from ui.shell.i18n import lang, t

ss = st.session_state
answers = worksheet_state.answers()
checked: dict = ss.setdefault(keys.CHECKED, {})  # task id -> passed
tasks = load_tasks(lang())

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
    with st.container(border=True):
        st.subheader(("✅ " if checked.get(task.id) else "") + task.title)
        st.markdown(task.prompt)
        moment = task.link.get("moment")
        if st.button(f"🎓 {moments.title(moment)}" if moment else t("tasks.open"), key=f"tasks.link.{task.id}"):
            moments.open_moment(moment) if moment else nav.go(task.link["page"])
        if task.id == "compare-batching":
            worksheets.comparison_table(task)
        else:
            for f in task.fields:
                worksheets.text_field(st, task, f)
        if st.button(t("tasks.check"), type="primary", key=f"tasks.check.{task.id}"):
            found = check_task(task, answers.get(task.id, {}))
            checked[task.id] = found.passed
            ss[keys.FEEDBACK_PREFIX + task.id] = found
            progress.grading(task, found)
            st.rerun()
        found = ss.get(keys.FEEDBACK_PREFIX + task.id)
        if found is not None:
            worksheets.feedback(task, found)
