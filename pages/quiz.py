"""Self-check quiz: one question at a time, graded with an explanation and a link to the experiment that
shows it. Numeric questions are answered from a run the student makes here, and graded against it."""
import streamlit as st

from lessons import TOPICS, grade, load_quiz, metric_value, quiz_order, run_spec, shuffled_items
from ui import experiments, nav, moments
from ui.i18n import lang, t

ss = st.session_state
questions = {q.id: q for q in load_quiz(lang())}


def start_over() -> None:
    seed = ss.get("quiz.seed", 0)
    ss["quiz.order"] = [q.id for q in quiz_order(list(questions.values()), seed)]
    ss["quiz.results"], ss["quiz.measured"], ss["quiz.index"] = {}, {}, 0
    for key in [k for k in ss if str(k).startswith("quiz.q.")]:
        del ss[key]


if "quiz.order" not in ss or set(ss["quiz.order"]) != set(questions):
    start_over()
results: dict = ss["quiz.results"]
order: list = ss["quiz.order"]

st.title(t("quiz.title"))
st.markdown(t("quiz.intro"))
c = st.columns([1.2, 1.5, 5], vertical_alignment="bottom")
c[0].number_input(t("quiz.seed"), 0, 9999, key="quiz.seed", help=t("quiz.seed_help"))
c[1].button(t("quiz.restart"), key="quiz.restart", on_click=start_over)
correct = sum(1 for g in results.values() if g.correct)
c[2].progress(len(results) / len(order), text=t("quiz.score", correct=correct, answered=len(results), total=len(order)))

with st.expander(t("quiz.by_topic")):
    st.table([{t("quiz.topic"): t(f"topic.{topic}"), t("quiz.answered"): sum(1 for qid in results
                                                                           if questions[qid].topic == topic),
               t("quiz.correct"): sum(1 for qid, g in results.items() if g.correct and questions[qid].topic == topic),
               t("quiz.of"): sum(1 for q in questions.values() if q.topic == topic)} for topic in TOPICS])

index = min(ss["quiz.index"], len(order) - 1)
q = questions[order[index]]
key = f"quiz.q.{q.id}"
st.subheader(t("quiz.question", i=index + 1, n=len(order)) + (" · 🔁" if q.self_check else ""))
if q.self_check:
    st.caption(t("quiz.self_check_note"))
st.markdown(q.prompt)

answer = None
if q.type == "single":
    answer = st.radio(t("quiz.pick_one"), range(len(q.options)), format_func=q.options.__getitem__, index=None, key=key)
elif q.type == "multiple":
    st.caption(t("quiz.pick_all"))
    answer = [i for i, option in enumerate(q.options) if st.checkbox(option, key=f"{key}.{i}")]
elif q.type == "ordering":
    answer = st.multiselect(t("quiz.order_items"), shuffled_items(q, ss["quiz.seed"]), key=key)
else:
    spec = run_spec(q)
    st.caption(t("quiz.numeric_help", moment=moments.title(spec["moment"]), settings=", ".join(f"{k}={v}" for k, v in spec["settings"].items()) or "—"))
    if st.button(t("quiz.run"), key=f"{key}.run"):
        summary = experiments.summary_of_run(spec["workload"], spec["seed"], spec["settings"])
        if summary is not None:
            ss["quiz.measured"][q.id] = metric_value(summary, q.metric)
    if q.id in ss["quiz.measured"]:
        st.success(t("quiz.ran"))
    answer = st.text_input(t("quiz.number", unit=q.unit), key=key)

c = st.columns([1.2, 1.2, 1.2, 5])
if c[0].button(t("quiz.submit"), type="primary", key=f"{key}.submit", disabled=q.id in results):
    results[q.id] = grade(q, answer, ss["quiz.measured"].get(q.id))
    st.rerun()
if c[1].button(t("quiz.prev"), key="quiz.prev", disabled=index == 0):
    ss["quiz.index"] = index - 1
    st.rerun()
if c[2].button(t("quiz.next"), key="quiz.next", disabled=index + 1 >= len(order)):
    ss["quiz.index"] = index + 1
    st.rerun()

result = results.get(q.id)
if result is not None:
    (st.success if result.correct else st.error)(t("quiz.right") if result.correct else t("quiz.wrong"))
    if result.message:
        st.caption(result.message)
    if not result.correct and result.expected is not None:
        expected = result.expected
        if q.type == "single":
            expected = q.options[expected]
        elif q.type == "multiple":
            expected = "; ".join(q.options[i] for i in expected)
        elif q.type == "ordering":
            expected = " → ".join(expected)
        st.markdown(f"**{t('quiz.expected')}** {expected}")
    st.info(result.explanation)
    link = q.link
    if st.button(t("quiz.see", target=moments.title(link["moment"]) if link.get("moment") else moments.page_title(link["page"])), key=f"{key}.link"):
        moments.open_moment(link["moment"]) if link.get("moment") else nav.go(link["page"])

if len(results) == len(order):
    st.subheader(t("quiz.final", correct=correct, total=len(order)))
