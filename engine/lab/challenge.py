"""The policy challenge: one workload where choices matter, graded on measured figures against FCFS.

    seeds = hidden_seeds(secret, "cs-101")                          # a class's two, from the server's secret
    grade = grade_key(loaded, "waited - 0.1 * max_tokens", seeds)    # a submission, on them
    trial = grade_key(loaded, "waited - 0.1 * max_tokens", (PUBLIC_SEED,))  # developing, on the public seed

Chat, reports and a support bot share too little KV memory for all of them, so a rule decides who waits.
Every figure comes from real runs of the engine: SLO attainment per class, throughput (tokens per step)
relative to FCFS on the same requests, the worst class's mean slowdown, Jain's index over slowdown, the
preemptions a run needed (what the rule cost in memory: each one's KV blocks freed, its tokens computed
again), and who paid for the rule (the requests whose waiting grew most against FCFS). Step-based figures,
so a seed reproduces every number exactly. engine/lab/challenge_score.py turns them into the score.

A class's hidden seeds are drawn from SEED_POOL by a keyed hash of its code: the same for every student of the
class and every replica (the secret is the server's, kept in its database), another pair for another class,
and none computable without the secret. A Grade holds figures only, never a seed.
"""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from engine.config import EngineConfig
from engine.lab import challenge_score
from engine.lab.experiment import RunResult, run_requests, workload_requests
from engine.lab.metrics import ideal_steps, request_metrics
from engine.lab.workload import Arrivals, Lengths, RequestClassSpec, Workload
from engine.models.loaded import LoadedModel

if TYPE_CHECKING:  # annotations only
    from engine.core.snapshot import StepSnapshot

PUBLIC_SEED = 7
SEED_POOL = range(1_000, 1_000 + 2**30)  # the hidden seeds' pool: a class's pair is drawn from it

# Small enough for a run in seconds on a CPU; 28 blocks of 16 (448 token slots) for 4 slots of up to 256 tokens
CHALLENGE = Workload("policy-challenge", (
    RequestClassSpec("chat", 10, Lengths("uniform", low=12, high=32), Lengths("exponential", 12, 4, 32),
                     Arrivals("poisson", rate=0.25), priority=0, ttft_slo_steps=8),
    RequestClassSpec("report", 3, Lengths("uniform", low=64, high=128), Lengths("uniform", low=64, high=112),
                     Arrivals("poisson", rate=0.08), priority=2, latency_slo_steps=260),
    RequestClassSpec("support", 6, Lengths("uniform", low=16, high=48), Lengths("exponential", 16, 4, 40),
                     Arrivals("poisson", rate=0.15, start_step=6), priority=1, ttft_slo_steps=5),
), engine_hints={"max_num_seqs": 4, "num_blocks": 28, "block_size": 16, "max_num_batched_tokens": 128})


def challenge_config(**settings) -> EngineConfig:
    return EngineConfig(**{**CHALLENGE.engine_hints, **settings})


def hidden_seeds(secret: str, class_code: str) -> tuple[int, int]:
    """The class's two seeds for submissions: from the pool, by HMAC-SHA256 of the class code under the server's
    secret (never shown; two classes draw their own pairs, the public seed is never one of them)."""
    digest = hmac.new(secret.encode(), f"policy-challenge:{class_code}".encode(), hashlib.sha256).digest()
    first = int.from_bytes(digest[:8], "big") % len(SEED_POOL)
    second = (first + 1 + int.from_bytes(digest[8:16], "big") % (len(SEED_POOL) - 1)) % len(SEED_POOL)  # != first
    return SEED_POOL[first], SEED_POOL[second]


@dataclass
class Payer:
    """A request that waited longer under the student's rule than under FCFS."""
    request_id: str
    request_class: str
    waited_fcfs: int
    waited_key: int

    @property
    def extra(self) -> int:
        return self.waited_key - self.waited_fcfs


@dataclass
class Grade:
    """Per-axis figures averaged over the seeds graded, the same figures for FCFS, and who paid."""
    slo_by_class: dict[str, float]  # class -> share of its requests meeting their SLO
    slo_by_class_fcfs: dict[str, float]
    throughput_vs_fcfs: float  # output tokens per step, over FCFS's
    worst_class_slowdown: float  # the highest class mean of e2e / time alone
    worst_class: str
    worst_class_slowdown_fcfs: float
    jain: float
    jain_fcfs: float
    preemptions: float  # per run: requests evicted from KV memory (their blocks freed, their tokens computed again)
    preemptions_fcfs: float
    targets: dict[str, float]
    payers: list[Payer] = field(default_factory=list)
    num_runs: int = 0

    @property
    def slo_attainment(self) -> float:
        return sum(self.slo_by_class.values()) / len(self.slo_by_class)

    @property
    def slo_attainment_fcfs(self) -> float:
        return sum(self.slo_by_class_fcfs.values()) / len(self.slo_by_class_fcfs)

    def axes(self) -> dict[str, float]:
        """The scored figures, by axis (challenge_score.AXES)."""
        return {axis: getattr(self, axis) for axis in challenge_score.AXES}

    def met(self) -> dict[str, bool]:
        return challenge_score.met(self.axes(), self.targets)

    def score(self) -> float:
        return challenge_score.score(self.axes(), self.targets)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["slo_attainment"] = self.slo_attainment
        d["met"] = self.met()
        d["score"] = self.score()
        return d


def _class_figures(result: RunResult) -> tuple[dict[str, float], dict[str, float]]:
    by_class = result.summary["by_class"]
    slo = {c: d["slo_attainment"] for c, d in by_class.items() if d["slo_attainment"] is not None}
    slowdown = {c: d["slowdown"]["mean"] for c, d in by_class.items() if d["slowdown"]["mean"] is not None}
    return slo, slowdown


def waiting_steps(result: RunResult) -> dict[str, int]:
    """Per request: steps in the system beyond what it would take alone (queueing, preemption, sharing)."""
    budget = result.config.max_num_batched_tokens
    out = {}
    for r in result.requests:
        m = request_metrics(r, budget)
        if m["e2e_steps"] is not None:
            out[r.request_id] = m["e2e_steps"] - ideal_steps(r.num_prompt_tokens, r.num_output_tokens, budget)
    return out


_BUILTIN_RUNS: dict[tuple[int, int, str], RunResult] = {}


def builtin_run(loaded: LoadedModel, seed: int, policy: str = "fcfs") -> RunResult:
    """A built-in policy on a seed: the same for every student, so computed once per model, seed and policy."""
    cache_key = (id(loaded.model), seed, policy)
    if cache_key not in _BUILTIN_RUNS:
        _BUILTIN_RUNS[cache_key] = run_requests(loaded, workload_requests(loaded, CHALLENGE, seed),
                                                challenge_config(policy=policy))
    return _BUILTIN_RUNS[cache_key]


def fcfs_run(loaded: LoadedModel, seed: int) -> RunResult:
    return builtin_run(loaded, seed, "fcfs")


def run_key(loaded: LoadedModel, seed: int, policy_key: str, victim_key: str | None = None,
            preemptive: bool = False, on_step: Callable[[StepSnapshot], None] | None = None) -> RunResult:
    """One run of the student's rule on a seed (raises PolicyKeyError if the key fails on a request); `on_step`
    sees each step's snapshot as it is taken (progress)."""
    config = challenge_config(policy_key=policy_key, policy_victim_key=victim_key or None,
                              policy_key_preemptive=preemptive)
    return run_requests(loaded, workload_requests(loaded, CHALLENGE, seed), config, on_step)


def grade_runs(pairs: list[tuple[RunResult, RunResult]], targets: dict[str, float] | None = None,
               num_payers: int = 5) -> Grade:
    """Grade (student run, FCFS run) pairs of the same requests: each figure averaged over the pairs."""
    n = len(pairs)
    slo, slo_fcfs, slow, slow_fcfs, payers = {}, {}, {}, {}, []
    ratio = jain = jain_fcfs = preempted = preempted_fcfs = 0.0
    for run_no, (mine, fcfs) in enumerate(pairs, start=1):
        for into, (classes, slowdowns) in ((slo, _class_figures(mine)), (slo_fcfs, _class_figures(fcfs))):
            for c, v in classes.items():
                into[c] = into.get(c, 0.0) + v / n
            target = slow if into is slo else slow_fcfs
            for c, v in slowdowns.items():
                target[c] = target.get(c, 0.0) + v / n
        ratio += mine.summary["throughput_tok_per_step"] / fcfs.summary["throughput_tok_per_step"] / n
        jain += (mine.summary["fairness_jain"] or 0.0) / n
        jain_fcfs += (fcfs.summary["fairness_jain"] or 0.0) / n
        preempted += mine.summary["preemptions"] / n
        preempted_fcfs += fcfs.summary["preemptions"] / n
        waited, waited_fcfs = waiting_steps(mine), waiting_steps(fcfs)
        classes = {r.request_id: r.request_class for r in mine.requests}
        named = (lambda rid: rid) if n == 1 else (lambda rid, k=run_no: f"{k}·{rid}")  # ids repeat across seeds
        payers += [Payer(named(rid), classes[rid], waited_fcfs[rid], w) for rid, w in waited.items()
                   if rid in waited_fcfs and w > waited_fcfs[rid]]
    worst = max(slow, key=slow.get)
    payers.sort(key=lambda p: (-p.extra, p.request_id))
    return Grade(slo, slo_fcfs, ratio, slow[worst], worst, max(slow_fcfs.values()), jain, jain_fcfs, preempted,
                 preempted_fcfs, challenge_score.targets_or_default(targets), payers[:num_payers], n)


def key_pairs(loaded: LoadedModel, policy_key: str, seeds: tuple[int, ...], victim_key: str | None = None,
              preemptive: bool = False, on_step: Callable[[int, int, StepSnapshot], None] | None = None
              ) -> list[tuple[RunResult, RunResult]]:
    """(the student's run, FCFS's run) on each seed; `on_step(k, n, snapshot)`: the k-th of n runs took a step."""
    pairs = []
    for k, seed in enumerate(seeds, start=1):
        seen = (lambda snap, k=k: on_step(k, len(seeds), snap)) if on_step else None
        pairs.append((run_key(loaded, seed, policy_key, victim_key, preemptive, seen), fcfs_run(loaded, seed)))
    return pairs


def grade_key(loaded: LoadedModel, policy_key: str, seeds: tuple[int, ...], victim_key: str | None = None,
              preemptive: bool = False, targets: dict[str, float] | None = None) -> Grade:
    """The student's key on the seeds given: a class's hidden pair (a submission) or the public one; the class's
    targets (the defaults where None)."""
    return grade_runs(key_pairs(loaded, policy_key, seeds, victim_key, preemptive), targets)
