"""Self-check quiz: one question at a time, options in the attempt's seeded order. A hint on request; a
wrong first answer gets the hint and one more try, then the explanation and a link to the experiment
that shows it. Numeric questions are answered from a run the student makes, and graded against it."""
import streamlit as st

from lessons import TOPICS, load_quiz, metric_value, quiz_order, run_spec, shuffled_items
from lessons.attempt import Attempt, option_order
from ui.labs import experiments
from ui.shell import nav
from ui.instructor import moments
from ui.progress import saved as progress
from ui.shell.i18n import lang, t

ss = st.session_state
questions = {q.id: q for q in load_quiz(lang())}


def start_over() -> None:
    seed = ss.get("quiz.seed", 0)
    ss["quiz.order"] = [q.id for q in quiz_order(list(questions.values()), seed)]
    ss["quiz.attempt"], ss["quiz.measured"], ss["quiz.index"] = Attempt(seed), {}, 0
    ss["quiz.hints"] = set()
    for key in [k for k in ss if str(k).startswith("quiz.q.")]:
        del ss[key]


def restart() -> None:
    start_over()
    progress.quiz_restarted()


def lab_measured(q, spec: dict) -> float | None:
    """The question's figure from the lab page's finished run of its moment and variant, if there is one."""
    if ss.get(f"{spec['page']}.moment") != spec["moment"]:
        return None
    run = next((r for r in experiments.runs(spec["page"]) if r.label == spec["label"] and r.done), None)
    return metric_value(run.summary(), q.metric) if run else None


if "quiz.order" not in ss or set(ss["quiz.order"]) != set(questions) or "quiz.attempt" not in ss:
    start_over()
attempt: Attempt = ss["quiz.attempt"]
results, order = attempt.results, ss["quiz.order"]
score = attempt.score()

st.title(t("quiz.title"))
st.markdown(t("quiz.intro"))
c = st.columns([1.2, 1.5, 5], vertical_alignment="bottom")
c[0].number_input(t("quiz.seed"), 0, 9999, key="quiz.seed", help=t("quiz.seed_help"))
c[1].button(t("quiz.restart"), key="quiz.restart", on_click=restart)
c[2].progress(score["answered"] / len(order), text=t("quiz.score2", total=len(order), **score))

with st.expander(t("quiz.by_topic")):
    st.table([{t("quiz.topic"): t(f"topic.{topic}"),
               t("quiz.answered"): sum(1 for qid in results if attempt.done(qid) and questions[qid].topic == topic),
               t("quiz.correct"): sum(1 for qid, g in results.items() if g.correct and questions[qid].topic == topic),
               t("quiz.of"): sum(1 for q in questions.values() if q.topic == topic)} for topic in TOPICS])

index = min(ss["quiz.index"], len(order) - 1)
q = questions[order[index]]
key = f"quiz.q.{q.id}" + (".2" if attempt.tries.get(q.id) else "")  # a fresh widget for the second try
done, retry = attempt.done(q.id), attempt.awaiting_retry(q.id)
st.subheader(t("quiz.question", i=index + 1, n=len(order)) + (" · 🔁" if q.self_check else ""))
if q.self_check:
    st.caption(t("quiz.self_check_note"))
st.markdown(q.prompt)

answer = None
if q.type in ("single", "multiple"):
    shown = option_order(q, attempt.seed)
    if q.type == "single":
        answer = st.radio(t("quiz.pick_one"), shown, format_func=q.options.__getitem__, index=None, key=key,
                          disabled=done)
    else:
        st.caption(t("quiz.pick_all"))
        answer = [i for i in shown if st.checkbox(q.options[i], key=f"{key}.{i}", disabled=done)]
elif q.type == "ordering":
    answer = st.multiselect(t("quiz.order_items"), shuffled_items(q, attempt.seed), key=key, disabled=done)
else:
    spec = run_spec(q)
    settings = ", ".join(f"{k}={v}" for k, v in spec["settings"].items()) or "—"
    st.caption(t("quiz.numeric_help", moment=moments.title(spec["moment"]), settings=settings))
    c = st.columns([1.5, 2, 4])
    if c[0].button(t("quiz.run"), key=f"quiz.q.{q.id}.run"):
        summary = experiments.summary_of_run(spec["workload"], spec["seed"], spec["settings"])
        if summary is not None:
            ss["quiz.measured"][q.id] = metric_value(summary, q.metric)
    if c[1].button(f"🎓 {t('quiz.open_lab', moment=moments.title(spec['moment']))}", key=f"quiz.q.{q.id}.open"):
        moments.open_moment(spec["moment"])
    seen = lab_measured(q, spec)
    if seen is not None:  # the run the student watched on the lab page: one source for page and quiz
        ss["quiz.measured"][q.id] = seen
        st.success(t("quiz.from_lab", label=spec["label"]))
    elif q.id in ss["quiz.measured"]:
        st.success(t("quiz.ran"))
    answer = st.text_input(t("quiz.number", unit=q.unit), key=key, disabled=done)

hint_shown = q.id in ss["quiz.hints"] or retry
if retry:
    st.warning(t("quiz.retry"))
if hint_shown and not done:
    st.info(f"💡 {q.hint or t('quiz.hint_generic')}")

c = st.columns([1.2, 1.2, 1.2, 1.2, 4])
if c[0].button(t("quiz.submit_again") if retry else t("quiz.submit"), type="primary", key=f"quiz.q.{q.id}.submit",
               disabled=done):
    measured = ss["quiz.measured"].get(q.id)
    if q.type == "numeric" and measured is None:
        ss["quiz.unmeasured"] = q.id
    else:
        attempt.submit(q, answer, measured)
        progress.quiz_answer(q, answer, measured, attempt)
    st.rerun()
if c[1].button(t("quiz.hint_button"), key=f"quiz.q.{q.id}.hint", disabled=hint_shown or done):
    ss["quiz.hints"].add(q.id)
    st.rerun()
if c[2].button(t("quiz.prev"), key="quiz.prev", disabled=index == 0):
    ss["quiz.index"] = index - 1
    st.rerun()
if c[3].button(t("quiz.next"), key="quiz.next", disabled=index + 1 >= len(order)):
    ss["quiz.index"] = index + 1
    st.rerun()
if ss.pop("quiz.unmeasured", None) == q.id:
    st.error(t("quiz.run_first"))

result = results.get(q.id)
if result is not None and done:
    tries = attempt.tries[q.id]
    if result.correct:
        st.success(t("quiz.right") if tries == 1 else t("quiz.right_second"))
    else:
        st.error(t("quiz.wrong"))
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
    target = moments.title(link["moment"]) if link.get("moment") else moments.page_title(link["page"])
    if st.button(t("quiz.see", target=target), key=f"quiz.q.{q.id}.link"):
        moments.open_moment(link["moment"]) if link.get("moment") else nav.go(link["page"])
elif result is not None and result.message:
    st.caption(result.message)

if score["answered"] == len(order):
    progress.milestone("quiz-finished")
    st.subheader(t("quiz.final2", total=len(order), **score))
