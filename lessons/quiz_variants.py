"""Each student's own variant of a numeric quiz question: the workload seed and, where the lesson's point survives,
the number of requests, `max_num_seqs`, the KV memory (`num_blocks`) or the output length of equal-length requests, so
two students measure other figures and one student the same ones on every visit.

A student draws from a pool of checked variants per question (quiz_variants.json, written by
`python -m tools.quiz_variants`): each was run, its figures are recorded with it, and it was kept only where the
question's claim holds on it (CLAIMS: continuous batching shortens the chats' wait, paging runs more at once ...).
tests/test_quiz_variants.py checks the claims and the guessing rates on the recorded figures, and runs a sample of
the pool again to see the records are the engine's."""
from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lessons.figures import metric_figure
from lessons.grading import measure, measured_value
from lessons.variant import variant_seed

POOL_FILE = Path(__file__).with_name("quiz_variants.json")
UNIFORM_OUTPUT = 64  # the `uniform` preset's output length: every request's, unless a variant sets another
MIN_RATIO = 1.5  # a claim of "much more": the lesson's effect, not noise around 1


@dataclass(frozen=True)
class QuizVariant:
    """One variant of a question: what its runs change from the moment's, and the figures recorded for them (by
    metric path: `run` of the question's run, `versus` of the run it is compared with)."""

    seed: int
    scale: float = 1.0  # the moment's requests, times this
    slots: int | None = None  # max_num_seqs; None keeps the moment's
    run: dict | None = None
    versus: dict | None = None
    blocks: int | None = None  # num_blocks (KV memory); None keeps the moment's
    output: int | None = None  # every fixed output length (Workload.with_output); None keeps the workload's

    def settings(self, settings: dict) -> dict:
        mine = {"max_num_seqs": self.slots, "num_blocks": self.blocks}
        return {**settings, **{k: v for k, v in mine.items() if v is not None}}

    def to_dict(self) -> dict:
        return {"seed": self.seed, "scale": self.scale, "slots": self.slots, "blocks": self.blocks,
                "output": self.output, "run": self.run, "versus": self.versus}


@lru_cache(maxsize=1)
def pool() -> dict[str, tuple[QuizVariant, ...]]:
    """Question id -> its checked variants."""
    if not POOL_FILE.exists():
        return {}
    data = json.loads(POOL_FILE.read_text(encoding="utf-8"))
    return {qid: tuple(QuizVariant(**entry) for entry in entries) for qid, entries in data["variants"].items()}


def variant(question_id: str, token: str) -> QuizVariant | None:
    """The variant of `question_id` for the student holding `token`; None (the moment's own runs) for no token or a
    question without a pool."""
    entries = pool().get(question_id)
    if not token or not entries:
        return None
    return entries[variant_seed(token, f"quiz:{question_id}") % len(entries)]


def _nested(figures: dict | None) -> dict | None:
    """{"by_class.chat.ttft_steps.p50": 3.0} -> the summarize()-shaped dict `measure` reads."""
    if figures is None:
        return None
    out: dict = {}
    for path, value in figures.items():
        *parents, last = path.split(".")
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return out


def recorded(question, v: QuizVariant):
    """What `lessons.grading.measure` gives for the variant's recorded figures: what the student is graded against."""
    return measure(question, _nested(v.run), _nested(v.versus))


def metric_paths(question, summary: dict) -> list[str]:
    """The figures of a run a question reads (one per class for "which class waited longest")."""
    if question.compare == "max_class":
        return [question.metric.replace("{cls}", c) for c in summary.get("by_class") or {}]
    return [question.metric]


def requests_in(workload, scale: float) -> int:
    """How many requests a preset has at `scale` (engine.lab.workload.Workload.scaled's rounding)."""
    return sum(max(1, round(c.count * scale)) for c in workload.classes)


def class_count(workload, name: str, scale: float) -> int:
    """How many requests of class `name` a preset has at `scale`."""
    return requests_in(dataclasses.replace(workload, classes=tuple(c for c in workload.classes if c.name == name)),
                       scale)


def givens(question, v: QuizVariant | None, workload, default_slots: int, lang: str) -> dict[str, str]:
    """What a question's prompt states about the student's variant: `{requests}`, each class's `{requests.<class>}`,
    `{slots}`, `{output}` and `{versus}` (the compared run's figure, recorded)."""
    scale, slots, output = (v.scale, v.slots, v.output) if v is not None else (1.0, None, None)
    out = {"requests": str(requests_in(workload, scale)), "slots": str(slots or default_slots),
           "output": str(output or UNIFORM_OUTPUT)}
    out |= {f"requests.{c.name}": str(class_count(workload, c.name, scale)) for c in workload.classes}
    if v is not None and v.versus and question.metric in v.versus:
        out["versus"] = metric_figure(question.metric, v.versus[question.metric], lang)
    return out


def fill(prompt: str, values: dict[str, str]) -> str:
    """The prompt with its `{name}` placeholders filled; other braces are left as written."""
    for name, value in values.items():
        prompt = prompt.replace("{" + name + "}", value)
    return prompt


def for_the_class(prompt: str) -> str:
    """The prompt as the whole class's question (the class view): each student's own figures left out."""
    return re.sub(r"\{(requests(\.[\w-]+)?|slots|versus|output)\}", "…", prompt)


# --- the lesson's point, which every variant in the pool keeps ------------------------------
def _uniform(q, v: QuizVariant, workload) -> bool:
    """Equal lengths, all at step 0: no holes, so continuous batching takes the fixed batch's steps, which is
    ceil(requests / max_num_seqs) batches of the output length."""
    steps, static = v.run["steps"], v.versus["steps"]
    batches = math.ceil(requests_in(workload, v.scale) / v.slots)
    return abs(steps - static) <= 0.05 * static and abs(steps - batches * (v.output or UNIFORM_OUTPUT)) <= 0.05 * steps


def _ratio_at_least(low: float):
    def claim(q, v: QuizVariant, workload) -> bool:
        value = measured_value(recorded(q, v))
        return value is not None and value >= low
    return claim


def _edf_costs_throughput(q, v: QuizVariant, workload) -> bool:
    """EDF lets support cut in: the hardware is no busier, and here it runs a tenth or more fewer tokens a step,
    so the naive "the same as FCFS" is off by more than the tolerance."""
    edf, fcfs = v.run[q.metric], v.versus[q.metric]
    return edf * (1 + q.tolerance["rel"]) < fcfs


def _support_waits_when_slots_are_full(q, v: QuizVariant, workload) -> bool:
    """Under FCFS support questions get only what the batch job leaves: with every slot taken by it at step 0,
    next to none meets the SLO."""
    return v.slots > class_count(workload, "batch", v.scale) or v.run[q.metric] <= 0.25


def _longest_wait(q, v: QuizVariant, workload) -> bool:
    """With every slot taken by the batch job at step 0, the support questions wait longer than the batch job."""
    return v.slots > class_count(workload, "batch", v.scale) or measured_value(recorded(q, v)) == "support"


CLAIMS = {
    "fixed-chat-ttft-ratio": _ratio_at_least(MIN_RATIO),
    "short-wait-p95-ratio": _ratio_at_least(MIN_RATIO),
    "fixed-slot-ratio": _ratio_at_least(1.1),
    "paged-throughput-ratio": _ratio_at_least(1.1),
    "uniform-steps-predict": _uniform,
    "fcfs-support-slo-predict": _support_waits_when_slots_are_full,
    "edf-throughput-predict": _edf_costs_throughput,
    "fcfs-longest-wait": _longest_wait,
}
