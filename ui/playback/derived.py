"""What the views derive from a run (timeline columns, memory split rows, colours, frame files), kept beside
the run for as long as the run lives: a recorded run is shared by every session, so each derivation is made
once for all of them. The engine's LiveRun knows nothing of it."""
from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


_BY_RUN: weakref.WeakKeyDictionary[LiveRun, dict] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def derived(run: LiveRun) -> dict:
    """The run's own dict of derived data (the same dict for every session showing the run)."""
    with _LOCK:
        cache = _BY_RUN.get(run)
        if cache is None:
            cache = _BY_RUN[run] = {}
        return cache
