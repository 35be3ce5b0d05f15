"""The engine variants the lab pages compare, and what a lecture moment sets in its page's form, in one place: a
page builds its runs from its form with these, and a poll's "close and run" builds the same moment's runs from the
moment alone (ui.labs.experiments.moment_runs, in the server, with no page), so both ask the shared run cache for the
same runs and the server computes them once."""
from __future__ import annotations

from engine.config import POLICIES, EngineConfig
from lessons import page_slugs as slugs

BATCHERS = ("static", "continuous")
LAYOUTS = {"contiguous": {"kv_layout": "contiguous"}, "paged": {"kv_layout": "paged"},
           "paged-no-sharing": {"kv_layout": "paged", "enable_prefix_caching": False},
           "paged-swap": {"kv_layout": "paged", "preemption_mode": "swap"}}
# Beside the lab's policies, priority as vLLM v1 schedules it: no waiting request preempts running ones.
SCHEDULERS = {**{p: {"policy": p} for p in POLICIES}, "priority-v1": {"policy": "priority", "vllm_v1_semantics": True}}
SLOTS = 8  # the batchers' max_num_seqs when a moment names none
SCALES = (0.25, 0.5, 1.0, 1.5)  # a page's "request count ×" choices: a preset's classes, each count times one
BLOCK_SIZE = 16


def batchers(max_num_seqs: int) -> list[tuple[str, dict]]:
    return [(batcher, {"max_num_seqs": max_num_seqs, "batcher": batcher}) for batcher in BATCHERS]


def layouts(names, prefix: bool, block_size: int, blocks: int, moment_settings: dict | None = None
            ) -> list[tuple[str, dict]]:
    common = {"enable_prefix_caching": prefix, "block_size": block_size, "num_blocks": blocks or None}
    # a moment's other settings (max_num_seqs ...) hold for its own run
    common |= {k: v for k, v in (moment_settings or {}).items() if k not in common}
    return [(name, {**common, **LAYOUTS[name]}) for name in names]


def schedulers(names, aging: int, max_num_seqs: int = 0) -> list[tuple[str, dict]]:
    """Each policy's settings; max_num_seqs 0 keeps the workload's own."""
    slots = {"max_num_seqs": max_num_seqs} if max_num_seqs else {}
    return [(name, {"priority_aging_steps": aging, **slots, **SCHEDULERS[name]}) for name in names]


def moment_form(moment) -> dict:
    """What a moment puts in its page's form, by the form's keys (`<page>.<key>` in session state): the page shows
    it and runs it, and `of_moment` runs the same."""
    settings = moment.settings
    form = {"workload": moment.workload, "seed": moment.seed}
    if moment.page == slugs.STATIC_VS_CONTINUOUS:
        return form | {"slots": settings.get("max_num_seqs", SLOTS)}
    if moment.page == slugs.PAGED_KV:
        left, right = moment.compare
        return form | {"left": left, "right": right, "prefix": bool(settings.get("enable_prefix_caching", False)),
                       "blocks": int(settings.get("num_blocks") or 0),
                       "block_size": settings.get("block_size", BLOCK_SIZE)}
    if moment.page == slugs.POLICIES:
        return form | {"policies": list(moment.compare), "slots": settings.get("max_num_seqs", 0),
                       "aging": settings.get("priority_aging_steps", EngineConfig.default("priority_aging_steps"))}
    return form


def of_moment(moment) -> list[tuple[str, dict]]:
    """The (label, engine settings) of a moment's runs, as its page runs them; none for a page that runs no
    recorded comparison (why-batch, real-server)."""
    form = moment_form(moment)
    if moment.page == slugs.STATIC_VS_CONTINUOUS:
        return batchers(form["slots"])
    if moment.page == slugs.PAGED_KV:
        return layouts((form["left"], form["right"]), form["prefix"], form["block_size"], form["blocks"],
                       moment.settings)
    if moment.page == slugs.POLICIES:
        return schedulers(form["policies"], form["aging"], form["slots"])
    return []
