"""Lecture moments: one click sets a lab up (workload, settings, what to compare) and says what to watch."""
from __future__ import annotations

import re

import streamlit as st

from lessons import load_moments
from lessons import predictions
from ui.shell import nav
from ui.instructor import poll
from ui.labs import bounded, variants
from ui.progress import saved as progress
from ui.progress import keys
from ui.shell.i18n import lang, strings, t
from ui.shell.keys import INSTRUCTOR

_NAMED = re.compile(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`")  # a moment id as the lesson texts quote it
PENDING = "pending_moment"  # session key: a moment opened on another page, set up when its page is drawn
ANSWERED = "pending_moment.answered"  # session key: the queued moment whose prediction is made or skipped
_GO = "pending_moment.go"  # session key: a sidebar click queued a moment; the next run goes to its page
FORM = "pending_moment.form"  # session key: what the queued moment's form takes instead (a student's quiz variant)


def all_moments():
    return load_moments()


def title(moment_id: str) -> str:
    """A moment's short title in the current language (its id if it has none)."""
    return t(f"moment.name.{moment_id}") if f"moment.name.{moment_id}" in strings() else moment_id


def named(text: str) -> str:
    """Text that names moments by id (`fixed-batch-holes`, as the lessons and moments.yaml do) with each named by
    its button's title instead (“Holes in a fixed batch”, 「固定 batch 的空洞」): what a student reads and clicks."""
    known = all_moments()

    def by_title(m):
        return (f"「{title(m.group(1))}」" if lang() == "zh" else f"“{title(m.group(1))}”") if m.group(1) in known \
            else m.group(0)
    return _NAMED.sub(by_title, text)


def narration_text(moment_id: str) -> str:
    """A moment's narration in the current language, other moments named by their titles."""
    return named(all_moments()[moment_id].narration[lang()])


def page_title(page_id: str) -> str:
    """A lab or practice page's title (as in the sidebar) from its url path."""
    key = next((title for entries in nav.SECTIONS.values() for url, _, title, _ in entries if url == page_id), None)
    return t(key) if key else page_id


def open_moment(moment_id: str, form: dict | None = None) -> None:
    """Queue a moment for its page, and go there; the page applies it (with `form`'s values in its form: a
    student's own seed, scale, max_num_seqs) and runs the experiment."""
    _queue(moment_id)
    if form:
        st.session_state[FORM] = form
    nav.go(all_moments()[moment_id].page)


def form_of(moment) -> dict:
    """What the queued moment puts in its page's form (ui.labs.variants.moment_form), with the values it was
    opened with."""
    return variants.moment_form(moment) | st.session_state.get(FORM, {})


def take_pending(page_id: str, where=st):
    """The moment queued for this page, if any. A moment with a prediction question waits until the
    prediction is made (or skipped); the question is drawn in `where`. The moment stays queued until the page
    says its runs have started (`started`): a rerun cut short before that (a second click on Skip lands while
    the first one's rerun sets the runs up) leaves it queued, and the next rerun runs it, not asking again."""
    ss, pid = st.session_state, st.session_state.get(PENDING)
    if not (pid and all_moments().get(pid) and all_moments()[pid].page == page_id):
        return None
    moment = all_moments()[pid]
    if moment.predict and ss.get(ANSWERED) != pid and not _predicted(moment, where):
        return None
    ss[ANSWERED] = pid
    ss[f"{page_id}.moment"] = pid
    ss[f"{page_id}.moment.variant"] = ss.get(FORM)  # a student's quiz variant: the narration's figures are not its
    if f"{page_id}.scale" in ss:
        ss[f"{page_id}.scale"] = 1.0  # a moment is one exact run: the quiz grades against it
    return moment


def wants_run(page_id: str, run_clicked: bool, pending) -> bool:
    """Whether this rerun starts the page's runs: for its queued moment, or for Run with every number box in
    range (else a message names the one that is not, and nothing runs). Run replaces a moment shown before."""
    if pending:
        return True
    if not run_clicked or bounded.refused(page_id):
        return False
    clear(page_id)
    return True


def started(page_id: str) -> None:
    """The page has started the queued moment's runs (or cannot run it): the moment is taken."""
    pid = st.session_state.pop(PENDING, None)
    st.session_state.pop(ANSWERED, None)
    st.session_state.pop(FORM, None)
    if pid:
        progress.milestone(f"moment:{pid}")


def _predicted(moment, where=st) -> bool:
    """Ask for the prediction before the run: True once it is made or skipped."""
    ss, p = st.session_state, moment.predict
    room = bool(ss.get(INSTRUCTOR))
    box = where.empty()  # the question goes away once answered
    with box.form(f"pred.{moment.id}", border=True):
        st.markdown(f"**{t('pred.room' if room else 'pred.title')}** {p[lang()]}")
        if p["kind"] == "number":
            raw = st.text_input(t("pred.number"), key=f"pred.{moment.id}.value")
        else:
            names = poll.choice_names(moment)
            raw = st.radio(t("pred.choice"), list(names), format_func=names.get, index=None,
                           key=f"pred.{moment.id}.value", horizontal=True)
        row = st.container(horizontal=True, gap="medium")  # each button as wide as its label: neither wraps
        go, skip = row.form_submit_button(t("pred.run"), type="primary"), row.form_submit_button(t("pred.skip"))
    if skip:
        ss.get(keys.PREDICTIONS, {}).pop(moment.id, None)
        box.empty()
        return True
    if go:
        made = predictions.record(ss.setdefault(keys.PREDICTIONS, {}), moment, raw, by_room=room)
        if made:
            if not room:
                progress.prediction(moment, made)
            box.empty()
            return True
        st.error(t("pred.not_number" if p["kind"] == "number" else "pred.pick"))
    if room and poll.instructor_panel(moment):  # "close and run": the class's answers are the room's prediction
        box.empty()
        return True
    return False


def reveal(page_id: str, runs) -> None:
    """After the active moment's runs: the prediction next to what the engine measured."""
    pid = st.session_state.get(f"{page_id}.moment")
    if not pid or pid not in all_moments() or not runs or not all(r.done for r in runs):
        return
    moment = all_moments()[pid]
    value = predictions.measured(moment, {r.label: r.summary() for r in runs}, {r.label: r.snapshots for r in runs})
    poll.reveal(pid, value)  # a live poll on this moment: its answers against the measured value
    made = predictions.made(st.session_state.get(keys.PREDICTIONS, {}), pid)
    if not made or value is None:
        return
    if not made.by_room:
        progress.measured(pid, value)
    def shown(v, typed: bool = False) -> str:
        return poll.choice_names(moment)[v] if isinstance(v, str) else predictions.shown(moment, v, lang(), typed)
    st.info(t("pred.reveal", who=t("pred.room_said" if made.by_room else "pred.you_said"),
              guess=shown(made.value, typed=True), measured=shown(value)), icon="🔮")


PLAYING_CSS = """[data-testid="stMainBlockContainer"] {{ padding-top: 1rem; }}
.st-key-{page}-narration [data-testid="stAlert"] p {{ font-size: 0.85rem; line-height: 1.4; }}"""


def narration(page_id: str) -> None:
    """The active moment's narration line, above the experiment."""
    pid = st.session_state.get(f"{page_id}.moment")
    if pid and pid in all_moments():
        text = f"**{t('moment.label')}: {title(pid)}** — {narration_text(pid)}"
        variant = st.session_state.get(f"{page_id}.moment.variant")
        if variant:
            text += ("" if lang() == "zh" else " ") + t("moment.your_variant", seed=variant["seed"],
                                                        scale=f"{variant['scale']:g}", more=_variant_more(variant))
        st.container(key=f"{page_id}-narration").info(text, icon="🎓")


def _variant_more(form: dict) -> str:
    """What else a quiz variant's form sets, by the engine's names: ", max_num_seqs 26" ..."""
    sep = "，" if lang() == "zh" else ", "
    return "".join(f"{sep}{name} {form[key]}" for key, name in (("slots", "max_num_seqs"), ("blocks", "num_blocks"),
                                                                  ("output", "max_tokens")) if form.get(key))


def clear(page_id: str) -> None:
    st.session_state.pop(f"{page_id}.moment", None)
    st.session_state.pop(f"{page_id}.moment.variant", None)


def moment_buttons(page_id: str) -> None:
    """One button per lecture moment that belongs to this page."""
    mine = [p for p in all_moments().values() if p.page == page_id]
    if not mine:
        return
    row = st.container(horizontal=True, gap="small")  # each as wide as its title; a row too full wraps, no title
    for p in mine:
        row.button(f"🎓 {title(p.id)}", key=f"{page_id}.moment-btn.{p.id}", on_click=_queue, args=(p.id,),
                   help=narration_text(p.id), width="content")


def _queue(moment_id: str) -> None:
    st.session_state[PENDING] = moment_id
    st.session_state.pop(FORM, None)  # a moment's own button runs the moment's own form
    st.session_state.pop(ANSWERED, None)  # its prediction is asked anew


def page_header(page_id: str, prefix: str, defaults: dict):
    """A lab's title; its intro, lecture-moment buttons and (drawn by the page into the returned
    container) its form, folded away once there is a run to watch; and the active moment's narration.
    While a run plays, the title and the set-up are hidden, so the picture has the screen (they stay
    rendered: a widget not drawn in a run loses its value). `defaults` seed the page's widgets on a
    first visit. Returns (the moment queued for this page, if any; the set-up container; the notices
    container, where the page draws what comes and goes: a prediction question, a refusal, a start's
    error). Everything that is drawn in one rerun and not the next goes in a container that is always
    there: an element more or fewer above the picture moves it to another place in the page, and the
    browser then builds its charts anew (empty until plotly has loaded again: the picture blanked on ▶)."""
    ss = st.session_state
    header = st.container(key=f"{page_id}-header")
    header.title(t(f"{prefix}.title"))
    for name, value in defaults.items():
        ss.setdefault(f"{page_id}.{name}", value)
    narrated, notices = st.container(), st.container()
    pending = take_pending(page_id, notices)
    has_runs = bool(ss.get(f"{page_id}.runs") or ss.get(f"{page_id}.rows"))
    setup = header.expander(t("ctl.setup"), expanded=not (has_runs or pending), icon="⚙️")
    if ss.get(f"{page_id}.playing"):  # last in the header: what is above keeps its place
        # and the narration smaller, the frame's top margin too: the picture fits 1280x720
        header.html(f"<style>.st-key-{page_id}-header {{ display: none; }} {PLAYING_CSS.format(page=page_id)}</style>")
    with setup:
        st.markdown(t(f"{prefix}.intro"))
        moment_buttons(page_id)
    with narrated:
        narration(page_id)
    return pending, setup, notices


def sidebar_list() -> None:
    """In instructor mode, every lecture moment in the sidebar, one click from the room. A click queues its moment
    in a callback, which Streamlit applies before the script runs, so a click whose rerun is cut short by another
    (a player's or a poll's timer) is not lost; the next run goes to the moment's page."""
    ss = st.session_state
    if ss.pop(_GO, False) and ss.get(PENDING) in all_moments():
        nav.go(all_moments()[ss[PENDING]].page)
    if not ss.get(INSTRUCTOR):
        return
    with st.sidebar.expander(t("side.moments"), expanded=True):
        for p in all_moments().values():
            # the box is titled with the 🎓 already: the narrow sidebar keeps each title on as few lines as it can
            st.button(title(p.id), key=f"side.moment.{p.id}", help=narration_text(p.id), width="stretch",
                      on_click=_queue_and_go, args=(p.id,))


def _queue_and_go(moment_id: str) -> None:
    _queue(moment_id)
    st.session_state[_GO] = True
