"""Lab: why batch? Run the model's decode step at batch sizes 1…64 on this device, now."""
import streamlit as st

from lessons import page_slugs as slugs
from engine.lab.experiment import measure_batch_curve
from ui.instructor import moments
from ui.shell.i18n import labels, t
from ui.labs import models
from ui.labs.models import get_model
from ui.shell.style import CHART_CONFIG, scale_fonts, scaled
from viz.charts import batch_curve

PAGE = slugs.WHY_BATCH
SIZES = (1, 2, 4, 8, 16, 32, 64)
REPS = 5  # each size measured this often; the chart shows the median and the range
ss = st.session_state

pending, setup, _ = moments.page_header(PAGE, "wb", {"sizes": list(SIZES)})
if pending and pending.batch_sizes:
    ss[f"{PAGE}.sizes"] = list(pending.batch_sizes)

c = setup.columns([4.4, 2.3, 1.3], vertical_alignment="bottom")
sizes = c[0].multiselect(t("wb.sizes"), SIZES, key=f"{PAGE}.sizes")
new_tokens = c[1].number_input(t("wb.new_tokens"), 4, 64, 16, key=f"{PAGE}.tokens")
measure = c[2].button(t("wb.measure"), type="primary", key=f"{PAGE}.measure", disabled=not sizes)

if (measure or pending) and sizes:
    loaded = get_model(models.chosen())
    bar = st.progress(0.0, text=t("wb.measuring"))
    rows = measure_batch_curve(loaded, sizes, new_tokens, REPS,
                               lambda frac, b: bar.progress(frac, text=t("wb.measuring_b", b=b)))
    bar.empty()
    ss[f"{PAGE}.rows"] = {"model": models.chosen(), "rows": rows}
    moments.started(PAGE)

result = ss.get(f"{PAGE}.rows")
if not result:
    st.info(t("wb.press"))
else:
    rows = result["rows"]
    st.plotly_chart(scale_fonts(batch_curve(rows, labels("tok_per_s", "ms_per_step", "batch_size"),
                                            height=scaled(360))),
                    key=f"{PAGE}.curve", config=CHART_CONFIG, theme=None)
    st.caption(t("wb.reps_note", reps=rows[0].get("reps", 1)))
    base = rows[0]
    st.dataframe([{t("batch_size"): r["batch"], t("tok_per_s"): round(r["tok_per_s"]),
                   t("wb.tok_range"): f"{r.get('tok_per_s_min', r['tok_per_s']):.0f}–"
                                      f"{r.get('tok_per_s_max', r['tok_per_s']):.0f}",
                   t("ms_per_step"): round(r["ms_per_step"], 2),
                   t("wb.speedup"): f"{r['tok_per_s'] / base['tok_per_s']:.1f}×",
                   t("wb.step_cost"): f"{r['ms_per_step'] / base['ms_per_step']:.1f}×"} for r in rows], hide_index=True)
    best = max(rows, key=lambda r: r["tok_per_s"])
    st.success(t("wb.takeaway", model=result["model"], b=best["batch"], x=best["tok_per_s"] / base["tok_per_s"],
                 cost=best["ms_per_step"] / base["ms_per_step"]))
