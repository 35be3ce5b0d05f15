"""The policy challenge: the student writes a priority key, sees it run beside FCFS and a built-in on the public
seed with every axis of its grade, and submits it, paced, for grading on their class's hidden seeds: of those only
the score reaches the page (the seeds and the per-axis figures stay on the server and in the store)."""
from __future__ import annotations

import math

import streamlit as st

from classroom import PolicySubmission
from classroom.challenge_pace import CLASS_PER_HOUR, SUBMIT_GAP_S
from engine.lab.challenge import PUBLIC_SEED, builtin_run, fcfs_run, grade_runs, hidden_seeds, key_pairs, run_key
from engine.lab.challenge_score import DEFAULT_TARGETS
from engine.policy_key import PolicyKeyError, compile_key
from engine.policy_key import FIELDS as POLICY_KEY_FIELDS
from lessons import page_slugs as slugs
from ui.labs import experiments, models
from ui.labs.models import get_model
from ui.playback.player import player, show_end
from ui.practice import challenge_grade
from ui.progress import saved as progress
from ui.shell import a11y
from ui.shell.i18n import choice, engine_message, t
from ui.views import results, slots

PAGE = slugs.CHALLENGE
KEY, VICTIM, PREEMPTIVE = f"{PAGE}.key", f"{PAGE}.victim", f"{PAGE}.preemptive"
COMPARE, ANONYMOUS, EXAMPLE = f"{PAGE}.compare", f"{PAGE}.anonymous", f"{PAGE}.example"
ERROR, TRIAL, SUBMITTED = f"{PAGE}.error", f"{PAGE}.trial", f"{PAGE}.submitted"  # SUBMITTED: a score, no more
SECRET = "policy-challenge-seeds"  # the server secret a class's hidden seeds are drawn with
BUILTINS = ("sjf", "priority", "edf")  # the one shown beside the student's key and FCFS
PROGRESS_EVERY = 25  # steps between two progress lines while a run is computed
# starting points: (order key, victim key, preemptive)
EXAMPLES = {
    "fcfs": ("arrival_step", "", False),
    "sjf": ("num_prompt_tokens + max_tokens", "", False),
    "aging": ("max(0, priority - waited // 20)", "", True),
    "edf": ("deadline", "tokens_left", True),
}
ss = st.session_state


def _load_example() -> None:
    key, victim, preemptive = EXAMPLES[ss[EXAMPLE]]
    ss[KEY], ss[VICTIM], ss[PREEMPTIVE] = key, victim, preemptive
    ss.pop(ERROR, None)


def editor() -> tuple:
    """The key, the victim key and the preemptive switch, with the fields listed beside them (in a box of their
    own height, so the buttons and a refusal stay on the first screen)."""
    ss.setdefault(KEY, EXAMPLES["fcfs"][0])
    ss.setdefault(VICTIM, "")
    ss.setdefault(PREEMPTIVE, False)
    ss.setdefault(EXAMPLE, "fcfs")
    ss.setdefault(COMPARE, "sjf")
    left, right = st.columns([3, 2], gap="large")
    with left:
        c = st.columns([2, 1], vertical_alignment="bottom")
        choice(c[0].selectbox, t("ch.example"), list(EXAMPLES), EXAMPLE, "ch.example.")
        c[1].button(t("ch.load_example"), key=f"{PAGE}.load", on_click=_load_example)
        # no max_chars: a browser drops a paste past it without a word; the key's check refuses it with the limit
        st.text_area(t("ch.key"), key=KEY, height=90, help=t("ch.key_help"))
        st.text_input(t("ch.victim"), key=VICTIM, help=t("ch.victim_help"))
        a11y.checked_as_typed(KEY, VICTIM)  # a typo is named at a pause in typing, not only when the box is left
        st.toggle(t("ch.preemptive"), key=PREEMPTIVE, help=t("ch.preemptive_help"))  # a sentence: a row of its own
        choice(st.columns(2)[0].selectbox, t("ch.compare"), BUILTINS, COMPARE, "pol.")
    with right:
        st.markdown(f"**{t('ch.fields')}**")
        with st.container(height=330, key=f"{PAGE}-fields"):
            # a list, not a table: it wraps in a narrow column and at instructor mode's type size
            st.markdown("\n".join(f"- `{name}`: {t(f'ch.field.{name}')}" for name in POLICY_KEY_FIELDS))
            st.caption(t("ch.functions"))
    return left, ss[KEY], ss[VICTIM], ss[PREEMPTIVE]


def refusal(key: str, victim: str) -> tuple[str, PolicyKeyError] | None:
    """(which text, why) for the first of the two keys that is refused, or None."""
    for which, text in (("key", key), ("victim", victim)):
        if which == "victim" and not text.strip():
            continue
        try:
            compile_key(text)
        except PolicyKeyError as e:
            return which, e
    return None


def show_refusal(which: str, text: str, error: PolicyKeyError) -> None:
    """The message in the student's language, and the line with a caret under the column it names."""
    st.error(t(f"ch.refused.{which}", msg=engine_message(error)))
    params = error.message.params if error.message else {}
    if "line" in params and "request_id" not in params:
        lines = text.strip().splitlines() or [""]
        line = lines[min(params["line"], len(lines)) - 1]
        st.code(f"{line}\n{' ' * (params['column'] - 1)}^", language=None)


def class_code() -> str:
    me = progress.me()
    return (me.class_code if me else "") or ""


def class_targets() -> dict[str, float]:
    """The targets of the student's class, set by the instructor (the defaults where unset or unreadable)."""
    code = class_code()
    return progress.with_store(lambda db: db.challenge_targets(code)) or dict(DEFAULT_TARGETS)


def run_beside(key: str, victim: str, preemptive: bool) -> None:
    """The key on the public seed, run to the end here (a key that fails stops here, with its message), beside
    FCFS and the chosen built-in on the same requests (those two made once for every student); the views play
    the three recordings."""
    loaded = get_model(models.chosen())
    said = st.empty()
    try:
        trial = run_key(loaded, PUBLIC_SEED, key, victim or None, preemptive,
                        on_step=lambda snap: _progress(said, t("ch.progress_run", step=snap.step), snap))
    except PolicyKeyError as e:
        ss[ERROR] = ("key", e, key, victim)
        return
    finally:
        said.empty()
    fcfs = fcfs_run(loaded, PUBLIC_SEED)
    ss[TRIAL] = grade_runs([(trial, fcfs)], class_targets())
    shown = experiments.show_recorded(PAGE, [("key", trial), ("fcfs", fcfs),
                                             (ss[COMPARE], builtin_run(loaded, PUBLIC_SEED, ss[COMPARE]))])
    show_end(PAGE, shown)


def submit(key: str, victim: str, preemptive: bool, anonymous: bool) -> None:
    """If the pace allows (the store counts it), graded on the class's hidden seeds and stored; the page keeps
    the score alone."""
    ss.pop(SUBMITTED, None)
    tok = progress.token(create=True)
    secret = progress.with_store(lambda db: db.server_secret(SECRET)) if tok else None
    if not tok or secret is None:
        st.error(t("ch.no_store"))
        return
    wait = progress.with_store(lambda db: db.claim_submission(tok))
    if wait is None:
        return
    if wait > 0:
        st.warning(t("ch.paced", minutes=math.ceil(wait / 60), gap=round(SUBMIT_GAP_S / 60),
                     per_hour=CLASS_PER_HOUR))
        return
    said = st.empty()
    try:
        pairs = key_pairs(get_model(models.chosen()), key, hidden_seeds(secret, class_code()), victim or None,
                          preemptive, on_step=lambda k, n, snap: _progress(
                              said, t("ch.progress_seed", k=k, n=n, step=snap.step), snap))
        grade = grade_runs(pairs, class_targets())
    except PolicyKeyError as e:
        ss[ERROR] = ("key", e, key, victim)
        return
    finally:
        said.empty()
    stored = progress.with_store(lambda db: db.submit_policy(tok, PolicySubmission(key, victim, preemptive,
                                                                                   anonymous, grade.to_dict())))
    if stored is not None:
        ss[SUBMITTED] = round(grade.score(), 1)
        progress.milestone("policy-submitted")


def _progress(said, text: str, snap) -> None:
    """How far the engine has got, under the spinner: every PROGRESS_EVERY steps (each update is a message to the
    browser)."""
    if snap.step % PROGRESS_EVERY == 0:
        said.caption(text)


def title(run) -> str:
    return t("ch.yours") if run.label == "key" else t(f"pol.{run.label}")


def page() -> None:
    left, key, victim, preemptive = editor()
    with left:
        row = st.container(horizontal=True, vertical_alignment="center", gap="medium")
        run_clicked = row.button(t("ch.run"), type="primary", key=f"{PAGE}.run")
        submit_clicked = row.button(t("ch.submit"), key=f"{PAGE}.submit")
        anonymous = row.checkbox(t("ch.anonymous"), key=ANONYMOUS)
        # in the editor's column: full width, it met the fields' scrolled list (hidden rows lie below its box)
        st.caption(t("ch.pace", gap=round(SUBMIT_GAP_S / 60), per_hour=CLASS_PER_HOUR))
        notices = st.container()
    with notices:
        _act(run_clicked, submit_clicked, key, victim, preemptive, anonymous)
    _results()


def _act(run_clicked: bool, submit_clicked: bool, key: str, victim: str, preemptive: bool, anonymous: bool) -> None:
    """What a click does, and a refusal under the buttons. The keys are checked on every run of the page (a key
    is sent when its box loses focus), so a refusal always belongs to the keys on screen: a typo is named before
    Run, and its message goes the moment the key is changed, as does a failure of an earlier key's run."""
    if run_clicked or submit_clicked or ss.get(ERROR, ())[2:] != (key, victim):
        ss.pop(ERROR, None)
    refused = refusal(key, victim)
    if refused:
        ss[ERROR] = (*refused, key, victim)
    elif run_clicked:
        with st.spinner(t("ch.running")):
            run_beside(key, victim, preemptive)
    elif submit_clicked:
        with st.spinner(t("ch.grading")):
            submit(key, victim, preemptive, anonymous)
    if ERROR in ss:
        which, error = ss[ERROR][:2]
        show_refusal(which, victim if which == "victim" else key, error)


def _results() -> None:
    runs = experiments.runs(PAGE)
    if runs and ERROR not in ss:
        st.subheader(t("ch.beside"))
        player(PAGE, runs, lambda frame: slots.side_by_side(PAGE, runs, frame, title, by_class=True, height=220),
               in_browser=True)
        if TRIAL in ss:
            st.subheader(t("ch.public_grade", seed=PUBLIC_SEED))
            challenge_grade.show(ss[TRIAL], f"{PAGE}.trial")
        if all(r.done for r in runs):
            results.summary_table(runs)
    if SUBMITTED in ss:
        st.subheader(t("ch.hidden_grade"))
        st.markdown(t("ch.hidden_score", score=f"{ss[SUBMITTED]:.1f}"))
    challenge_grade.class_board()
