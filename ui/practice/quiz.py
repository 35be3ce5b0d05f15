"""The quiz page's pieces: the score by topic, one question's answer widget (a two-tier question's two tiers; for a
numeric question the runs that measure its figure, and for a prediction the number committed before them), and
the result once a question is done."""
from __future__ import annotations

import streamlit as st

from engine.lab.workload import preset
from lessons import TOPICS, incomplete, measure, parse_number, run_spec, shuffled_items, workload_of
from lessons import page_slugs as slugs
from lessons import quiz_variants
from lessons.attempt import Attempt, option_order, reason_order, tries_for
from lessons.grading import figure, typed
from ui.instructor import moments
from ui.labs import experiments
from ui.progress import keys
from ui.progress import saved as progress
from ui.shell import nav
from ui.shell.i18n import lang, t


# a two-tier question's verdict per (answer right, reason right)
TIER_VERDICTS = {(True, True): "quiz.tiers_both", (True, False): "quiz.tiers_answer_only",
                 (False, True): "quiz.tiers_reason_only", (False, False): "quiz.tiers_neither"}


def by_topic(questions: dict, attempt: Attempt) -> None:
    results = attempt.results
    st.table([{t("quiz.topic"): t(f"topic.{topic}"),
               t("quiz.answered"): sum(1 for qid in results if attempt.done(qid) and questions[qid].topic == topic),
               t("quiz.correct"): sum(1 for qid, g in results.items() if g.correct and questions[qid].topic == topic),
               t("quiz.of"): sum(1 for q in questions.values() if q.topic == topic)} for topic in TOPICS])


def student_variant(q):
    """This student's variant of a numeric question (lessons.quiz_variants): None for the moment's own runs."""
    return quiz_variants.variant(q.id, progress.token() or "")


def spec_of(q) -> dict:
    return run_spec(q, variant=student_variant(q))


def slots_of(spec: dict) -> int:
    """The max_num_seqs a question's runs have: the variant's or the moment's, else the workload's own."""
    return spec["settings"].get("max_num_seqs") or preset(spec["workload"]).engine_hints.get("max_num_seqs", 0)


def prompt(q) -> str:
    """The question as this student reads it: a numeric one with its variant's figures filled in."""
    if q.type != "numeric":
        return q.prompt
    spec = spec_of(q)
    return quiz_variants.fill(q.prompt, quiz_variants.givens(q, student_variant(q), preset(spec["workload"]),
                                                             slots_of(spec), q.lang))


def form_of(spec: dict) -> dict:
    """What the lab page's form holds when it shows this variant: its seed, scale, output length (None: the
    workload's), and on the pages that have them max_num_seqs (`slots`) and num_blocks (`blocks`)."""
    form, settings = {"seed": spec["seed"], "scale": spec["scale"]}, spec["settings"]
    if spec["output"]:
        form["output"] = spec["output"]
    if "max_num_seqs" in settings and spec["page"] in (slugs.STATIC_VS_CONTINUOUS, slugs.POLICIES):
        form["slots"] = settings["max_num_seqs"]
    if settings.get("num_blocks") and spec["page"] == slugs.PAGED_KV:
        form["blocks"] = settings["num_blocks"]
    return form


def lab_measured(q, spec: dict):
    """What the question is graded against, from the lab page's finished runs of its moment and variants (both of a
    ratio's), if the page has them, and they are of this student's variant."""
    if st.session_state.get(f"{spec['page']}.moment") != spec["moment"]:
        return None
    drawn_from = workload_of(spec).to_dict() if spec["output"] else spec["workload"]
    if experiments.drawn(spec["page"]) != {"workload": drawn_from, "seed": spec["seed"], "scale": spec["scale"]}:
        return None  # the page's runs are of other requests (a moment's own, or another seed typed in)
    done = {r.label: r for r in experiments.runs(spec["page"]) if r.done}
    run = done.get(spec["label"])
    versus = done.get(spec["versus_label"]) if spec["versus_label"] else None
    if run is None or (spec["versus_label"] and versus is None):
        return None
    if any(getattr(r.config, knob) != spec["settings"][knob] for r in (run, versus) if r is not None
           for knob in ("max_num_seqs", "num_blocks") if knob in spec["settings"]):
        return None  # run with another max_num_seqs or memory than the variant's
    return measure(q, run.summary(), versus.summary() if versus is not None else None)


def answer_widget(q, attempt: Attempt, key: str, done: bool):
    """The student's answer to `q` as its widgets hold it now (a prediction: the one committed, or None)."""
    if q.type in ("single", "multiple"):
        shown = option_order(q, attempt.seed)
        if q.type == "single":
            return st.radio(t("quiz.pick_one"), shown, format_func=q.options.__getitem__, index=None, key=key,
                            disabled=done)
        st.caption(t("quiz.pick_all"))
        return [i for i in shown if st.checkbox(q.options[i], key=f"{key}.{i}", disabled=done)]
    if q.type == "two_tier":
        tier = st.radio(t("quiz.tier_answer"), option_order(q, attempt.seed), format_func=q.options.__getitem__,
                        index=None, key=f"{key}.a", disabled=done)
        why = st.radio(t("quiz.tier_reason"), reason_order(q, attempt.seed), format_func=q.reasons.__getitem__,
                       index=None, key=f"{key}.r", disabled=done)
        return {"answer": tier, "reason": why}
    if q.type == "ordering":
        return st.multiselect(t("quiz.order_items"), shuffled_items(q, attempt.seed), key=key, disabled=done)
    if q.predict:
        return _prediction(q, key, done)
    _numeric_run(q)
    return _figure_input(q, key, done)


def _figure_input(q, key: str, done: bool, label: str | None = None):
    """A number, or for "which class" one of the question's classes."""
    if q.compare == "max_class":
        labels = dict(q.classes)
        return st.radio(label or t("quiz.pick_class"), list(labels), format_func=labels.__getitem__, index=None,
                        key=key, disabled=done, horizontal=True)
    return st.text_input(label or t("quiz.number", unit=q.unit), key=key, disabled=done)


def tries_line(q, attempt: Attempt) -> str:
    """How many tries the question has left ("2 of 2 tries left"): an answer that could not be graded uses none."""
    limit = tries_for(q)
    return t("quiz.tries_left", left=limit - attempt.tries.get(q.id, 0), n=limit)


def _prediction(q, key: str, done: bool):
    """A prediction: committed first (a bad one is refused with a message, nothing counted), then the Run button."""
    predicted = st.session_state.setdefault(keys.QUIZ_PREDICTED, {})
    committed = predicted.get(q.id)
    if committed is None and not done:
        st.caption(t("quiz.predict_note"))
        raw = _figure_input(q, key, done, t("quiz.predict_label", unit=q.unit) if q.compare != "max_class"
                            else t("quiz.predict_class"))
        if st.button(t("quiz.commit"), key=f"{key}.commit"):
            problem = incomplete(q, raw)
            if problem is None:
                predicted[q.id] = raw
                st.rerun()
            st.error(problem)
    elif committed is not None:
        st.info(t("quiz.committed", value=committed_text(q, committed)))
    _numeric_run(q, enabled=committed is not None or done)
    return committed


def committed_text(q, value) -> str:
    """A committed prediction as the student entered it: a class's label, or the number with its unit."""
    if q.compare == "max_class":
        return dict(q.classes).get(value, str(value))
    number = parse_number(value, percent=q.unit == "%")
    return typed(q, number) if number is not None else str(value)


def _settings_text(settings: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items()) or "—"


def _numeric_run(q, enabled: bool = True) -> None:
    """A numeric question is answered from its runs (two for a ratio): made here, or the ones the student watched
    on the lab page. A prediction's runs wait until the prediction is committed."""
    measured = st.session_state[keys.QUIZ_MEASURED]
    spec = spec_of(q)
    title = moments.title(spec["moment"])
    if student_variant(q) is not None:
        blocks = spec["settings"].get("num_blocks")
        st.caption(t("quiz.your_variant", seed=spec["seed"], slots=slots_of(spec),
                     requests=quiz_variants.requests_in(preset(spec["workload"]), spec["scale"]))
                   + (("" if lang() == "zh" else " ") + t("quiz.your_blocks", blocks=blocks) if blocks else ""))
    if spec["versus_settings"] is None:
        st.caption(t("quiz.numeric_help", moment=title, settings=_settings_text(spec["settings"])))
    else:
        st.caption(t("quiz.numeric_help_versus", moment=title, settings=_settings_text(spec["settings"]),
                     versus=_settings_text(spec["versus_settings"])))
    c = st.columns([1.5, 2, 4])
    if c[0].button(t("quiz.run"), key=f"quiz.q.{q.id}.run", disabled=not enabled):
        run = experiments.summary_of_run(workload_of(spec), spec["seed"], spec["settings"])
        versus = (experiments.summary_of_run(workload_of(spec), spec["seed"], spec["versus_settings"])
                  if spec["versus_settings"] is not None and run is not None else None)
        value = measure(q, run, versus)
        if value is not None:
            measured[q.id] = value
    if c[1].button(f"🎓 {t('quiz.open_lab', moment=title)}", key=f"quiz.q.{q.id}.open", disabled=not enabled):
        moments.open_moment(spec["moment"], form_of(spec))
    if not enabled:
        st.caption(t("quiz.commit_first"))
        return
    seen = lab_measured(q, spec)
    labels = ", ".join(x for x in (spec["label"], spec["versus_label"]) if x)
    if seen is not None:  # the runs the student watched on the lab page: one source for page and quiz
        measured[q.id] = seen
        st.success(t("quiz.from_lab", label=labels))
    elif q.id in measured:
        st.success(t("quiz.ran_versus") if spec["versus_settings"] is not None else t("quiz.ran"))


def result(q, attempt: Attempt) -> None:
    """Below a question: right or wrong, the expected answer, the explanation and where to see it."""
    graded = attempt.results.get(q.id)
    if graded is not None and attempt.done(q.id):
        if graded.correct:
            st.success(t("quiz.right") if attempt.tries[q.id] == 1 else t("quiz.right_second"))
        else:
            st.error(t("quiz.wrong"))
        if q.type == "multiple":
            right = round(graded.credit * len(q.options))
            st.caption(t("quiz.option_credit", right=right, n=len(q.options), share=f"{graded.credit:.0%}"))
        if graded.tiers is not None:
            st.caption(t(TIER_VERDICTS[graded.tiers]))
        if graded.message:
            st.caption(graded.message)
        if not graded.correct and graded.expected is not None:
            st.markdown(f"**{t('quiz.expected')}** {_expected_text(q, graded.expected)}")
        st.info(graded.explanation)
        link = q.link
        target = moments.title(link["moment"]) if link.get("moment") else moments.page_title(link["page"])
        if st.button(t("quiz.see", target=target), key=f"quiz.q.{q.id}.link"):
            moments.open_moment(link["moment"]) if link.get("moment") else nav.go(link["page"])


def _expected_text(q, expected) -> str:
    if q.type == "single":
        return q.options[expected]
    if q.type == "multiple":
        return "; ".join(q.options[i] for i in expected)
    if q.type == "two_tier":
        return f"{q.options[expected['answer']]} {t('quiz.because')} {q.reasons[expected['reason']]}"
    if q.type == "ordering":
        return " → ".join(expected)
    if q.compare == "max_class":
        return dict(q.classes).get(expected, str(expected))
    return figure(expected, q.unit, q.lang) if isinstance(expected, (int, float)) else str(expected)
