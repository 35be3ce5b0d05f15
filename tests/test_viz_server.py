"""The Real server page's figures: valid plotly, and they draw what the load client measured."""
import plotly.graph_objects as go

from viz.server import class_latency, gauge_timeline, load_curve

LABELS = {k: k for k in ("running", "waiting", "kv_usage", "seconds", "requests", "sent_at", "ttft_ms", "tpot_ms",
                         "mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "server", "lab", "request_rate", "ms")}
TIMELINE = [{"t": 0.5 * i, "kind": "vllm", "running": min(i, 8), "waiting": max(0, i - 8), "kv_usage": i / 20,
             "preemptions": 0} for i in range(12)]
REQUESTS = [{"request_class": c, "success": ok, "start": i * 0.1, "ttft": 0.05 * (i + 1), "tpot": 0.02}
            for i, (c, ok) in enumerate([("chat", True), ("report", True), ("chat", False), ("chat", True)])]


def valid(fig):
    return go.Figure(fig.to_dict())  # plotly.py validates every property here


def test_gauge_timeline_puts_kv_usage_on_its_own_percent_axis():
    fig = valid(gauge_timeline(TIMELINE, LABELS, x_max=10))
    running, waiting, kv = fig.data
    assert list(running.y) == [r["running"] for r in TIMELINE] and list(waiting.y)[-1] == 3
    assert kv.yaxis == "y2" and fig.layout.yaxis2.range == (0, 1) and fig.layout.xaxis.range == (0, 10)


def test_class_latency_draws_each_finished_request_once_per_panel_by_class():
    fig = valid(class_latency(REQUESTS, LABELS))
    chat_ttft, chat_tpot, report_ttft, _ = fig.data
    assert chat_ttft.name == "chat" and [round(y) for y in chat_ttft.y] == [50, 200]  # the failed one is left out
    assert chat_tpot.xaxis == "x2" and [round(y) for y in chat_tpot.y] == [20, 20]
    assert report_ttft.name == "report"


def test_load_curve_orders_rates_and_keeps_server_and_lab_apart():
    rows = [{"source": s, "rate": r, "mean_ttft_ms": r * 10, "p99_ttft_ms": r * 20, "mean_tpot_ms": 5,
             "output_throughput": 1} for s in ("server", "lab") for r in (8, 2, 4)]
    fig = valid(load_curve(rows, LABELS))
    assert len(fig.data) == 6 and list(fig.data[0].x) == [2, 4, 8] and list(fig.data[1].y) == [40, 80, 160]
    assert fig.data[3].line.dash == "dot"  # the in-process engine's lines
