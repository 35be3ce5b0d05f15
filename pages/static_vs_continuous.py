"""Lab: one workload into the static and the continuous batcher, side by side on the same step axis."""
import streamlit as st

from ui import experiments, presets, views
from ui.i18n import choice, t
from ui.player import player

PAGE = "static-vs-continuous"
WORKLOADS = ("high-variance", "chat-and-reports", "uniform", "long-context")
ss = st.session_state

st.title(t("svc.title"))
st.markdown(t("svc.intro"))
presets.preset_buttons(PAGE)
pending = presets.take_pending(PAGE)
if pending:
    ss[f"{PAGE}.workload"], ss[f"{PAGE}.seed"] = pending.workload, pending.seed
    ss[f"{PAGE}.slots"] = pending.settings.get("max_num_seqs", 8)
presets.narration(PAGE)
for name, default in (("workload", WORKLOADS[0]), ("seed", 0), ("slots", 8), ("scale", 1.0), ("live", False)):
    ss.setdefault(f"{PAGE}.{name}", default)

with st.form(f"{PAGE}.form", border=False):
    c = st.columns([3, 1.2, 1.5, 1.5, 1.2, 1.2], vertical_alignment="bottom")
    workload = choice(c[0].selectbox, t("ctl.workload"), WORKLOADS, f"{PAGE}.workload", "wl.")
    seed = c[1].number_input(t("ctl.seed"), 0, 9999, key=f"{PAGE}.seed")
    slots = c[2].number_input("max_num_seqs", 0, 64, key=f"{PAGE}.slots")
    scale = c[3].select_slider(t("ctl.scale"), [0.25, 0.5, 1.0, 1.5], key=f"{PAGE}.scale")
    live = c[4].toggle(t("ctl.live"), key=f"{PAGE}.live", help=t("ctl.live_help"))
    run_clicked = c[5].form_submit_button(t("ctl.run"), type="primary")

if run_clicked or pending:
    if not pending:
        presets.clear(PAGE)
    experiments.start(PAGE, workload, [("static", {"batcher": "static"}), ("continuous", {"batcher": "continuous"})],
                      seed=seed, scale=scale, live=live, common={"max_num_seqs": slots})

runs = experiments.runs(PAGE)
if not runs:
    st.info(t("ctl.press_run"))
else:
    experiments.explain_rejections(runs)

    def render(frame: int) -> None:
        total = max(r.frames for r in runs)
        for col, run in zip(st.columns(len(runs)), runs):
            with col:
                done_at = f" · {t('svc.done_at', step=run.frames - 1)}" if run.done and frame >= run.frames else ""
                st.subheader(f"{t('svc.' + run.label)}{done_at}")
                views.timeline(run, frame, total, key=f"{PAGE}.tl.{run.label}")
                views.queue(run, frame, key=f"{PAGE}.q.{run.label}")
                views.metrics_panel(run, frame)

    player(PAGE, runs, render)
    if all(r.done for r in runs):
        st.subheader(t("svc.summary"))
        views.summary_table(runs)
        views.save_runs(runs, PAGE)
