"""Lab: the paged KV cache. Block pool, block tables and the memory split, two layouts side by side."""
import streamlit as st

from lessons import page_slugs as slugs
from ui.labs import bounded, experiments, variants
from ui.instructor import moments
from ui.views import kv, results
from ui.shell.i18n import choice, t
from ui.playback.player import player

PAGE = slugs.PAGED_KV
WORKLOADS = ("chat-and-reports", "shared-system-prompt", "long-context")
VARIANTS = variants.LAYOUTS
ss = st.session_state

pending, setup, notices = moments.page_header(
    PAGE, "kv", {"workload": WORKLOADS[0], "seed": 0, "left": "contiguous", "right": "paged", "prefix": False,
                 "blocks": 0, "block_size": variants.BLOCK_SIZE, "live": False})
if pending:
    ss.update({f"{PAGE}.{key}": value for key, value in moments.form_of(pending).items()})

with setup, st.form(f"{PAGE}.form", border=False):
    # a row for the workload, one for the two layouts: every name and what it means shown whole
    c = st.columns(2, vertical_alignment="bottom")
    workload = choice(c[0].selectbox, t("ctl.workload"), WORKLOADS, f"{PAGE}.workload", "wl.")
    c = st.columns(2, vertical_alignment="bottom")
    left = choice(c[0].selectbox, t("kv.left"), list(VARIANTS), f"{PAGE}.left", "kv.v.")
    right = choice(c[1].selectbox, t("kv.right"), list(VARIANTS), f"{PAGE}.right", "kv.v.")
    c = st.columns([1.5, 1.5, 2.2, 1.6, 1.2], vertical_alignment="bottom")
    blocks = bounded.number(c[0], "num_blocks", 0, 4096, key=f"{PAGE}.blocks", help=t("kv.blocks_help"))
    block_size = bounded.number(c[1], "block_size", 1, 256, key=f"{PAGE}.block_size")
    prefix = c[2].toggle(t("kv.prefix"), key=f"{PAGE}.prefix", help="enable_prefix_caching")
    live = c[3].toggle(t("ctl.live"), key=f"{PAGE}.live", help=t("ctl.live_help"))
    run_clicked = c[4].form_submit_button(t("ctl.run"), type="primary")

with notices:  # drawn in one rerun and not the next: kept above the picture, which keeps its place
    if moments.wants_run(PAGE, run_clicked, pending):
        experiments.start(PAGE, workload, variants.layouts((left, right), prefix, block_size, blocks,
                                                           pending.settings if pending else None),
                          seed=ss[f"{PAGE}.seed"], live=live)
        moments.started(PAGE)

runs = experiments.runs(PAGE)
if not runs:
    st.info(t("ctl.press_run"))
else:
    with notices:
        experiments.explain_rejections(runs, PAGE)
    selected = ss.get(f"{PAGE}.selected") or None

    player(PAGE, runs, lambda frame: kv.side_by_side(PAGE, runs, frame, selected), in_browser=True)
    # below the picture: the class's prediction beside the measured figure, and where to look next
    moments.reveal(PAGE, runs)
    refusals = [(run.label, i) for run in runs if (i := kv.first_refusal(run)) is not None]
    if refusals:
        label, frame = refusals[0]
        st.button(t("kv.jump", label=t(f"kv.v.{label}"), step=frame), key=f"{PAGE}.jump",
                  on_click=lambda f=frame: ss.update({f"{PAGE}.frame": f, f"{PAGE}.playing": False}))
    st.multiselect(t("kv.pick"), [r.request_id for r in runs[0].trace_requests], key=f"{PAGE}.selected",
                   placeholder=t("kv.pick_default"))
    if all(r.done for r in runs):
        st.subheader(t("kv.summary"))
        st.dataframe([{t("sum.run"): t(f"kv.v.{r.label}"), t("sum.kv_waste"): f"{100 * s['kv_waste_share']:.1f}%",
                       t("kv.peak"): f"{100 * s['kv_peak_used_share']:.0f}%",
                       t("kv.peak_blocks"): kv.peak_blocks(r), t("kv.shared_saved"): kv.blocks_saved_by_sharing(r),
                       t("kv.max_concurrent"): s["max_concurrent"],
                       t("sum.tok_per_step"): f"{s['throughput_tok_per_step']:.2f}",
                       t("kv.refusals"): s["admissions_refused_by_fragmentation"],
                       t("sum.preemptions"): s["preemptions"], t("kv.recomputed"): s["recomputed_tokens"],
                       t("kv.swapped"): s["blocks_swapped"], t("kv.cached_tokens"): s["prefix_cached_tokens"],
                       t("sum.steps"): s["steps"]}
                      for r in runs for s in [r.summary()]], hide_index=True)
        st.caption(t("kv.summary_note"))
        results.save_runs(runs, PAGE)
