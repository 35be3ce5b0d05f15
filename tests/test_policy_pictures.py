"""The moment built to contrast FCFS, SJF and priority ("Chats, reports and priorities") draws three pictures a
room can tell apart on the first screen, measured on what the policies page draws (coloured by class, as it draws
them): the queue under each timeline (its cells, one per waiting request, in the class's colour) and the slot
timeline above it (one cell per slot and step, in the colour of the class it runs, pale while it prefills).

- Per-class waiting, as drawn: FCFS's queue shows the chat class waiting for at least ten times the cell-steps
  that SJF's and priority's show (measured: 1,647 against 13 and 3), so the chat colour fills one queue and is
  nearly absent from the other two.
- The timelines: every two of the three differ in at least 5 % of their cells over the steps all three ran
  (measured: 10.7 % for SJF against priority, 15.2 % and 17.6 % against FCFS)."""
import re
from collections import Counter

import pytest
from run_store import shared_run

from engine.lab.experiment import workload_requests
from engine.lab.workload import engine_config_for, preset
from lessons import load_moments
from ui.labs.variants import of_moment
from ui.views.base import colors, view_labels
from viz.html import queue_html
from viz.palette import HUES
from viz.timeline import timeline_column

MOMENT = "chat-reports-priorities"
WAITING_RATIO, TIMELINE_SHARE = 10, 0.05


@pytest.fixture(scope="module")
def runs(tiny):
    moment = load_moments()[MOMENT]
    workload = preset(moment.workload)
    requests = workload_requests(tiny, workload, moment.seed)
    return {label: shared_run(tiny, "tiny", requests, engine_config_for(workload, **settings), label)
            for label, settings in of_moment(moment)}


def queue_cells_by_class(run) -> Counter:
    """Over every frame, the queue's drawn cells counted by their colour's class."""
    color_of, labels = colors(run, by_class=True), view_labels()
    class_of_hue = {HUES[i % len(HUES)].lower(): cls for cls, i in
                    {run.recorder.requests[r].request_class: i for r, i in color_of.items()}.items()}
    drawn = Counter()
    for snap in run.snapshots:
        for hue in re.findall(r"background:\s*(#[0-9a-fA-F]{6})", queue_html(snap, color_of, labels)):
            drawn[class_of_hue.get(hue.lower(), "?")] += 1
    return drawn


def timeline_cells(run) -> list[tuple[int, ...]]:
    color_of, labels = colors(run, by_class=True), view_labels()
    snaps = run.snapshots
    return [timeline_column(s, snaps[i - 1] if i else None, color_of, labels).z for i, s in enumerate(snaps)]


def test_the_queue_shows_who_waits_under_each_policy(runs):
    drawn = {label: queue_cells_by_class(run) for label, run in runs.items()}
    assert drawn["fcfs"]["chat"] > 0
    for other in ("sjf", "priority"):
        assert drawn["fcfs"]["chat"] >= WAITING_RATIO * max(1, drawn[other]["chat"]), drawn


def test_every_two_policies_timelines_differ_in_a_twentieth_of_their_cells(runs):
    pictures = {label: timeline_cells(run) for label, run in runs.items()}
    steps = min(len(p) for p in pictures.values())
    labels = list(pictures)
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            cells = [(x, y) for s in range(steps) for x, y in zip(pictures[a][s], pictures[b][s])]
            share = sum(x != y for x, y in cells) / len(cells)
            assert share >= TIMELINE_SHARE, f"{a} and {b}: {share:.1%} of the timeline's cells differ"
