"""Run a coroutine to its end from a test, whatever else the worker's main thread holds."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run(coro):
    """asyncio.run(coro) in a thread of its own: a worker that also ran a browser test holds Playwright's event
    loop in its main thread, where asyncio.run refuses to start a second one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
