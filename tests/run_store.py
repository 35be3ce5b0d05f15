"""Runs as the lab's pages get them, for tests with no page: through the lab's shared run cache
(ui/playback/run_cache.py), and so through the test session's run store that conftest.py sets: computed once per
test session by whichever test, worker or lab server asks first, and waited for by the others."""
from engine.lab.experiment import LiveRun, workload_requests
from lessons.evidence import RunSpec
from ui.playback import run_cache


def shared_run(loaded, model_name: str, requests, config, label: str) -> LiveRun:
    """The ended run, keyed as ui/labs/experiments keys a page's run on the CPU."""
    run = run_cache.RUNS.get(run_cache.cache_key(model_name, "cpu", requests, config, label),
                             lambda: LiveRun(loaded, requests, config, label), run_cache.run_bytes)
    run.ensure(LiveRun.MAX_STEPS + 1)  # every frame: until the run has ended
    return run


def spec_summary(loaded, model_name: str, spec: RunSpec) -> dict:
    """The summary of a worksheet run, as ui/labs/experiments.summary_of_run gets it."""
    workload, _ = spec.built()
    return shared_run(loaded, model_name, workload_requests(loaded, workload, spec.seed), spec.config(),
                      "run").summary()
