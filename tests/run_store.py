"""A worksheet run's figures as the lab's pages get them, for tests with no page: through the lab's shared run
cache (ui/playback/run_cache.py), and so through the test session's run store that conftest.py sets: computed
once per test session by whichever test, worker or lab server asks first, and waited for by the others."""
from engine.lab.experiment import LiveRun, workload_requests
from lessons.evidence import RunSpec
from ui.playback import run_cache


def spec_summary(loaded, model_name: str, spec: RunSpec) -> dict:
    """The summary of `spec`'s run on the CPU, keyed as ui/labs/experiments.summary_of_run keys it."""
    workload, _ = spec.built()
    requests, config = workload_requests(loaded, workload, spec.seed), spec.config()
    run = run_cache.RUNS.get(run_cache.cache_key(model_name, "cpu", requests, config, "run"),
                             lambda: LiveRun(loaded, requests, config, "run"), run_cache.run_bytes)
    run.ensure(LiveRun.MAX_STEPS + 1)  # every frame: until the run has ended
    return run.summary()
