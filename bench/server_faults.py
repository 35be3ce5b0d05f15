"""Faults injected into a real `python -m engine serve --model tiny` (a process started here): the hostile requests
of issue 25 while a stream runs, then the engine core killed (SIGKILL) and stopped (SIGSTOP) a few times each.

    python bench/server_faults.py [--rounds 3] [--heartbeat-timeout 2]

Prints how many faults were injected, how each ended, and the seconds from each kill or stop to /health 200 with
a completion served again (the supervisor's restart, engine/server/supervisor.py); the server's log goes to
serving-lab-server-faults.log in the temporary folder. Restarts are a new process importing torch and loading the
model: about 2-6 s here on an idle machine, several times that when other jobs load the two cores.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_server_hostile import HOSTILE  # noqa: E402

from engine.server.thread import free_port  # noqa: E402


def wait_healthy(url: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            r = httpx.get(url + "/health", timeout=2)
            if r.status_code == 200:
                return r.json()
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise SystemExit(f"the server at {url} did not become healthy within {timeout} s")


def stream(url: str, out: list) -> None:
    body = {"prompt": "Meanwhile", "max_tokens": 200, "ignore_eos": True, "stream": True}
    with httpx.stream("POST", url + "/v1/completions", json=body, timeout=60) as r:
        out.extend(r.iter_lines())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--heartbeat-timeout", type=float, default=2.0)
    args = ap.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = Path(tempfile.gettempdir()) / "serving-lab-server-faults.log"
    log = open(log_path, "w")  # the server's own account of each restart
    server = subprocess.Popen([sys.executable, "-m", "engine", "serve", "--model", "tiny", "--port", str(port),
                               "--heartbeat-timeout", str(args.heartbeat_timeout), "--max-body-bytes", str(2 << 20)],
                              cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"}, stderr=log)
    try:
        wait_healthy(url)
        refused, other = 0, []
        lines: list[str] = []
        bystander = threading.Thread(target=stream, args=(url, lines))
        bystander.start()
        for case, path, body, ctype, headers, status, _ in HOSTILE:
            r = httpx.post(url + path, content=body, timeout=30,
                           headers={"content-type": ctype or "application/json", **(headers or {})})
            if r.status_code == status and "error" in r.json():
                refused += 1
            else:
                other.append((case, r.status_code))
        bystander.join(60)
        whole = "data: [DONE]" in lines and not any('"error"' in line for line in lines)
        print(f"{len(HOSTILE)} hostile requests: {refused} refused with the expected 4xx in OpenAI's shape"
              f"{'' if not other else f', unexpected: {other}'}; the concurrent stream "
              f"{'finished whole' if whole else 'was harmed'}")
        restarts = {signal.SIGKILL: [], signal.SIGSTOP: []}
        for _ in range(args.rounds):
            for sig in restarts:
                pid = wait_healthy(url)["core_pid"]
                start = time.monotonic()
                os.kill(pid, sig)
                while httpx.get(url + "/health", timeout=5).status_code == 200:
                    time.sleep(0.02)
                noticed = time.monotonic() - start
                wait_healthy(url)
                r = httpx.post(url + "/v1/completions", json={"prompt": "x", "max_tokens": 3}, timeout=30)
                assert r.status_code == 200, r.text
                restarts[sig].append((noticed, time.monotonic() - start))
        for sig, times in restarts.items():
            name = signal.Signals(sig).name
            print(f"{name} of the engine core x{len(times)}: noticed after "
                  f"{statistics.median(t[0] for t in times):.2f} s (median), serving again after "
                  f"{statistics.median(t[1] for t in times):.2f} s (median; max {max(t[1] for t in times):.2f} s)")
        health = wait_healthy(url)
        print(f"faults injected: {len(HOSTILE) + 2 * args.rounds}; restarts counted by /health: "
              f"{health['restarts']}; last failure: {json.dumps(health['last_failure'])}; server log: {log_path}")
    finally:
        server.terminate()
        server.wait(30)
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
