"""The policy challenge: one workload where choices matter, graded on measured figures against FCFS.

    grade = grade_key(loaded, "waited - 0.1 * max_tokens")            # the hidden seeds: a submission
    trial = grade_key(loaded, "waited - 0.1 * max_tokens", seeds=(PUBLIC_SEED,))  # the public seed: developing

Chat, reports and a support bot share too little KV memory for all of them, so a rule decides who waits.
Every figure comes from real runs of the engine: SLO attainment per class, throughput (tokens per step)
relative to FCFS on the same requests, the worst class's mean slowdown, Jain's index over slowdown, and
who paid for the rule (the requests whose waiting grew most against FCFS). Step-based figures, so a seed
reproduces every number exactly.

The two hidden seeds are the same for every student and stay on the server: SERVING_LAB_CHALLENGE_SEEDS
("1234,5678", for several replicas), else a file data/challenge-seeds.json drawn once. A Grade holds
figures only, never a seed.
"""
from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path

from engine.config import EngineConfig
from engine.lab.experiment import RunResult, run_requests, workload_requests
from engine.lab.metrics import ideal_steps, request_metrics
from engine.messages import ConfigError
from engine.lab.workload import Arrivals, Lengths, RequestClassSpec, Workload
from engine.models.loaded import LoadedModel

PUBLIC_SEED = 7
SEEDS_ENV = "SERVING_LAB_CHALLENGE_SEEDS"
SEEDS_FILE = Path(__file__).resolve().parents[2] / "data" / "challenge-seeds.json"

# Small enough for a run in seconds on a CPU; 28 blocks of 16 (448 token slots) for 4 slots of up to 256 tokens
CHALLENGE = Workload("policy-challenge", (
    RequestClassSpec("chat", 10, Lengths("uniform", low=12, high=32), Lengths("exponential", 12, 4, 32),
                     Arrivals("poisson", rate=0.25), priority=0, ttft_slo_steps=8),
    RequestClassSpec("report", 3, Lengths("uniform", low=64, high=128), Lengths("uniform", low=64, high=112),
                     Arrivals("poisson", rate=0.08), priority=2, latency_slo_steps=260),
    RequestClassSpec("support", 6, Lengths("uniform", low=16, high=48), Lengths("exponential", 16, 4, 40),
                     Arrivals("poisson", rate=0.15, start_step=6), priority=1, ttft_slo_steps=5),
), engine_hints={"max_num_seqs": 4, "num_blocks": 28, "block_size": 16, "max_num_batched_tokens": 128})

# The challenge's targets, where the student set no goal of their own in the worksheet's Task 4
DEFAULT_TARGETS = {"slo_attainment": 0.8, "throughput_vs_fcfs": 0.95, "worst_class_slowdown": 4.0, "jain": 0.6}


def challenge_config(**settings) -> EngineConfig:
    return EngineConfig(**{**CHALLENGE.engine_hints, **settings})


def hidden_seeds() -> tuple[int, int]:
    """The submission's seeds: the same for everyone on this server, never shown."""
    text = os.environ.get(SEEDS_ENV, "").strip()
    if text:
        parts = [part.strip() for part in text.split(",")]
        if len(parts) != 2 or not all(part.isdigit() for part in parts):
            raise ConfigError("challenge.seeds", name=SEEDS_ENV, value=text)
        return int(parts[0]), int(parts[1])
    if not SEEDS_FILE.exists():
        SEEDS_FILE.parent.mkdir(parents=True, exist_ok=True)
        drawn = json.dumps([PUBLIC_SEED + 1 + secrets.randbelow(10**9) for _ in range(2)])
        try:
            with SEEDS_FILE.open("x") as f:  # exclusive: two sessions drawing at once keep the first
                f.write(drawn)
        except FileExistsError:
            pass
    a, b = json.loads(SEEDS_FILE.read_text())
    return int(a), int(b)


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
    targets: dict[str, float]
    payers: list[Payer] = field(default_factory=list)
    num_runs: int = 0

    @property
    def slo_attainment(self) -> float:
        return sum(self.slo_by_class.values()) / len(self.slo_by_class)

    def met(self) -> dict[str, bool]:
        t = self.targets
        return {"slo_attainment": self.slo_attainment >= t["slo_attainment"],
                "throughput_vs_fcfs": self.throughput_vs_fcfs >= t["throughput_vs_fcfs"],
                "worst_class_slowdown": self.worst_class_slowdown <= t["worst_class_slowdown"],
                "jain": self.jain >= t["jain"]}

    def rank_key(self) -> tuple:
        """Leaderboard order, best first when sorted ascending: targets met, then SLOs, then throughput."""
        return (-sum(self.met().values()), -round(self.slo_attainment, 6), -round(self.throughput_vs_fcfs, 6),
                round(self.worst_class_slowdown, 6))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["slo_attainment"] = self.slo_attainment
        d["met"] = self.met()
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
            preemptive: bool = False) -> RunResult:
    """One run of the student's rule on a seed (raises PolicyKeyError if the key fails on a request)."""
    config = challenge_config(policy_key=policy_key, policy_victim_key=victim_key or None,
                              policy_key_preemptive=preemptive)
    return run_requests(loaded, workload_requests(loaded, CHALLENGE, seed), config)


def grade_runs(pairs: list[tuple[RunResult, RunResult]], targets: dict[str, float] | None = None,
               num_payers: int = 5) -> Grade:
    """Grade (student run, FCFS run) pairs of the same requests: each figure averaged over the pairs."""
    n = len(pairs)
    slo, slo_fcfs, slow, slow_fcfs, ratio, jain, jain_fcfs, payers = {}, {}, {}, {}, 0.0, 0.0, 0.0, []
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
        waited, waited_fcfs = waiting_steps(mine), waiting_steps(fcfs)
        classes = {r.request_id: r.request_class for r in mine.requests}
        named = (lambda rid: rid) if n == 1 else (lambda rid, k=run_no: f"{k}·{rid}")  # ids repeat across seeds
        payers += [Payer(named(rid), classes[rid], waited_fcfs[rid], w) for rid, w in waited.items()
                   if rid in waited_fcfs and w > waited_fcfs[rid]]
    worst = max(slow, key=slow.get)
    payers.sort(key=lambda p: (-p.extra, p.request_id))
    return Grade(slo, slo_fcfs, ratio, slow[worst], worst, max(slow_fcfs.values()), jain, jain_fcfs,
                 {**DEFAULT_TARGETS, **(targets or {})}, payers[:num_payers], n)


def grade_key(loaded: LoadedModel, policy_key: str, victim_key: str | None = None, preemptive: bool = False,
              seeds: tuple[int, ...] | None = None, targets: dict[str, float] | None = None) -> Grade:
    """The student's key on the hidden seeds (a submission), or on the seeds given (the public one)."""
    seeds = hidden_seeds() if seeds is None else seeds
    pairs = [(run_key(loaded, seed, policy_key, victim_key, preemptive), fcfs_run(loaded, seed)) for seed in seeds]
    return grade_runs(pairs, targets)
