"""A closed poll's measured value, finished by the server, not by a browser. "Close and run" hands the moment's runs
to this process's shared run cache (ui.playback.run_cache steps them in background threads) and starts a thread here
that waits for them to end, reads the measured value off them (lessons.predictions.measured) and publishes it to the
classroom store, where the students' pages and the class view poll for it. Closing the instructor's tab loses
nothing: no session takes part once the job has started.

One job per poll and process (a second press, or a second instructor on this process, finds it running); the store
publishes a poll's value once (Store.reveal_poll), so instructors on several processes behind one database do too.
Runs that fail, give no number, or are cut short by the process stopping mark the poll failed (Store.fail_poll):
the students read that in their language instead of waiting."""
from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from classroom import StorageError
from lessons import predictions

if TYPE_CHECKING:  # annotations only
    from engine.lab.experiment import LiveRun

log = logging.getLogger(__name__)
LOOK_EVERY_S = 0.25  # how often a job looks at its runs (a flag read: no cost)
_lock = threading.Lock()
_jobs: dict[int, threading.Thread] = {}  # poll id -> its job, running or ended
_stopping = threading.Event()  # the process is exiting


def start(db, poll_id: int, moment, runs: Callable[[], list[LiveRun]]) -> bool:
    """Publish poll `poll_id`'s measured value (or its failure) from a thread of this process, whatever becomes of
    the session that asked. `runs()`, called in that thread, returns the moment's shared runs. False when this
    process has a job for the poll already."""
    with _lock:
        if poll_id in _jobs or _stopping.is_set():
            return False
        job = _jobs[poll_id] = threading.Thread(target=_finish, args=(db, poll_id, moment, runs),
                                                name=f"poll:{poll_id}", daemon=True)
        job.start()
    return True


def _finish(db, poll_id: int, moment, runs: Callable[[], list[LiveRun]]) -> None:
    try:
        made = runs()
        for run in made:
            _wait(run)
        value = predictions.as_number(moment, predictions.measured(
            moment, {run.label: run.summary() for run in made}, {run.label: run.snapshots for run in made}))
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"the runs of {moment.id} measured no number ({value!r})")
        db.reveal_poll(poll_id, float(value))
    except Exception:  # the students are told; the reason goes to the server's log
        log.exception("poll %s (%s): no measured value", poll_id, moment.id)
        try:
            db.fail_poll(poll_id)
        except StorageError:
            log.exception("poll %s: its failure could not be stored", poll_id)


def _wait(run: LiveRun) -> None:
    """Until `run` has ended. Its steps come from the run cache's thread: a run that thread no longer steps and
    that has not ended (its computation failed, or the process is stopping) never will."""
    while not run.done:
        if not run.in_background or _stopping.is_set():
            raise RuntimeError(f"the run {run.label} stopped before its end")
        _stopping.wait(LOOK_EVERY_S)


def join(timeout: float | None = None) -> None:
    """Until every job started so far has ended (a test waits for them)."""
    with _lock:
        jobs = list(_jobs.values())
    for job in jobs:
        job.join(timeout)


@atexit.register
def _stop() -> None:
    """The process is exiting: the jobs still waiting mark their polls failed rather than leave the room waiting."""
    _stopping.set()
    join(timeout=10)
