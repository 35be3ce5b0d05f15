"""The trade-off frontier (engine/lab/frontier.py) on the Scheduling policies page: one knob swept over the page's
workload and seed, each setting a real run (shared with every session that asks for the same run), drawn as
throughput against TTFT or TPOT p95 with the Pareto frontier; an SLO picks the point of most throughput that meets
it, and a table shows what each class's latency is there and at the point of least latency."""
from __future__ import annotations

import streamlit as st

from engine.lab.frontier import KNOBS, LATENCIES, best_within, point, with_frontier
from ui.labs import bounded, experiments
from ui.shell.i18n import choice, class_name, t
from ui.shell.style import CHART_CONFIG, scale_fonts, scaled
from viz.charts import frontier_chart

DEFAULT_SLO = {"ttft_p95": 50.0, "tpot_p95": 2.0}  # steps; steps per token


def sweep_variants(knob: str, base: dict) -> list[tuple[str, dict]]:
    """A run per value of the knob, the page's other settings kept."""
    return [(f"{knob}={value}", {**base, knob: value}) for value in KNOBS[knob]]


def section(page: str, requests: tuple[str, int, float], base: dict) -> None:
    """Below the page's results: the sweep's form, and once swept, its chart and who pays. `requests` is the
    page's (workload, seed, scale)."""
    ss = st.session_state
    st.subheader(t("fr.title"))
    st.caption(t("fr.intro"))
    with st.form(f"{page}.sweep", border=False):
        c = st.columns([2.2, 1.2], vertical_alignment="bottom")
        knob = choice(c[0].selectbox, t("fr.knob"), list(KNOBS), f"{page}.sweep.knob", "fr.knob.")
        swept = c[1].form_submit_button(t("fr.sweep"))
    if swept:
        workload, seed, scale = requests
        made = experiments.start(f"{page}.sweep", workload, sweep_variants(knob, base), seed=seed, scale=scale)
        if made:
            experiments.finish(made)
            ss[f"{page}.sweep.points"] = (knob, requests,
                                          [point(value, run.summary()) for value, run in zip(KNOBS[knob], made)])
        ss.pop(f"{page}.sweep.runs", None)
    got = ss.get(f"{page}.sweep.points")
    if not got:
        return
    knob, (workload, seed, scale), points = got
    st.caption(t("fr.swept", knob=t(f"fr.knob.{knob}"), workload=t(f"wl.{workload}"), seed=seed, scale=f"{scale:g}",
                 n=len(points)))
    c = st.columns([2.2, 1.2], vertical_alignment="bottom")
    # required: a click on the axis shown keeps it (not an empty choice that the chart would read as TTFT)
    latency = choice(c[0].segmented_control, t("fr.latency"), LATENCIES, f"{page}.sweep.latency", "fr.",
                     required=True) or LATENCIES[0]
    ss.setdefault(f"{page}.sweep.slo.{latency}", DEFAULT_SLO[latency])
    slo = bounded.number(c[1], t(f"fr.slo.{latency}"), 0.1, 100_000.0, key=f"{page}.sweep.slo.{latency}",
                         help=t("fr.slo_help"), step=0.1 if latency == "tpot_p95" else 1.0)
    if bounded.refused(f"{page}.sweep.slo"):
        return
    points = with_frontier(points, latency)
    chosen = best_within(points, slo, latency)
    labels = {"frontier": t("fr.frontier"), "on": t("fr.on"), "off": t("fr.off"), "chosen": t("fr.chosen"),
              "latency": t(f"fr.{latency}"), "throughput": t("fr.throughput")}
    st.plotly_chart(scale_fonts(frontier_chart(points, latency, labels, chosen, slo, height=scaled(360))),
                    key=f"{page}.sweep.chart", config=CHART_CONFIG, theme=None)
    if chosen is None:
        st.warning(t("fr.none_meets", slo=f"{slo:g}", latency=t(f"fr.{latency}")))
        return
    least = min(points, key=lambda p: (p.latency[latency] is None, p.latency[latency] or 0, -p.throughput))
    name = t(f"fr.{latency}")
    compared = [chosen] if least.value == chosen.value else [chosen, least]
    st.markdown(t("fr.chosen_text", value=chosen.value, throughput=f"{chosen.throughput:.2f}",
                  figure=f"{chosen.latency[latency]:.2f}", latency=name, slo=f"{slo:g}") + " "
                + (t("fr.fastest_too", latency=name) if len(compared) == 1
                   else t("fr.who_pays", latency=name, fastest=least.value)))
    st.table([{t("fr.class"): class_name(c),
               **{t("fr.at", value=p.value): _shown(p.by_class.get(c, {}).get(latency)) for p in compared}}
              for c in chosen.by_class])


def _shown(value) -> str:
    return "–" if value is None else f"{value:.2f}"
