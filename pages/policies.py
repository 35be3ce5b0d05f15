"""Lab: scheduling policies side by side: who waits, who meets the SLO, how fair, at what cost."""
import streamlit as st

from lessons import page_slugs as slugs
from engine.config import EngineConfig
from engine.lab.metrics import request_metrics
from ui.labs import bounded, experiments, frontier, variants
from ui.instructor import moments
from ui.views import results, slots
from ui.shell.i18n import choice, class_name, labels, t
from ui.playback.player import player
from ui.shell.style import CHART_CONFIG, scale_fonts, scaled
from viz.charts import class_boxes, grouped_bars

PAGE = slugs.POLICIES
WORKLOADS = ("support-bot-vs-batch", "chat-and-reports", "three-kinds")
VARIANTS = variants.SCHEDULERS
ss = st.session_state

pending, setup, notices = moments.page_header(
    PAGE, "pol", {"workload": WORKLOADS[0], "seed": 0, "policies": ["fcfs", "priority", "edf"],
                  "aging": EngineConfig.default("priority_aging_steps"), "slots": 0, "scale": 1.0,
                  "live": False})
if pending:
    ss.update({f"{PAGE}.{key}": value for key, value in moments.form_of(pending).items()})

with setup, st.form(f"{PAGE}.form", border=False):
    # a row each for the workload and the policies (four names take a row's width, a workload's name and what it
    # means more than half of one), then the numbers: priority_aging_steps (an identifier) never wraps
    c = st.columns([1.3, 1])
    workload = choice(c[0].selectbox, t("ctl.workload"), WORKLOADS, f"{PAGE}.workload", "wl.")
    scale = c[1].select_slider(t("ctl.scale"), variants.SCALES, key=f"{PAGE}.scale")
    chosen = choice(st.multiselect, t("pol.policies"), tuple(VARIANTS), f"{PAGE}.policies", "pol.", max_selections=4)
    c = st.columns([1.1, 1.5, 1.9, 1.5, 1, 0.8], vertical_alignment="bottom")  # 「现场」 and its help on one line
    seed = bounded.number(c[0], t("ctl.seed"), 0, 9999, key=f"{PAGE}.seed")
    num_seqs = bounded.number(c[1], "max_num_seqs", 0, 64, key=f"{PAGE}.slots", help=t("pol.slots_help"))
    aging = bounded.number(c[2], "priority_aging_steps", 1, 10_000, key=f"{PAGE}.aging", help=t("pol.aging_help"))
    live = c[3].toggle(t("ctl.live"), key=f"{PAGE}.live", help=t("ctl.live_help"))
    run_clicked = c[4].form_submit_button(t("ctl.run"), type="primary")

with notices:  # drawn in one rerun and not the next: kept above the picture, which keeps its place
    if moments.wants_run(PAGE, run_clicked, pending):
        if len(chosen) < 2:
            st.error(t("pol.need_two"))
        else:
            experiments.start(PAGE, workload, variants.schedulers(chosen, aging, num_seqs), seed=seed, scale=scale,
                              live=live)
        moments.started(PAGE)

def axis_name(run) -> str:
    """A policy's name under its group of bars, its explanation on a second line (half the window is narrow)."""
    name = t(f"pol.{run.label}")
    return name.replace(" (", "<br>(", 1) if " (" in name else name.replace(" ", "<br>", 1)  # 「FCFS<br>先来先服务」


runs = experiments.runs(PAGE)
if not runs:
    st.info(t("ctl.press_run"))
else:
    with notices:
        experiments.explain_rejections(runs, PAGE)

    player(PAGE, runs, lambda frame: slots.side_by_side(PAGE, runs, frame, lambda run: t(f"pol.{run.label}"),
                                                        by_class=True, height=240), in_browser=True)
    moments.reveal(PAGE, runs)
    if all(r.done for r in runs):
        st.subheader(t("pol.results"))
        per_request = {axis_name(r): [request_metrics(q, r.config.max_num_batched_tokens)
                                      for q in r.recorder.requests.values()] for r in runs}
        lab = labels("queue_steps", "ttft_steps") | {"queue_steps": t("pol.wait_axis")}  # short: the chart is low
        names = {q.request_class: class_name(q.request_class) for r in runs for q in r.recorder.requests.values()}
        c1, c2 = st.columns(2)
        c1.markdown(f"**{t('pol.wait_dist')}**")
        boxes = class_boxes(per_request, "queue_steps", lab, height=scaled(320), names=names)
        c1.plotly_chart(scale_fonts(boxes), key=f"{PAGE}.box",
                        config=CHART_CONFIG, theme=None)
        slo = {axis_name(r): {cls: d["slo_attainment"] for cls, d in r.summary()["by_class"].items()
                              if d["slo_attainment"] is not None} for r in runs}
        c2.markdown(f"**{t('pol.slo')}**")
        bars = grouped_bars(slo, {}, t("m.slo"), percent=True, height=scaled(320), names=names)
        c2.plotly_chart(scale_fonts(bars), key=f"{PAGE}.slo",
                        config=CHART_CONFIG, theme=None)
        results.summary_table(runs)
        results.save_runs(runs, PAGE)

# the trade-off frontier: the page's workload, seed, request count and settings, one knob swept
frontier.section(PAGE, (workload, seed, scale), {"priority_aging_steps": aging, "policy": (chosen or ["fcfs"])[0],
                                                   **({"max_num_seqs": num_seqs} if num_seqs else {})})
