"""Playground: every engine knob and workload parameter, trace upload and replay, run history, downloads."""
import dataclasses

import streamlit as st

from lessons import page_slugs as slugs
from engine.lab.trace import TraceError, packed, read_trace
from engine.lab.workload import PRESETS, preset
from engine.messages import ConfigError
from ui.labs import bounded, downloads, experiments, history
from ui.views import base, export, kv, results, slots
from ui.shell.i18n import choice, engine_message, labels, t
from ui.labs.knobs import apply_hints, engine_knobs
from ui.playback.player import player
from ui.labs.workload_editor import editor, to_workload
from ui.labs import models

PAGE = slugs.PLAYGROUND
SOURCES = ("preset", "custom", "trace")
ss = st.session_state

st.title(t("pg.title"))
st.markdown(t("pg.intro"))

ss.setdefault(f"{PAGE}.source", "preset")
source = choice(st.segmented_control, t("pg.source"), SOURCES, f"{PAGE}.source", "pg.source.", required=True)
workload, requests, trace = None, None, None
picker = st.columns([2, 1])[0]  # a preset's name and what it means (the chapter's three kinds: long) on a row
c = st.columns([1, 1.5, 1.5, 2])  # the seed; the scale or the shared prefix; the temperature
seed = bounded.number(c[0], t("ctl.seed"), 0, 9999, value=0, key=f"{PAGE}.seed")
if source == "preset":
    name = choice(picker.selectbox, t("ctl.workload"), list(PRESETS), f"{PAGE}.workload", "wl.")
    scale = c[1].select_slider(t("ctl.scale"), [0.25, 0.5, 1.0, 2.0, 4.0], 1.0, key=f"{PAGE}.scale")
    workload = preset(name).scaled(scale)
    apply_hints(PAGE, name, workload.engine_hints)
    if workload.engine_hints:
        st.caption(t("pg.hints_applied", hints=", ".join(f"{k}={v}" for k, v in workload.engine_hints.items())))
    # The knobs now carry the suggestions; the run uses the knobs alone, exactly as shown.
    workload = dataclasses.replace(workload, engine_hints={})
elif source == "custom":
    st.caption(t("pg.custom_help"))
    rows = editor(f"{PAGE}.classes")
    prefix_tokens = bounded.number(c[1], t("pg.shared_prefix"), 0, 400, value=0, key=f"{PAGE}.prefix_tokens")
    temperature = bounded.number(c[2], t("pg.temperature"), 0.0, 2.0, value=0.0, step=0.1, key=f"{PAGE}.temperature")
    try:
        workload = to_workload(rows, prefix_tokens, temperature)
    except ConfigError as e:
        st.error(t("err.workload", msg=engine_message(e)))
else:
    upload = st.file_uploader(t("pg.upload"), type=["jsonl", "json", "txt"], key=f"{PAGE}.upload")
    if upload is not None:
        try:  # parsed once per upload (a recorded run can be tens of MB), its steps kept as packed columns
            if ss.get(f"{PAGE}.trace_id") != upload.file_id:
                ss[f"{PAGE}.trace"], ss[f"{PAGE}.trace_id"] = packed(read_trace(upload.getvalue())), upload.file_id
            trace = ss[f"{PAGE}.trace"]
        except TraceError as e:
            ss.pop(f"{PAGE}.trace_id", None)
            st.error(t("err.trace", msg=engine_message(e)))
        else:
            st.success(t("pg.trace_ok", requests=len(trace.requests), frames=len(trace.snapshots),
                         model=trace.header.get("model", "?")))

with st.expander(t("pg.knobs"), expanded=source != "trace"):
    knobs = engine_knobs(PAGE)

row = st.container(horizontal=True, vertical_alignment="center", gap="medium")  # each at its own width
live = row.toggle(t("ctl.live"), key=f"{PAGE}.live", help=t("ctl.live_help"))
replay = trace is not None and bool(trace.snapshots) and row.toggle(t("pg.replay_frames"), True, key=f"{PAGE}.replay")
# what a Run click draws (a refusal, an error) is drawn in one rerun and not the next: in a container that is
# always there, so the picture below keeps its place and its charts are not built anew (ui/instructor/moments.py)
notices = st.container()
with notices:
    if row.button(t("ctl.run"), type="primary", key=f"{PAGE}.run", disabled=workload is None and trace is None) \
            and not bounded.refused(PAGE):
        label = f"#{len(history.rows(PAGE)) + 1}"
        if trace is not None and replay:
            made = experiments.replay(PAGE, trace, label)
        elif trace is not None:
            made = experiments.start_requests(PAGE, trace.requests, [(label, knobs)], live=live) if trace.requests \
                else st.error(t("err.trace", msg=t("pg.no_requests"))) or None
        else:
            made = experiments.start(PAGE, workload, [(label, knobs)], seed=seed, live=live)
        if made:
            ss[f"{PAGE}.name"] = f"{label} · " + (trace.header.get("workload", "trace") if trace else workload.name)

runs = experiments.runs(PAGE)
if runs:
    run = runs[0]
    with notices:
        experiments.explain_rejections(runs, PAGE)
    cfg = run.config
    st.caption(t("pg.running_config", name=ss.get(f"{PAGE}.name", run.label), batcher=cfg.batcher, policy=cfg.policy,
                 kv=cfg.kv_layout, seqs=cfg.max_num_seqs, blocks=cfg.num_blocks, bs=cfg.block_size,
                 budget=cfg.max_num_batched_tokens))
    capped = sum(1 for r in run.recorder.requests.values()
                 if r.num_prompt_tokens + r.sampling_params.max_tokens > cfg.max_model_len)
    if capped:
        st.info(t("pg.capped", n=capped, max_model_len=cfg.max_model_len))

    def render(frame: int) -> None:
        left, right = st.columns([3, 2])
        with left:
            slots.timeline(run, frame, lambda: base.total_frames(runs), key=f"{PAGE}.tl")
            slots.queue(run, frame, key=f"{PAGE}.q")
            results.metrics_panel(run, frame, key=f"{PAGE}.m")
        with right:
            kv.memory(run, frame, base.total_frames(runs), key=f"{PAGE}.mem")

    player(PAGE, runs, render, in_browser=True)

    if run.done:
        name = ss.get(f"{PAGE}.name", run.label)
        history.record(PAGE, run, name)
        st.subheader(t("pg.downloads"))
        st.caption(t("pg.png_hint"))
        safe = name.replace(" ", "").replace("·", "-").replace("#", "run")
        downloads.buttons(run, safe, {"model": models.chosen(), "workload": name}, lambda: export.figures(run),
                          labels("metrics_json", "requests_csv", "trace", "figures"))

history.show(PAGE)
