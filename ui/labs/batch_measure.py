"""Why batch?'s curves, measured once per server process and shared by every session.

Thirty students opening the page at once would otherwise measure against each other (each measurement
slowing the others, the curve upside down). Here one measurement runs at a time (engine.lab.batch_curve's
OneAtATime): a session asking for a curve that is being measured waits for it and shows the same result,
and a curve once measured is kept, labelled with where and when, until the instructor measures again."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from engine.lab.batch_curve import Curve, Job, OneAtATime, measure_batch_curve
from ui.shell.i18n import t

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.models.loaded import LoadedModel

CURVES = OneAtATime()  # this server process's measurements


def sizes_measured(sizes) -> tuple[int, ...]:
    """The batch sizes a measurement covers: the chosen ones and batch 1, which every ratio is taken against."""
    return tuple(sorted(set(sizes) | {1}))


def key(model: str, device: str, sizes, new_tokens: int) -> tuple:
    return model, device, sizes_measured(sizes), int(new_tokens)


def shown(model: str, device: str, sizes, new_tokens: int) -> Curve | None:
    """The kept curve for these settings: measured for exactly them, or for these sizes and more (same model,
    device and tokens), showing only these; None if there is none."""
    want = set(sizes_measured(sizes))
    found = CURVES.find(lambda k: k[0] == model and k[1] == device and k[3] == int(new_tokens) and want <= set(k[2]))
    return found[1].only(want) if found else None


def request(loaded: LoadedModel, curve_key: tuple, again: bool = False) -> tuple[Job, bool]:
    """The job measuring this curve, and whether it was already running (started by another session)."""
    before = CURVES.running(curve_key)
    _, _, sizes, new_tokens = curve_key

    def compute(job: Job) -> Curve:
        def on_progress(fraction: float, b: int) -> None:
            job.progress, job.last = fraction, b
        return measure_batch_curve(loaded, sizes, new_tokens, on_progress=on_progress)
    job = CURVES.request(curve_key, compute, again)
    return job, job is before


def progress_text(job: Job, shared: bool) -> str:
    if job.queued:
        return t("wb.queued")
    if job.last is None:
        return t("wb.measuring")
    return t("wb.shared_b" if shared else "wb.measuring_b", b=job.last)


def where_when(curve: Curve) -> str:
    """Where and when the curve was measured, and that everyone sees this one."""
    device = "CPU" if curve.device == "cpu" else curve.device.upper()
    return t("wb.where_when", device=device, cores=curve.cores, threads=curve.threads, rounds=curve.rounds,
             when=time.strftime("%H:%M", time.localtime(curve.started)), took=curve.wall_s)
