"""The quiz page's pieces: the score by topic, one question's answer widget (for a numeric question, the run
that measures its figure), and the result once a question is done."""
from __future__ import annotations

import streamlit as st

from lessons import TOPICS, metric_value, run_spec, shuffled_items
from lessons.attempt import Attempt, option_order
from ui.instructor import moments
from ui.labs import experiments
from ui.progress import keys
from ui.shell import nav
from ui.shell.i18n import t


def by_topic(questions: dict, attempt: Attempt) -> None:
    results = attempt.results
    st.table([{t("quiz.topic"): t(f"topic.{topic}"),
               t("quiz.answered"): sum(1 for qid in results if attempt.done(qid) and questions[qid].topic == topic),
               t("quiz.correct"): sum(1 for qid, g in results.items() if g.correct and questions[qid].topic == topic),
               t("quiz.of"): sum(1 for q in questions.values() if q.topic == topic)} for topic in TOPICS])


def lab_measured(q, spec: dict) -> float | None:
    """The question's figure from the lab page's finished run of its moment and variant, if there is one."""
    if st.session_state.get(f"{spec['page']}.moment") != spec["moment"]:
        return None
    run = next((r for r in experiments.runs(spec["page"]) if r.label == spec["label"] and r.done), None)
    return metric_value(run.summary(), q.metric) if run else None


def answer_widget(q, attempt: Attempt, key: str, done: bool):
    """The student's answer to `q` as its widgets hold it now."""
    if q.type in ("single", "multiple"):
        shown = option_order(q, attempt.seed)
        if q.type == "single":
            return st.radio(t("quiz.pick_one"), shown, format_func=q.options.__getitem__, index=None, key=key,
                            disabled=done)
        st.caption(t("quiz.pick_all"))
        return [i for i in shown if st.checkbox(q.options[i], key=f"{key}.{i}", disabled=done)]
    if q.type == "ordering":
        return st.multiselect(t("quiz.order_items"), shuffled_items(q, attempt.seed), key=key, disabled=done)
    _numeric_run(q)
    return st.text_input(t("quiz.number", unit=q.unit), key=key, disabled=done)


def _numeric_run(q) -> None:
    """A numeric question is answered from a run: made here, or the one the student watched on the lab page."""
    measured = st.session_state[keys.QUIZ_MEASURED]
    spec = run_spec(q)
    settings = ", ".join(f"{k}={v}" for k, v in spec["settings"].items()) or "—"
    st.caption(t("quiz.numeric_help", moment=moments.title(spec["moment"]), settings=settings))
    c = st.columns([1.5, 2, 4])
    if c[0].button(t("quiz.run"), key=f"quiz.q.{q.id}.run"):
        summary = experiments.summary_of_run(spec["workload"], spec["seed"], spec["settings"])
        if summary is not None:
            measured[q.id] = metric_value(summary, q.metric)
    if c[1].button(f"🎓 {t('quiz.open_lab', moment=moments.title(spec['moment']))}", key=f"quiz.q.{q.id}.open"):
        moments.open_moment(spec["moment"])
    seen = lab_measured(q, spec)
    if seen is not None:  # the run the student watched on the lab page: one source for page and quiz
        measured[q.id] = seen
        st.success(t("quiz.from_lab", label=spec["label"]))
    elif q.id in measured:
        st.success(t("quiz.ran"))


def result(q, attempt: Attempt) -> None:
    """Below a question: right or wrong, the expected answer, the explanation and where to see it."""
    graded = attempt.results.get(q.id)
    if graded is not None and attempt.done(q.id):
        if graded.correct:
            st.success(t("quiz.right") if attempt.tries[q.id] == 1 else t("quiz.right_second"))
        else:
            st.error(t("quiz.wrong"))
        if graded.message:
            st.caption(graded.message)
        if not graded.correct and graded.expected is not None:
            st.markdown(f"**{t('quiz.expected')}** {_expected_text(q, graded.expected)}")
        st.info(graded.explanation)
        link = q.link
        target = moments.title(link["moment"]) if link.get("moment") else moments.page_title(link["page"])
        if st.button(t("quiz.see", target=target), key=f"quiz.q.{q.id}.link"):
            moments.open_moment(link["moment"]) if link.get("moment") else nav.go(link["page"])
    elif graded is not None and graded.message:
        st.caption(graded.message)


def _expected_text(q, expected) -> str:
    if q.type == "single":
        return q.options[expected]
    if q.type == "multiple":
        return "; ".join(q.options[i] for i in expected)
    if q.type == "ordering":
        return " → ".join(expected)
    return expected
