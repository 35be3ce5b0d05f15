"""Lab: why batch? The model's decode step at batch sizes 1…64 on this server: measured one session at a time,
round-robin, as medians with their spread, and kept for every session (the instructor may measure again)."""
import streamlit as st

from lessons import page_slugs as slugs
from ui.instructor import access, moments, passcode
from ui.labs import batch_measure, models
from ui.labs.models import get_model
from engine.messages import ConfigError
from ui.shell.i18n import engine_message, labels, t
from ui.shell.style import CHART_CONFIG, instructor, scale_fonts, scaled
from viz.charts import batch_curve

PAGE = slugs.WHY_BATCH
SIZES = (1, 2, 4, 8, 16, 32, 64)
ss = st.session_state

pending, setup, _ = moments.page_header(PAGE, "wb", {"sizes": list(SIZES)})
if pending and pending.batch_sizes:
    ss[f"{PAGE}.sizes"] = list(pending.batch_sizes)

c = setup.columns([4.4, 2.3, 1.3], vertical_alignment="bottom")
sizes = c[0].multiselect(t("wb.sizes"), SIZES, key=f"{PAGE}.sizes")
new_tokens = c[1].number_input(t("wb.new_tokens"), 4, 64, 16, key=f"{PAGE}.tokens")
model, device = models.chosen(), models.device()
curve = batch_measure.shown(model, device, sizes, new_tokens) if sizes else None
# One curve per server, shared: a student sees the kept one. In a class (a passcode is set) only the unlocked
# instructor measures again; alone (no passcode), instructor mode is enough.
teacher = instructor() and (passcode.configured() is None or access.unlocked())
measure = again = False
if curve is None:
    measure = c[2].button(t("wb.measure"), type="primary", key=f"{PAGE}.measure", disabled=not sizes)
elif teacher:
    again = c[2].button(t("wb.remeasure"), key=f"{PAGE}.remeasure", help=t("wb.remeasure_help"))

job, shared = None, False
if sizes:
    curve_key = batch_measure.key(model, device, sizes, new_tokens)
    if measure or again or (pending and curve is None):
        job, shared = batch_measure.request(get_model(model), curve_key, again=again)
    elif curve is None:  # another session is measuring these settings: wait for it, as if this one had asked
        job, shared = batch_measure.CURVES.running(curve_key), True
    elif batch_measure.CURVES.running(curve_key):  # measured again meanwhile: the kept curve until then
        st.caption(t("wb.remeasuring"))
if pending:
    moments.started(PAGE)
if job is not None:
    bar = st.progress(job.progress, text=batch_measure.progress_text(job, shared))
    try:
        job.wait(lambda j: bar.progress(j.progress, text=batch_measure.progress_text(j, shared)))
    except (ConfigError, ValueError) as e:  # a device or model that cannot run: said, and nothing kept
        bar.empty()
        st.error(t("err.config", msg=engine_message(e)))
        st.stop()
    bar.empty()
    if curve is None:  # drawn again with the set-up as it is for a kept curve (no "Measure now")
        st.rerun()
    curve = batch_measure.shown(model, device, sizes, new_tokens)

if curve is None:
    st.info(t("wb.press"))
else:
    ss[f"{PAGE}.rows"] = True  # the set-up folds away on the next rerun (moments.page_header)
    rows = curve.rows
    st.caption(batch_measure.where_when(curve))
    st.plotly_chart(scale_fonts(batch_curve(rows, labels("tok_per_s", "ms_per_step", "batch_size")
                                            | {"cpu_ms_per_step": t("wb.cpu_ms_per_step")}, height=scaled(360))),
                    key=f"{PAGE}.curve", config=CHART_CONFIG, theme=None)
    st.caption(t("wb.reps_note", reps=curve.rounds))

    def ratio(r: dict, name: str) -> str:
        return f"{r[name]:.1f}× ({r[f'{name}_min']:.1f}–{r[f'{name}_max']:.1f})"
    st.dataframe([{t("batch_size"): r["batch"], t("tok_per_s"): round(r["tok_per_s"]),
                   t("wb.tok_range"): f"{r['tok_per_s_min']:.0f}–{r['tok_per_s_max']:.0f}",
                   t("ms_per_step"): round(r["ms_per_step"], 2),
                   t("wb.cpu_ms_per_step"): round(r["cpu_ms_per_step"], 2),
                   t("wb.speedup"): ratio(r, "speedup"),
                   t("wb.step_cost"): ratio(r, "step_cost")} for r in rows], hide_index=True)
    st.caption(t("wb.ratio_note"))
    best = max(rows, key=lambda r: r["speedup"])  # every figure in the sentence is a median over the rounds
    similar = best["step_cost"] < 1.15  # "only 0.9× slower" reads as nonsense: say "about as long" instead
    st.success(t("wb.takeaway_same" if similar else "wb.takeaway", model=model, b=best["batch"],
                 x=best["speedup"], cost=best["step_cost"]))
    st.caption(t("wb.cpu_note"))
