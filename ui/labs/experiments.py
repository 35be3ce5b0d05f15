"""Start the runs a lab page shows: one workload, several engine variants, recorded or live."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable

import streamlit as st

from engine.config import EngineConfig
from engine.lab.experiment import LiveRun, workload_requests
from engine.lab.workload import engine_config_for
from engine.lab.workload import preset
from engine.messages import ConfigError
from ui.playback import player, run_cache
from ui.shell.i18n import engine_message, run_name, t
from ui.labs import models
from ui.labs.variants import of_moment
from ui.labs.models import device, get_model

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.lab.experiment import RunResult
    from engine.lab.trace import Trace, TraceRequest
    from engine.lab.workload import Workload


CONFIG_FIELDS = {f.name for f in dataclasses.fields(EngineConfig)}


def runs(page: str) -> list[LiveRun]:
    return st.session_state.get(f"{page}.runs") or []


def start(page: str, workload: str | Workload, variants: list[tuple[str, dict]], seed: int = 0, scale: float = 1.0,
          live: bool = False) -> list[LiveRun] | None:
    """Build (and unless live, run to the end) one engine per (label, settings) variant on the same requests,
    drawn from the workload (a preset's name, scaled, or a Workload) with this seed. The workload's suggested
    settings come first, then the variant's."""
    def made(loaded) -> tuple[Workload, list[TraceRequest]]:
        return _requests(loaded, workload, seed, scale)
    started = _start(page, made, variants, live)
    if started is not None:  # which requests the page's runs are of: kept beyond the page's own widgets
        st.session_state[f"{page}.drawn"] = {"workload": workload if isinstance(workload, str) else workload.to_dict(),
                                             "seed": seed, "scale": scale}
    return started


def drawn(page: str) -> dict:
    """The workload (a preset's name, or a Workload's to_dict()), seed and scale of the page's runs' requests ({} if
    the page has none)."""
    return st.session_state.get(f"{page}.drawn") or {}


def _requests(loaded, workload: str | Workload, seed: int, scale: float) -> tuple[Workload, list[TraceRequest]]:
    chosen = preset(workload).scaled(scale) if isinstance(workload, str) else workload
    return chosen, workload_requests(loaded, chosen, seed)


def moment_runs(moment) -> Callable[[], list[LiveRun]]:
    """A lecture moment's recorded runs as its page runs them (its workload at scale 1, variants.of_moment), on
    this session's model and device, to be started where no session is (ui.instructor.poll_job: a poll's "close
    and run"). The function returned loads the model if need be and asks the shared run cache, in whatever thread
    calls it: the page, asking for the same runs, gets these. It raises what a start raises (ConfigError, ...)."""
    model_name, on = models.chosen(), device()
    slot, settings = models.slot(model_name), of_moment(moment)

    def start() -> list[LiveRun]:
        loaded = slot.get()
        workload, requests = _requests(loaded, moment.workload, moment.seed, 1.0)
        return _shared(model_name, on, loaded, requests,
                       [(label, engine_config_for(workload, **s)) for label, s in settings])
    return start


def start_requests(page: str, requests: list[TraceRequest], variants: list[tuple[str, dict]],
                   live: bool = False) -> list[LiveRun] | None:
    """`start` on requests given as they are (an uploaded trace's), with no workload's suggested settings."""
    def made(loaded) -> tuple[None, list[TraceRequest]]:
        check_vocabulary(requests, loaded.model.config.vocab_size)
        return None, requests
    return _start(page, made, variants, live)


def _start(page: str, made: Callable, variants: list[tuple[str, dict]], live: bool) -> list[LiveRun] | None:
    """A recorded run is shared by every session that asks for the same one (ui.playback.run_cache).
    A configuration that cannot work is explained inline, and the previous runs are kept."""
    try:
        model_name = models.chosen()
        loaded = get_model(model_name)
        workload, requests = made(loaded)
        configs = [(label, engine_config_for(workload, **settings)) for label, settings in variants]
        if live:
            made = [LiveRun(loaded, requests, config, label) for label, config in configs]
        else:
            made = _shared(model_name, device(), loaded, requests, configs)
    except (ConfigError, ValueError) as e:
        st.error(t("err.config", msg=engine_message(e)))
        st.session_state[f"{page}.start_failed"] = True
        return None
    return _record(page, made)


def _shared(model_name: str, on: str, loaded, requests: list[TraceRequest], configs: list[tuple[str, EngineConfig]]
            ) -> list[LiveRun]:
    """The recorded runs (of the model on device `on`), shared by every session: started by whichever session asked
    first and stepped to their end in the background, so the steps already taken play at once."""
    return [run_cache.RUNS.get(run_cache.cache_key(model_name, on, requests, config, label),
                               lambda label=label, config=config: LiveRun(loaded, requests, config, label),
                               run_cache.run_bytes)
            for label, config in configs]


def replay(page: str, trace: Trace, label: str) -> list[LiveRun] | None:
    """A recorded run, frame for frame, with no model and no engine."""
    try:
        config = EngineConfig(**{k: v for k, v in trace.header.get("engine_config", {}).items() if k in CONFIG_FIELDS})
        made = [LiveRun.replay(trace.requests, trace.snapshots, config, label)]
    except (ConfigError, TypeError, KeyError, ValueError) as e:
        st.error(t("err.trace", msg=engine_message(e)))
        st.session_state[f"{page}.start_failed"] = True
        return None
    return _record(page, made)


def show_recorded(page: str, results: list[tuple[str, RunResult]]) -> list[LiveRun]:
    """Runs already made to their end (engine.run_requests), played as recordings: nothing is run again."""
    return _record(page, [LiveRun.replay(r.trace_requests, r.snapshots, r.config, label) for label, r in results])


def check_vocabulary(requests: list[TraceRequest], vocab_size: int) -> None:
    bad = next((r for r in requests if max(r.prompt_token_ids) >= vocab_size), None)
    if bad:
        raise ConfigError("config.token_beyond_vocab", request_id=bad.request_id, vocab_size=vocab_size)


def _record(page: str, made: list[LiveRun]) -> list[LiveRun]:
    st.session_state[f"{page}.runs"] = made
    st.session_state.pop(f"{page}.start_failed", None)
    player.reset(page)
    return made


def explain_rejections(run_list: list[LiveRun], page: str | None = None) -> None:
    """If requests were turned away (too long, bigger than the cache), say why and what to change.
    Right after a start that failed, the runs shown are the previous ones: say so instead, so that their
    warnings do not read as the new configuration's."""
    if page and st.session_state.pop(f"{page}.start_failed", False):
        st.caption(t("err.previous_runs"))
        return
    for run in run_list:
        if run.stop_reason:  # cut off at LiveRun.MAX_STEPS: its unfinished requests were aborted
            aborted = sum(1 for r in run.recorder.requests.values() if r.finish_reason == "aborted")
            st.warning(t("err.stopped", label=run_name(run.label), steps=run.MAX_STEPS, n=aborted))
        rejected = [r for r in run.recorder.requests.values() if r.finish_reason == "rejected"]
        if not rejected:
            continue
        total, first = len(run.recorder.requests), rejected[0]
        reason = engine_message(first.error_code, first.error_params) if first.error_code else first.error
        label = run_name(run.label)
        if len(rejected) == total:
            st.error(t("err.all_rejected", label=label, n=total, reason=reason))
        else:
            st.warning(t("err.some_rejected", label=label, n=len(rejected), total=total, reason=reason))


def finish(made: list[LiveRun]) -> None:
    """Until the runs have ended (a shared run's steps come from its background thread), with a progress bar."""
    bar = st.progress(0.0, text=t("run.progress"))
    for i, run in enumerate(made):
        total = max(1, len(run.trace_requests))
        while not run.done:
            run.ensure(run.frames + 15)
            finished = sum(1 for r in run.recorder.requests.values() if r.finish_step is not None)
            bar.progress(min(1.0, (i + finished / total) / len(made)), text=t("run.progress"))
    bar.empty()


MEASURED = "measured"  # session key: name -> label -> the summary of a short run measured for a lesson or worksheet
# The batching variants the lessons' mechanism table and the worksheet's comparison both measure.
BATCHING = [("static", {"batcher": "static"}), ("continuous", {"batcher": "continuous"}),
            ("contiguous", {"batcher": "continuous", "kv_layout": "contiguous"})]


def measurements() -> dict:
    """What `measured` has measured in this session so far."""
    return st.session_state.get(MEASURED, {})


def measured(name: str, workload: str, variants: list[tuple[str, dict]], scale: float = 0.5) -> dict | None:
    """Summaries of a few short real runs (one workload, several engine variants), measured once per
    session when asked for, and kept: the lessons and worksheets quote them."""
    cache = st.session_state.setdefault(MEASURED, {})
    if name not in cache:
        made = start(f"measured.{name}", workload, variants, scale=scale)
        if not made:
            return None
        finish(made)
        cache[name] = {r.label: r.summary() for r in made}
        st.session_state.pop(f"measured.{name}.runs", None)
    return cache[name]


def summary_of_run(workload: str | Workload, seed: int, settings: dict, scale: float = 1.0) -> dict | None:
    """One full run of a workload (a preset's name, times `scale`) with these engine settings (a quiz question's
    own run)."""
    made = start("quiz-run", workload, [("run", settings)], seed=seed, scale=scale)
    st.session_state.pop("quiz-run.runs", None)
    if not made:
        return None
    finish(made)
    return made[0].summary()
