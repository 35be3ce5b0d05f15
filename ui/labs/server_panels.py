"""Real server page glue: the lab's own server (start/stop), what a URL serves, the live load run,
the in-process run beside it, and the rate sweep. Figures come from viz/server.py."""
from __future__ import annotations

import asyncio
import atexit
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import streamlit as st

from engine.config import EngineConfig
from engine.lab.workload import PRESETS
from engine.messages import EngineError
from engine.server.loadgen import LoadSpec, bench_requests, check_base_url, run_load
from engine.server.metric_reader import read_metrics
from engine.server.replay import run_in_process
from engine.server.thread import free_port
from ui.shell.i18n import choice, t
from ui.labs import models
from ui.labs.models import get_model
from ui.shell.style import ANIMATING_CONFIG, CHART_CONFIG, scaled
from viz.server import class_latency, gauge_timeline, load_curve

ROOT = Path(__file__).resolve().parents[2]
MAX_NUM_SEQS = 8  # the lab's server and the in-process engine share these settings: same picture
THREADS = 1  # torch threads of both: two per process on a shared 2-core machine slow small products ~20x
MAX_TOKENS_CAP = 96  # keeps a page run short on a CPU
SWEEP_RATES = (2.0, 4.0, 8.0, 16.0)
DEFAULT_URL = "http://127.0.0.1:8000"
LABEL_KEYS = ("running", "waiting", "kv_usage", "seconds", "requests", "sent_at", "ttft_ms", "tpot_ms",
              "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "server", "lab", "request_rate", "ms")


def fig_labels() -> dict:
    return {k: t(f"rs.l.{k}") for k in LABEL_KEYS}


# --- the lab's own server: one per app process ---------------------------------------------------
@st.cache_resource(show_spinner=False)
def _lab_server() -> dict:
    return {"proc": None, "url": None, "model": None}


@st.cache_resource(show_spinner=False)
def _targets() -> dict:
    """In a class: the server the room points at (the lab's own, or one the instructor entered). Students load
    nothing and type no address: the lab's machine never fetches a URL a student chose."""
    return {"url": None}



def lab_server_url() -> str | None:
    s = _lab_server()
    return s["url"] if s["proc"] is not None and s["proc"].poll() is None else None


def start_lab_server(model: str, timeout_s: float = 180.0) -> str:
    stop_lab_server()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "engine", "serve", "--model", model, "--port", str(port),
                             "--max-num-seqs", str(MAX_NUM_SEQS)], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": str(THREADS)})
    url = f"http://127.0.0.1:{port}"
    _lab_server().update(proc=proc, url=url, model=model)
    _targets()["url"] = url
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return url
        except httpx.HTTPError:
            time.sleep(0.3)
    stop_lab_server()
    raise RuntimeError(t("rs.start_failed", model=model))


def stop_lab_server() -> None:
    s = _lab_server()
    if s["proc"] is not None:
        s["proc"].terminate()
        try:
            s["proc"].wait(timeout=15)
        except subprocess.TimeoutExpired:
            s["proc"].kill()
    s.update(proc=None, url=None, model=None)


def probe(url: str) -> dict:
    """What the URL serves: model name from /v1/models, engine kind from /metrics' prefix."""
    try:
        check_base_url(url)  # loadgen's rule, so the page never offers a run that loadgen would refuse
    except EngineError:
        return {"ok": False, "error": t("rs.bad_url")}
    try:
        models = httpx.get(url.rstrip("/") + "/v1/models", timeout=3)
        models.raise_for_status()
        model = models.json()["data"][0]["id"]
    except (httpx.HTTPError, ValueError, KeyError, IndexError) as e:
        return {"ok": False, "error": f"{type(e).__name__}: {e}"[:200]}
    try:
        kind = read_metrics(httpx.get(url.rstrip("/") + "/metrics", timeout=3).text).kind
    except (httpx.HTTPError, ValueError):
        kind = "unknown"
    return {"ok": True, "model": model, "kind": kind}


# Streamlit ends on SIGTERM by stopping its loop, so atexit hooks run. (Not PR_SET_PDEATHSIG: Linux sends it when
# the forking *thread* ends, and a script run's thread ends long before the app.)
atexit.register(stop_lab_server)


# --- controls -------------------------------------------------------------------------------------
def server_panel(page: str, control: bool = True) -> dict | None:
    """URL, start/stop of the lab's server, and a plain line about what the page talks to. Without `control`
    (a student in a class) every control is the instructor's: the page shows the room's server, read-only."""
    ss = st.session_state
    running = lab_server_url()
    if not control:
        ss[f"{page}.url"] = _targets()["url"] or running or ""
    ss.setdefault(f"{page}.url", running or DEFAULT_URL)
    c = st.columns([3.4, 1.7, 1.2], vertical_alignment="bottom")  # 「启动实验室服务器」 on one line
    c[0].text_input(t("rs.url"), key=f"{page}.url", disabled=not control)
    c[1].button(t("rs.start"), key=f"{page}.start", disabled=running is not None or not control, on_click=_start,
                args=(page,))
    c[2].button(t("rs.stop"), key=f"{page}.stop", disabled=running is None or not control, on_click=_stop,
                args=(page,))
    if not control:
        st.info(t("rs.instructor_only"), icon="🔒")
        if not ss[f"{page}.url"]:
            return None
    if ss.get(f"{page}.start_error"):
        st.error(ss.pop(f"{page}.start_error"))
    if running:
        st.caption(t("rs.lab_running", url=running, model=_lab_server()["model"]))
    info = probe(ss[f"{page}.url"].strip())
    if info["ok"] and control:
        _targets()["url"] = ss[f"{page}.url"].strip()  # the instructor's choice is the room's
    if info["ok"]:
        st.success(t("rs.talking_to", model=info["model"], kind=t(f"rs.kind.{info['kind']}")))
    else:
        st.warning(t("rs.unreachable", url=ss[f"{page}.url"], error=info["error"]))
    st.caption(t("rs.cannot_see"))
    return info if info["ok"] else None


def _start(page: str) -> None:
    """A button callback: it runs before the page, so it may set the URL box."""
    ss = st.session_state
    try:
        ss[f"{page}.url"] = start_lab_server(models.chosen())
    except RuntimeError as e:
        ss[f"{page}.start_error"] = str(e)


def _stop(page: str) -> None:
    stop_lab_server()
    _targets()["url"] = None
    st.session_state[f"{page}.url"] = DEFAULT_URL


def load_panel(page: str, control: bool = True):
    """Workload, number of prompts, rate; returns (run, sweep) button states (never pressed without `control`)."""
    # two rows: a workload's name and what it means take half of one
    c = st.columns([3, 1.2, 1.2], vertical_alignment="bottom")
    choice(c[0].selectbox, t("rs.workload"), list(PRESETS), f"{page}.workload", "wl.")
    c[1].number_input(t("rs.prompts"), 2, 128, key=f"{page}.prompts")
    c[2].number_input(t("rs.rate"), 0.0, 100.0, step=1.0, key=f"{page}.rate", help=t("rs.rate_help"))
    c = st.columns([3, 1.2, 1.2], vertical_alignment="bottom")
    c[0].checkbox(t("rs.inprocess"), key=f"{page}.inprocess")
    run = c[1].button(t("rs.run"), type="primary", key=f"{page}.run", disabled=not control)
    rates = ", ".join(f"{r:g}" for r in SWEEP_RATES)
    sweep = c[2].button(t("rs.sweep"), key=f"{page}.sweep", disabled=not control, help=t("rs.sweep_help", rates=rates))
    return run and control, sweep and control


# --- runs -------------------------------------------------------------------------------------------
def _requests(page: str):
    ss = st.session_state
    reqs = bench_requests(ss[f"{page}.workload"], int(ss[f"{page}.prompts"]), seed=0)
    for r in reqs:
        r.max_tokens = min(r.max_tokens, MAX_TOKENS_CAP)
    return reqs


def _spec(url: str, rate: float) -> LoadSpec:
    return LoadSpec(url, request_rate=rate if rate > 0 else float("inf"), ignore_eos=True)


def run_live(page: str, url: str) -> None:
    """Drive the load at the server and animate its gauges and the client's latencies as they come."""
    ss = st.session_state
    requests = _requests(page)
    rate = float(ss[f"{page}.rate"])
    bar = st.progress(0.0, text=t("rs.sending", n=len(requests), url=url))
    left, right = st.columns(2)
    gauges, latency = left.empty(), right.empty()
    labels, last, frame = fig_labels(), [0.0], [0]

    def on_progress(done, timeline):
        if time.monotonic() - last[0] < 0.4:
            return
        last[0], frame[0] = time.monotonic(), frame[0] + 1
        bar.progress(len(done) / len(requests), text=t("rs.progress", done=len(done), n=len(requests)))
        gauges.plotly_chart(gauge_timeline(timeline, labels, t("rs.gauges_server"), scaled(280)), theme=None,
                            config=ANIMATING_CONFIG, key=f"{page}.live.gauges.{frame[0]}")  # a new element per frame
        latency.plotly_chart(class_latency([r.to_dict() for r in done], labels, t("rs.latency"), scaled(280)),
                             theme=None, config=ANIMATING_CONFIG, key=f"{page}.live.latency.{frame[0]}")

    server = asyncio.run(run_load(_spec(url, rate), requests, on_progress=on_progress))
    bar.empty()
    gauges.empty()
    latency.empty()
    lab = None
    if ss[f"{page}.inprocess"]:
        with st.spinner(t("rs.inprocess_running")):
            lab = run_in_process(get_model(models.chosen()), EngineConfig(max_num_seqs=MAX_NUM_SEQS),
                                 requests, _spec(url, rate), num_threads=THREADS)
    ss[f"{page}.result"] = {"server": server, "lab": lab}


def run_sweep(page: str, url: str) -> None:
    ss = st.session_state
    requests = _requests(page)
    rows, steps = [], len(SWEEP_RATES) * (2 if ss[f"{page}.inprocess"] else 1)
    bar = st.progress(0.0, text=t("rs.sweeping"))
    for rate in SWEEP_RATES:
        result = asyncio.run(run_load(_spec(url, rate), requests))
        rows.append({"source": "server", "rate": rate, **_curve_point(result)})
        bar.progress(len(rows) / steps, text=t("rs.sweep_point", rate=rate))
        if ss[f"{page}.inprocess"]:
            lab = run_in_process(get_model(models.chosen()), EngineConfig(max_num_seqs=MAX_NUM_SEQS),
                                 requests, _spec(url, rate), num_threads=THREADS)
            rows.append({"source": "lab", "rate": rate, **_curve_point(lab)})
            bar.progress(len(rows) / steps, text=t("rs.sweep_point", rate=rate))
    bar.empty()
    ss[f"{page}.sweep_rows"] = rows


def _curve_point(result: dict) -> dict:
    return {k: result[k] or 0.0 for k in ("mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "output_throughput")}


# --- results ------------------------------------------------------------------------------------------
def show_result(page: str) -> None:
    result = st.session_state.get(f"{page}.result")
    if not result:
        st.info(t("rs.press"))
        return
    labels = fig_labels()
    runs = [("server", result["server"])] + ([("lab", result["lab"])] if result["lab"] else [])
    x_max = max(max((s["t"] for s in r["timeline"]), default=1) for _, r in runs)
    cols = st.columns(len(runs))
    for col, (source, r) in zip(cols, runs):
        with col:
            st.subheader(t(f"rs.col_{source}"))
            m = st.columns(4)
            m[0].metric(t("rs.completed"), f"{r['completed']} / {r['num_prompts']}")
            m[1].metric(t("rs.out_tps"), f"{r['output_throughput']:.0f}")
            m[2].metric(t("rs.peak_waiting"), f"{max((s['waiting'] or 0 for s in r['timeline']), default=0):g}")
            m[3].metric(t("rs.peak_kv"), f"{max((s['kv_usage'] or 0 for s in r['timeline']), default=0):.0%}")
            title = t("rs.gauges_server") if source == "server" else t("rs.gauges_lab")
            st.plotly_chart(gauge_timeline(r["timeline"], labels, title, scaled(280), x_max), theme=None,
                            config=CHART_CONFIG, key=f"{page}.gauges.{source}")
            st.plotly_chart(class_latency(r["requests"], labels, t("rs.latency"), scaled(280)), theme=None,
                            config=CHART_CONFIG, key=f"{page}.latency.{source}")
            for error in r.get("errors", []):
                st.error(t("rs.request_failed", error=error))
    st.dataframe(_class_rows(runs), hide_index=True)
    st.caption(t("rs.wall_note"))


def _class_rows(runs) -> list[dict]:
    rows = []
    for source, r in runs:
        per_class = r.get("per_class") or {"—": {**r}}
        for cls, s in per_class.items():
            rows.append({t("rs.l.source"): t(f"rs.l.{source}"), t("rs.l.class"): cls, t("rs.completed"): s["completed"],
                         t("rs.l.mean_ttft_ms"): _ms(s["mean_ttft_ms"]), t("rs.l.p99_ttft_ms"): _ms(s["p99_ttft_ms"]),
                         t("rs.l.mean_tpot_ms"): _ms(s["mean_tpot_ms"])})
    return rows


def _ms(v) -> str:
    return "—" if v is None else f"{v:.0f}"


def show_sweep(page: str) -> None:
    rows = st.session_state.get(f"{page}.sweep_rows")
    if rows:
        st.plotly_chart(load_curve(rows, fig_labels(), t("rs.curve"), scaled(340)), theme=None, config=CHART_CONFIG,
                        key=f"{page}.curve")
        st.caption(t("rs.curve_note"))
