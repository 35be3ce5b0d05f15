"""A class on several machines, on one: replicas of the lab (`python -m ui.serve --class`, each with its own cache
folder) on one database, behind HAProxy with sticky sessions, all on 127.0.0.1 and free ports.

tests/test_replicas.py and bench/classroom_replicas.py start it with `room(db_url, folder)`; the README shows the
HAProxy configuration that `haproxy_config` writes. HAProxy inserts a cookie naming the replica that served a
browser's first request (SERVERID), and sends every later request and websocket carrying it to that replica, so a
client can pin itself to one by sending the cookie; each response says which replica served it (X-Replica), and
HAProxy's log (its stdout, in the folder) has a line per request with the replica, the User-Agent and the path."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from engine.server.thread import free_port

ROOT = Path(__file__).resolve().parent.parent
COOKIE = "SERVERID"  # HAProxy's sticky-session cookie: its value is a replica's name
HEADER = "X-Replica"  # on every response: the replica that served it

CONFIG = """\
global
    log stdout format raw local0
    maxconn 4096

defaults
    mode http
    log global
    option httplog
    option logasap              # a websocket is logged when it opens, not when it closes
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout tunnel 1h           # a student's websocket stays open for the whole lesson

frontend lab
    bind {bind}
    capture request header User-Agent len 80
    default_backend replicas

backend replicas
    balance roundrobin          # a new browser goes to the next replica ...
    cookie {cookie} insert indirect nocache   # ... and stays there: its session lives in that replica
    option httpchk GET /_stcore/health
    http-response set-header {header} %[srv_name]
{servers}
"""


def haproxy() -> str | None:
    """HAProxy's binary: Debian's package puts it in /usr/sbin, which a user's PATH may leave out."""
    return shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")


def haproxy_config(bind: str, replicas: dict[str, str]) -> str:
    """HAProxy's configuration: listen on `bind` ("host:port") and balance over `replicas` (name -> "host:port")."""
    servers = "\n".join(f"    server {name} {address} check cookie {name}" for name, address in replicas.items())
    return CONFIG.format(bind=bind, cookie=COOKIE, header=HEADER, servers=servers)


def wait_healthy(url: str, proc: subprocess.Popen, log: Path, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url} exited ({proc.returncode}): {log.read_text(errors='replace')[-2000:]}")
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{url} did not come up in {seconds:.0f} s: {log.read_text(errors='replace')[-2000:]}")


@dataclass
class Room:
    url: str  # HAProxy's: what students and the instructor open
    replicas: dict[str, str]  # name -> the replica's own URL
    pids: dict[str, int]  # name -> the replica's process id (its CPU time in /proc)
    folder: Path
    haproxy_log: Path
    procs: list[subprocess.Popen] = field(default_factory=list)

    def log_lines(self, agent: str) -> list[tuple[str, str]]:
        """(replica, request line) for each request HAProxy logged from a client whose User-Agent's first word is
        `agent`."""
        seen = []
        for line in self.haproxy_log.read_text(errors="replace").splitlines():
            captured = re.search(r" replicas/(\S+) .*?\{([^}]*)\} \"([^\"]*)\"$", line)
            if captured and captured.group(2).split(" ", 1)[0] == agent:
                seen.append((captured.group(1), captured.group(3)))
        return seen

    def replica_log(self, name: str) -> str:
        return (self.folder / f"replica-{name}.log").read_text(errors="replace")


@contextlib.contextmanager
def room(db_url: str, folder: Path, names: tuple[str, ...] = ("a", "b"), passcode: str = "room 101 passcode",
         env: dict[str, str] | None = None):
    """The replicas `names` of `make class` on `db_url`, each with its cache folder in `folder`, and HAProxy in
    front; yields a Room and stops them all after. RuntimeError when haproxy is not installed or a part fails."""
    if haproxy() is None:
        raise RuntimeError("haproxy is not installed (apt-get install -y haproxy)")
    folder.mkdir(parents=True, exist_ok=True)
    procs: list[subprocess.Popen] = []
    logs = []
    try:
        ports, pids = {}, {}
        for name in names:
            ports[name] = port = free_port()
            cache = folder / f"cache-{name}"
            cache.mkdir(exist_ok=True)
            log = open(folder / f"replica-{name}.log", "w")
            logs.append(log)
            # one torch thread each: the replicas, the database and the clients share the machine's cores
            proc = subprocess.Popen(
                [sys.executable, "-m", "ui.serve", "--class", "--server.port", str(port), "--server.address",
                 "127.0.0.1", "--server.headless", "true"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                env={**os.environ, "SERVING_LAB_DB": db_url, "SERVING_LAB_PASSCODE": passcode,
                     "SERVING_LAB_CACHE": str(cache), "OMP_NUM_THREADS": "1", **(env or {})})
            procs.append(proc)
            pids[name] = proc.pid
        replicas = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
        for name, proc in zip(names, procs):
            wait_healthy(replicas[name], proc, folder / f"replica-{name}.log")
        port = free_port()
        config = folder / "haproxy.cfg"
        config.write_text(haproxy_config(f"127.0.0.1:{port}", {n: f"127.0.0.1:{p}" for n, p in ports.items()}))
        haproxy_log = folder / "haproxy.log"
        hlog = open(haproxy_log, "w")
        logs.append(hlog)
        balancer = subprocess.Popen([haproxy(), "-db", "-f", str(config)], stdout=hlog, stderr=subprocess.STDOUT)
        procs.append(balancer)
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, balancer, haproxy_log, 30)
        yield Room(url, replicas, pids, folder, haproxy_log, procs)
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()


def pinned(url: str, replica: str, path: str = "/_stcore/health") -> str:
    """The replica that serves `path` to a client sending the cookie for `replica` (the X-Replica header)."""
    request = urllib.request.Request(url + path, headers={"Cookie": f"{COOKIE}={replica}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers[HEADER]
