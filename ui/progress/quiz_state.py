"""The quiz attempt as the session holds it: the question order, the attempt's tries and grades, the figures
the student's runs measured, the question shown and the hints asked for. Started here and nowhere else: by
the quiz page, by a restored `?s=` link and by an imported export."""
from __future__ import annotations

import streamlit as st

from lessons.attempt import Attempt
from lessons.grading import quiz_order
from ui.progress import keys


def begin(questions: dict, attempt: Attempt | None = None, measured: dict | None = None,
          at_first_unanswered: bool = False, predicted: dict | None = None) -> Attempt:
    """A new attempt (or a replayed one) in the session, in the attempt's seeded question order, with what its
    runs measured and the predictions committed. `at_first_unanswered`: show the first question not yet done."""
    ss = st.session_state
    attempt = attempt or Attempt(ss.get(keys.QUIZ_SEED, 0))
    order = [q.id for q in quiz_order(list(questions.values()), attempt.seed)]
    index = next((i for i, qid in enumerate(order) if not attempt.done(qid)), 0) if at_first_unanswered else 0
    ss[keys.QUIZ_ORDER], ss[keys.QUIZ_ATTEMPT], ss[keys.QUIZ_MEASURED] = order, attempt, measured or {}
    ss[keys.QUIZ_INDEX], ss[keys.QUIZ_HINTS], ss[keys.QUIZ_PREDICTED] = index, set(), predicted or {}
    return attempt


def restart(questions: dict) -> Attempt:
    """A new attempt from the first question, its answer widgets empty."""
    ss = st.session_state
    for key in [k for k in ss if str(k).startswith(keys.QUIZ_WIDGET_PREFIX)]:
        del ss[key]
    return begin(questions)


def current(questions: dict) -> Attempt:
    """The session's attempt over these questions; a new one if there is none or the questions changed."""
    ss = st.session_state
    if keys.QUIZ_ORDER not in ss or set(ss[keys.QUIZ_ORDER]) != set(questions) or keys.QUIZ_ATTEMPT not in ss:
        return restart(questions)
    return ss[keys.QUIZ_ATTEMPT]
