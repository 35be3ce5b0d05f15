"""How fast the lab draws: frames/s replaying a recorded run of 64 slots x 512 blocks, and each page's
time to first paint.

    python bench/ui_frames.py [--seconds 10]

1. Records a real run (tiny model, high-variance x4: 256 requests, max_num_seqs 64, 512 blocks).
2. Python side: the cost of building and serialising one frame's figures (what the server does per frame).
3. Browser side (Debian's chromium via Playwright, against `streamlit run` on a free loopback port):
   uploads the recorded trace to the playground, replays it with no model, presses play and counts
   how often the frame counter changes per second; then loads each page and times its first paint.
Targets: >= 10 frames/s; < 3 s to first paint.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import plotly.io as pio  # noqa: E402
import torch  # noqa: E402

from engine.lab.experiment import LiveRun, workload_requests  # noqa: E402
from engine.lab.workload import engine_config_for  # noqa: E402
from engine.models.loader import load_model  # noqa: E402
from engine.server.thread import free_port  # noqa: E402
from engine.lab.metrics import kv_timeline  # noqa: E402
from engine.lab.trace import write_trace  # noqa: E402
from engine.lab.workload import preset  # noqa: E402
from viz.blocks import block_pool  # noqa: E402
from viz.charts import memory_split  # noqa: E402
from viz.figure import Look  # noqa: E402
from viz.html import block_tables_html, queue_html  # noqa: E402
from viz.palette import color_indices  # noqa: E402
from viz.timeline import slot_timeline, timeline_column  # noqa: E402

PAGES = ("", "why-batch", "static-vs-continuous", "paged-kv", "policies", "playground")  # "": the home page
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def record_run(path: Path) -> LiveRun:
    loaded = load_model("tiny")
    workload = preset("high-variance").scaled(4)
    requests = workload_requests(loaded, workload, seed=0)
    run = LiveRun(loaded, requests, engine_config_for(workload, max_num_seqs=64, num_blocks=512))
    run.run_to_end()
    write_trace(path, {"model": "tiny", "workload": "high-variance x4", "engine_config": run.config.to_dict()},
                requests, run.snapshots)
    return run


def python_frame_cost(run: LiveRun) -> float:
    labels = {k: k for k in ("prompt", "output", "idle", "prefill", "decode", "held", "step", "slot", "preempted",
                             "waiting", "blocked", "waiting_since", "block", "slots_filled", "shared_by", "free",
                             "free_cached", "logical", "physical", "logical_block", "token_states", "reserved",
                             "internal_fragmentation", "external_fragmentation")}
    snaps = run.snapshots
    colors = color_indices(r.request_id for r in run.trace_requests)
    columns = [timeline_column(s, snaps[i - 1] if i else None, colors, labels) for i, s in enumerate(snaps)]
    kv = kv_timeline(snaps)
    frames = range(len(snaps) // 4, 3 * len(snaps) // 4, 5)
    start = time.perf_counter()
    for f in frames:
        for fig in (slot_timeline(columns, f, len(snaps), labels, Look(hover=False)),
                    block_pool(snaps[f], colors, labels, hover=False), memory_split(kv, f, len(snaps), labels)):
            pio.to_json(fig, validate=False)
        queue_html(snaps[f], colors, labels)
        block_tables_html(snaps[f], [r for r in snaps[f].slots if r][:6], colors, labels, 32)
        run.recorder.frame_metrics(f)
    return (time.perf_counter() - start) / len(frames)


def browser(trace: Path, seconds: float) -> tuple[float, dict[str, float]]:
    from playwright.sync_api import sync_playwright

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(port),
                               "--server.address", "127.0.0.1", "--server.headless", "true"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1600, "height": 1200})
            for _ in range(60):
                try:
                    page.goto(url)
                    break
                except Exception:
                    time.sleep(0.5)
            page.wait_for_selector("h1")
            paint = {}
            for name in PAGES:  # the server is warm now; each page loads in a fresh tab
                tab = browser.new_page(viewport={"width": 1600, "height": 1200})
                start = time.perf_counter()
                tab.goto(f"{url}/{name}")
                tab.wait_for_selector("h1", timeout=30_000)
                paint[name or "home"] = time.perf_counter() - start
                tab.close()

            page.goto(url + "/playground")
            page.get_by_text("English", exact=True).click()
            page.get_by_role("radio", name="Upload a trace").click()
            page.locator("input[type=file]").set_input_files(str(trace))
            page.get_by_text("Read:").wait_for(timeout=60_000)
            page.get_by_role("button", name="Run", exact=True).click()
            counter = page.locator(".st-key-playground-frame-counter [data-testid=stMetricValue]")
            counter.wait_for(timeout=60_000)
            page.get_by_label("Speed (steps/s)").click()  # 20 steps/s: redraw as often as the browser keeps up
            page.get_by_role("option", name="20", exact=True).click()
            time.sleep(1)
            page.get_by_role("button", name=re.compile("^(播放|Play)$")).click()  # ▶, by its accessible name
            time.sleep(2)  # let the fragment settle into its rhythm
            # count changes of the frame counter inside the page (polling from here would load the browser)
            page.evaluate("""() => { window.__frames = []; const el = document.querySelector(
                '.st-key-playground-frame-counter'); new MutationObserver(() => window.__frames.push(
                performance.now())).observe(el, {subtree: true, childList: true, characterData: true}); }""")
            time.sleep(seconds)
            stamps = page.evaluate("() => window.__frames")
            changes = len({round(x) for x in stamps})
            fps = changes / seconds
            browser.close()
            return fps, paint
    finally:
        server.terminate()
        server.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "run-64x512.jsonl"
        run = record_run(trace)
        print(f"recorded run: {run.frames} steps, 64 slots, 512 blocks; trace {trace.stat().st_size / 1e6:.1f} MB")
        cost = python_frame_cost(run)
        print(f"server side: {1000 * cost:.1f} ms to build and serialise one frame's figures "
              f"({1 / cost:.0f} frames/s bound)")
        fps, paint = browser(trace, args.seconds)
    print(f"browser replay: {fps:.1f} frames/s (target >= 10)")
    for name, seconds in paint.items():
        print(f"first paint {name:<22} {seconds:.2f} s (target < 3 s)")


if __name__ == "__main__":
    main()
