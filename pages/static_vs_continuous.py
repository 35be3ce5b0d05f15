"""Lab: one workload into the static and the continuous batcher, side by side on the same step axis."""
import streamlit as st

from engine.lab.workload import preset
from lessons import page_slugs as slugs
from ui.labs import bounded, experiments, variants
from ui.instructor import moments
from ui.views import results, slots
from ui.shell.i18n import choice, t
from ui.playback.player import player

PAGE = slugs.STATIC_VS_CONTINUOUS
WORKLOADS = ("high-variance", "chat-and-reports", "uniform", "online-uniform", "long-context")
ss = st.session_state

pending, setup, notices = moments.page_header(PAGE, "svc", {"workload": WORKLOADS[0], "seed": 0, "slots": 8,
                                                           "scale": 1.0, "live": False})
if pending:
    ss.update({f"{PAGE}.{key}": value for key, value in moments.form_of(pending).items()})

with setup, st.form(f"{PAGE}.form", border=False):
    # two rows: a workload's name and what it means take a row's width, and 「现场」 and its help fit on one line
    c = st.columns([3.4, 1, 1.6], vertical_alignment="bottom")
    workload = choice(c[0].selectbox, t("ctl.workload"), WORKLOADS, f"{PAGE}.workload", "wl.")
    seed = bounded.number(c[1], t("ctl.seed"), 0, 9999, key=f"{PAGE}.seed")
    num_seqs = bounded.number(c[2], "max_num_seqs", 0, 64, key=f"{PAGE}.slots")
    c = st.columns([3.4, 1.4, 1.2], vertical_alignment="bottom")
    scale = c[0].select_slider(t("ctl.scale"), variants.SCALES, key=f"{PAGE}.scale")
    live = c[1].toggle(t("ctl.live"), key=f"{PAGE}.live", help=t("ctl.live_help"))
    run_clicked = c[2].form_submit_button(t("ctl.run"), type="primary")

with notices:  # drawn in one rerun and not the next: kept above the picture, which keeps its place
    if moments.wants_run(PAGE, run_clicked, pending):
        # a quiz variant's own output length comes with its moment; the page's Run keeps the workload's
        output = moments.form_of(pending).get("output") if pending else None
        drawn = preset(workload).scaled(scale).with_output(output) if output else workload
        experiments.start(PAGE, drawn, variants.batchers(num_seqs), seed=seed, scale=scale, live=live)
        moments.started(PAGE)

runs = experiments.runs(PAGE)
if not runs:
    st.info(t("ctl.press_run"))
else:
    with notices:
        experiments.explain_rejections(runs, PAGE)

    player(PAGE, runs, lambda frame: slots.side_by_side(PAGE, runs, frame, lambda run: t(f"svc.{run.label}")),
           in_browser=True)
    moments.reveal(PAGE, runs)
    if all(r.done for r in runs):
        st.subheader(t("svc.summary"))
        results.summary_table(runs)
        results.save_runs(runs, PAGE)
