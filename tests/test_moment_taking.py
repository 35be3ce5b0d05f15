"""A lecture moment is taken when its page has started its runs, not when its page first reads it: after a rerun cut
short in between (a second click on Skip lands while the first one's rerun sets the runs up, and Streamlit stops
that rerun for the new one) the moment still has its runs, and the lecturer need not open it again."""
import pytest

from tests.app_support import runs_ended
from tests.test_app_teaching import page
from tests.test_numeric_round_trip import PAGE_FILES, STRINGS

MOMENT, LAB = "uniform-control", "static-vs-continuous"


class CutShort(Exception):
    """Where Streamlit would stop the rerun for the next click's."""


@pytest.mark.slow
def test_a_rerun_cut_short_after_skip_leaves_the_moment_queued_and_the_next_rerun_runs_it(monkeypatch):
    from ui.labs import experiments

    at = page("pages/home.py")
    at.session_state["pending_moment"] = MOMENT
    at.switch_page(PAGE_FILES[LAB]).run()
    skip = next(b for b in at.button if b.label == STRINGS["pred.skip"]["en"])
    start = experiments.start

    def cut_short(*args, **kwargs):
        raise CutShort
    monkeypatch.setattr(experiments, "start", cut_short)
    skip.click().run()
    assert at.session_state["pending_moment"] == MOMENT  # still queued
    monkeypatch.setattr(experiments, "start", start)
    at.run()  # the second click's rerun: the form is gone (its click is nothing), the moment runs, not asked again
    assert not [b for b in at.button if b.label == STRINGS["pred.skip"]["en"]]
    runs_ended(at)
    assert not at.exception, [e.value for e in at.exception]
    assert [r.label for r in at.session_state[f"{LAB}.runs"]] == ["static", "continuous"]
    assert "pending_moment" not in at.session_state
    assert f"moment:{MOMENT}" in at.session_state["progress.milestones"]
