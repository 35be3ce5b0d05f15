"""The runs a student makes as evidence: a preset workload, perhaps changed along one mechanism, under a
few engine settings the student picks. A spec is plain data (it is saved in the student's progress as
JSON), and the engine is deterministic, so the same spec always measures the same figures: the lab
recomputes a run from its spec instead of trusting figures that were saved or imported."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.config import POLICIES
from engine.lab.workload import engine_config_for
from engine.lab.workload import PRESETS, preset
from lessons.variant import variant_seed

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.config import EngineConfig
    from engine.lab.workload import Workload


# what a student may set on an evidence run, and the values each may take
SETTINGS = {
    "batcher": ("static", "continuous"),
    "kv_layout": ("contiguous", "paged"),
    "policy": POLICIES,
    "num_blocks": range(8, 1025),
    "max_num_seqs": range(1, 65),
    "priority_aging_steps": range(1, 100_001),
}
PROMPT_BLOCKS_PER_SEQ = 64  # num_blocks when a workload suggests none: 1024 tokens of context in blocks of 16
# longer means twice as long: three times pushes the longest presets' requests past the 1024-token context, and
# refused requests would leave the figures describing only the requests that still fit


def _each_class(workload: Workload, field_name: str, rewrite) -> Workload:
    """The workload with every class's `field_name` (prompt, output, arrivals) rewritten."""
    classes = tuple(dataclasses.replace(c, **{field_name: rewrite(getattr(c, field_name))}) for c in workload.classes)
    return dataclasses.replace(workload, classes=classes)


def _twice(lengths):
    return dataclasses.replace(lengths, mean=lengths.mean * 2, low=lengths.low * 2, high=lengths.high * 2)


def _spread(lengths):
    """The same mean length, spread far wider: nobody can know in advance how long a request runs."""
    mean = (lengths.low + lengths.high) / 2 if lengths.kind == "uniform" else lengths.mean
    return dataclasses.replace(lengths, kind="exponential", mean=max(2.0, mean), low=1, high=lengths.high * 3)


def _in_bursts(arrivals):
    return arrivals if arrivals.kind == "all-at-once" else dataclasses.replace(arrivals, kind="bursty", burst_size=8)


def _tighter_memory(workload: Workload, settings: dict) -> dict:
    blocks = settings.get("num_blocks") or workload.engine_hints.get("num_blocks") or \
        PROMPT_BLOCKS_PER_SEQ * settings.get("max_num_seqs", workload.engine_hints.get("max_num_seqs", 8))
    return {**settings, "num_blocks": max(8, blocks // 2)}


@dataclass(frozen=True)
class Change:
    """One mechanism that makes requests harder to schedule: it rewrites the workload, the settings or both."""

    id: str
    workload: object = None  # Workload -> Workload
    settings: object = None  # (Workload, settings) -> settings


CHANGES = {change.id: change for change in (
    Change("longer-prompts", workload=lambda w: _each_class(w, "prompt", _twice)),
    Change("longer-outputs", workload=lambda w: _each_class(w, "output", _twice)),
    Change("varied-outputs", workload=lambda w: _each_class(w, "output", _spread)),
    Change("bursty-arrivals", workload=lambda w: _each_class(w, "arrivals", _in_bursts)),
    Change("priority-class", settings=lambda w, s: {**s, "policy": "priority"}),
    Change("shared-prefix", workload=lambda w: dataclasses.replace(w, shared_prefix_tokens=w.shared_prefix_tokens + 96),
           settings=lambda w, s: {**s, "enable_prefix_caching": False}),
    Change("tighter-memory", settings=_tighter_memory),
)}


ROOM_SEED = 0  # the class's shared requests


def worksheet_seed(token: str, task_id: str) -> int:
    """The workload seed of a task's runs in the student's own variant: the same requests on every visit of one
    student, other requests (and so other figures) for another."""
    return variant_seed(token, f"worksheet:{task_id}")


def task_seed(evidence: str, token: str, task_id: str) -> int:
    """The workload seed of a task's runs: the student's own variant, except for the effects task, which keeps the
    room's requests. The student types no figure there, and the effects it asks for are the chapter's on those
    requests, while on other seeds some reverse or vanish (4 of 12 measured)."""
    return ROOM_SEED if evidence == "effects" else worksheet_seed(token, task_id)


class SpecError(ValueError):
    """A spec the lab cannot run: `code` names the problem (lessons/evidence/messages.py says it)."""

    def __init__(self, code: str, **params):
        super().__init__(code)
        self.code, self.params = code, params


@dataclass(frozen=True)
class RunSpec:
    workload: str  # a preset's name
    settings: dict = field(default_factory=dict)  # SETTINGS overrides
    seed: int = 0
    change: str | None = None  # a CHANGES id

    def __post_init__(self):
        if self.workload not in PRESETS:
            raise SpecError("unknown_workload", name=self.workload)
        if self.change is not None and self.change not in CHANGES:
            raise SpecError("unknown_change", name=self.change)
        for name, value in self.settings.items():
            if name not in SETTINGS or isinstance(value, (bool, float)) or value not in SETTINGS[name]:
                raise SpecError("bad_setting", name=name, value=value)
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or not 0 <= self.seed < 2**31:
            raise SpecError("bad_seed", value=self.seed)

    @property
    def key(self) -> str:
        """A short id that names the run: the same spec, the same key, in every session."""
        return hashlib.sha1(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:10]

    def to_dict(self) -> dict:
        return {"workload": self.workload, "settings": dict(sorted(self.settings.items())), "seed": self.seed,
                "change": self.change}

    @classmethod
    def from_dict(cls, d) -> "RunSpec":
        if not isinstance(d, dict) or not isinstance(d.get("settings", {}), dict):
            raise SpecError("not_a_run")
        return cls(d.get("workload"), dict(d.get("settings") or {}), d.get("seed", 0), d.get("change"))

    def built(self) -> tuple[Workload, dict]:
        """The workload this spec runs and its settings (the workload's suggestions come on top in
        engine_config_for), with the change applied."""
        workload, settings = preset(self.workload), dict(self.settings)
        change = CHANGES.get(self.change)
        if change and change.workload:
            workload = change.workload(workload)
        if change and change.settings:
            settings = change.settings(workload, settings)
        return workload, settings

    def config(self) -> EngineConfig:
        workload, settings = self.built()
        return engine_config_for(workload, **settings)

    def classes(self) -> tuple[str, ...]:
        return tuple(c.name for c in preset(self.workload).classes)
