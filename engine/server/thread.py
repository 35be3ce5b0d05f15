"""Run an app under uvicorn in a background thread of this process (tests, benchmarks); a free loopback port."""
from __future__ import annotations

import socket
import threading
import time

import uvicorn

from engine.server.connection import HTTP_PROTOCOL


def free_port() -> int:
    """A loopback port free now (the OS picks it), for a server about to start on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """`with ServerThread(app) as url:` serves on 127.0.0.1 at a free port, stopped on exit."""

    def __init__(self, app, port: int | None = None):
        self.app, self.port = app, port or free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                   access_log=False, lifespan="on", http=HTTP_PROTOCOL))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"the server did not start on port {self.port}")
            time.sleep(0.02)
        return self.url

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
