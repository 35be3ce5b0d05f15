"""A finished run's views as figures to download (the playground's HTML export; PNG comes from each chart)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ui.views.base import colors, view_labels
from ui.views.kv import kv_rows
from ui.views.slots import timeline_columns
from viz.blocks import block_pool
from viz.charts import memory_split
from viz.timeline import slot_timeline

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import LiveRun


def figures(run: LiveRun) -> list:
    """The run's last frame: the whole slot timeline, the block pool, the memory split with its legend."""
    last, labels = run.frames - 1, view_labels()
    columns = timeline_columns(run, last, False)
    return [slot_timeline(columns, last, run.frames, labels, window=max(120, run.frames)),
            block_pool(run.snapshots[last], colors(run), labels),
            memory_split(kv_rows(run), last, run.frames, labels, legend=True)]
