"""Self-check quiz: one question at a time, options in the attempt's seeded order. A hint on request; a
wrong first answer gets the hint and one more try, then the explanation and a link to the experiment
that shows it. Numeric questions are answered from the runs the student makes, and graded against them; a
prediction is committed before its run, and has one try. An answer that cannot be graded yet (nothing picked, a
two-tier reason missing, not a number) is refused with a message and uses no try."""
import streamlit as st

from lessons import incomplete, load_quiz
from ui.practice import quiz
from ui.progress import keys, quiz_state
from ui.progress import saved as progress
from ui.shell.i18n import lang, t

ss = st.session_state
questions = {q.id: q for q in load_quiz(lang())}


def restart() -> None:
    quiz_state.restart(questions)
    progress.quiz_restarted()


attempt = quiz_state.current(questions)
order = ss[keys.QUIZ_ORDER]
score = attempt.score()

st.title(t("quiz.title"))
st.markdown(t("quiz.intro"))
c = st.columns([1.7, 1.5, 5], vertical_alignment="bottom")
c[0].number_input(t("quiz.seed"), 0, 9999, key=keys.QUIZ_SEED, help=t("quiz.seed_help"))
c[1].button(t("quiz.restart"), key="quiz.restart", on_click=restart)
c[2].progress(score["answered"] / len(order), text=t("quiz.score2", total=len(order), **score))
with st.expander(t("quiz.by_topic")):
    quiz.by_topic(questions, attempt)

index = min(ss[keys.QUIZ_INDEX], len(order) - 1)
q = questions[order[index]]
key = keys.quiz_widget(q.id, second_try=bool(attempt.tries.get(q.id)))  # a fresh widget for the second try
done, retry = attempt.done(q.id), attempt.awaiting_retry(q.id)
st.subheader(t("quiz.question", i=index + 1, n=len(order)) + (" · 🔁" if q.self_check else ""))
if q.self_check:
    st.caption(t("quiz.self_check_note"))
st.markdown(quiz.prompt(q))
answer = quiz.answer_widget(q, attempt, key, done)
if not done:
    st.caption(quiz.tries_line(q, attempt), help=t("quiz.tries_help"))

hint_shown = q.id in ss[keys.QUIZ_HINTS] or retry
if retry:  # a numeric answer also hears which way it is off and where to look, never the figure
    off = attempt.results[q.id].retry
    st.warning(t("quiz.retry") + (f"\n\n{off}" if off else ""))
if hint_shown and not done:
    st.info(f"💡 {q.hint}")

row = st.container(horizontal=True, gap="small")  # four buttons, each as wide as its label (instructor type too)
c = [row] * 4
if c[0].button(t("quiz.submit_again") if retry else t("quiz.submit"), type="primary", key=f"quiz.q.{q.id}.submit",
               disabled=done):
    measured = ss[keys.QUIZ_MEASURED].get(q.id)
    unmeasured = q.type == "numeric" and measured is None and not (q.predict and answer is None)
    problem = None if unmeasured else t("quiz.commit_first") if q.predict and answer is None else incomplete(q, answer)
    if unmeasured:
        ss[keys.QUIZ_UNMEASURED] = q.id
    elif problem is not None:
        ss[keys.QUIZ_PROBLEM] = (q.id, problem)
    else:
        attempt.submit(q, answer, measured)
        progress.quiz_answer(q, answer, measured, attempt)
    st.rerun()
if c[1].button(t("quiz.hint_button"), key=f"quiz.q.{q.id}.hint", disabled=hint_shown or done):
    ss[keys.QUIZ_HINTS].add(q.id)
    st.rerun()
if c[2].button(t("quiz.prev"), key="quiz.prev", disabled=index == 0):
    ss[keys.QUIZ_INDEX] = index - 1
    st.rerun()
if c[3].button(t("quiz.next"), key="quiz.next", disabled=index + 1 >= len(order)):
    ss[keys.QUIZ_INDEX] = index + 1
    st.rerun()
if ss.pop(keys.QUIZ_UNMEASURED, None) == q.id:
    st.error(t("quiz.run_first"))
problem = ss.pop(keys.QUIZ_PROBLEM, None)
if problem and problem[0] == q.id:
    st.error(problem[1])

quiz.result(q, attempt)
if score["answered"] == len(order):
    progress.milestone("quiz-finished")
    st.subheader(t("quiz.final2", total=len(order), **score))
