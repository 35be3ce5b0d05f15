"""Workloads: who arrives when, with how long a prompt, wanting how many tokens.

Arrivals are counted in engine steps, so a seed reproduces a run's step-based figures exactly.
Prompts are real English text (a public-domain corpus shipped in engine/data); output lengths
follow the workload because requests ignore EOS. The presets are the chapter's situations.
"""
from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

from engine.config import EngineConfig
from engine.messages import ConfigError
from engine.core.request import SLO
from engine.sampling_params import SamplingParams
from engine.lab.trace import TraceRequest

CORPUS = Path(__file__).resolve().parent / "data" / "corpus.txt"


@dataclass(frozen=True)
class Lengths:
    """A length distribution, clamped to [low, high]."""

    kind: str = "fixed"  # fixed | uniform | exponential | lognormal
    mean: float = 32  # fixed: the value; exponential: the mean; lognormal: the median
    low: int = 1
    high: int = 512
    sigma: float = 0.5  # lognormal spread

    def sample(self, rng: random.Random) -> int:
        if self.kind == "fixed":
            value = self.mean
        elif self.kind == "uniform":
            value = rng.randint(self.low, self.high)
        elif self.kind == "exponential":
            value = rng.expovariate(1 / self.mean)
        elif self.kind == "lognormal":
            value = rng.lognormvariate(math.log(self.mean), self.sigma)
        else:
            raise ConfigError("workload.length_kind", value=self.kind)
        return int(min(self.high, max(self.low, round(value))))


@dataclass(frozen=True)
class Arrivals:
    kind: str = "all-at-once"  # all-at-once | poisson | bursty
    rate: float = 1.0  # mean requests per step
    burst_size: int = 8
    start_step: int = 0

    def steps(self, n: int, rng: random.Random) -> list[int]:
        if self.kind == "all-at-once":
            return [self.start_step] * n
        if self.rate <= 0:
            raise ConfigError("workload.rate", value=self.rate)
        if self.kind == "poisson":
            t, out = float(self.start_step), []
            for _ in range(n):
                out.append(int(t))
                t += rng.expovariate(self.rate)
            return out
        if self.kind == "bursty":  # bursts of burst_size at once, with exponential gaps keeping the mean rate
            t, out = float(self.start_step), []
            while len(out) < n:
                out += [int(t)] * min(self.burst_size, n - len(out))
                t += rng.expovariate(self.rate / self.burst_size)
            return out
        raise ConfigError("workload.arrivals", value=self.kind)


@dataclass(frozen=True)
class RequestClassSpec:
    name: str
    count: int
    prompt: Lengths
    output: Lengths
    arrivals: Arrivals = Arrivals()
    priority: int = 0  # lower runs first under the priority policy
    ttft_slo_steps: int | None = None
    latency_slo_steps: int | None = None


@dataclass(frozen=True)
class Workload:
    name: str
    classes: tuple[RequestClassSpec, ...]
    shared_prefix_tokens: int = 0  # a system prompt every request starts with
    temperature: float = 0.0
    engine_hints: dict = field(default_factory=dict)  # engine settings the situation is meant for

    def scaled(self, factor: float) -> "Workload":
        """The same situation with more or fewer requests."""
        classes = tuple(dataclasses.replace(c, count=max(1, round(c.count * factor))) for c in self.classes)
        return dataclasses.replace(self, classes=classes)

    def with_output(self, tokens: int) -> "Workload":
        """The same situation with every fixed output length set to `tokens` (a class whose outputs vary keeps
        them)."""
        classes = tuple(dataclasses.replace(c, output=dataclasses.replace(c.output, mean=tokens))
                        if c.output.kind == "fixed" else c for c in self.classes)
        return dataclasses.replace(self, classes=classes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Workload":
        classes = tuple(RequestClassSpec(**{**c, "prompt": Lengths(**c["prompt"]), "output": Lengths(**c["output"]),
                                            "arrivals": Arrivals(**c["arrivals"])}) for c in d["classes"])
        return cls(**{**d, "classes": classes})


@lru_cache(maxsize=1)
def corpus() -> str:
    return CORPUS.read_text(encoding="utf-8")


def generate(workload: Workload, encode: Callable[[str], list[int]], seed: int = 0,
             bos_token_id: int | None = None) -> list[TraceRequest]:
    """Draw the workload's requests; same seed, same requests. Lengths count text tokens (BOS aside)."""
    rng = random.Random(seed)
    text = corpus()
    prefix = [] if bos_token_id is None else [bos_token_id]
    if workload.shared_prefix_tokens:
        prefix += _text_tokens(text, 0, workload.shared_prefix_tokens, encode)
    requests = []
    for spec in workload.classes:
        arrivals = spec.arrivals.steps(spec.count, rng)
        for i, arrival in enumerate(arrivals):
            prompt_len = spec.prompt.sample(rng)
            ids = prefix + _text_tokens(text, rng.randrange(len(text) // 2), prompt_len, encode)
            params = SamplingParams(temperature=workload.temperature, max_tokens=spec.output.sample(rng),
                                    ignore_eos=True, seed=rng.randrange(2**31) if workload.temperature else None)
            requests.append(TraceRequest(f"{spec.name}-{i}", ids, params, arrival, spec.name, spec.priority,
                                         SLO(ttft_steps=spec.ttft_slo_steps, latency_steps=spec.latency_slo_steps)))
    requests.sort(key=lambda r: r.arrival_step)  # stable: classes keep their order within a step
    return requests


def _text_tokens(text: str, start: int, n: int, encode) -> list[int]:
    """The first n tokens of the text from a word boundary at `start`."""
    start = text.find(" ", start) + 1
    window = 8 * n + 64
    ids = encode(text[start:start + window])
    while len(ids) < n:  # wrap around the corpus if needed
        window *= 2
        ids = encode((text[start:] + text)[:window])
    return ids[:n]


# --- the chapter's situations -------------------------------------------------------------
def _presets() -> dict[str, Workload]:
    chat = RequestClassSpec("chat", 40, Lengths("uniform", low=16, high=48), Lengths("exponential", 24, 4, 64),
                            Arrivals("poisson", rate=0.25), priority=0, ttft_slo_steps=10)
    report = RequestClassSpec("report", 8, Lengths("uniform", low=96, high=192), Lengths("uniform", low=192, high=256),
                              Arrivals("poisson", rate=0.06), priority=2)
    support = RequestClassSpec("support", 32, Lengths("uniform", low=24, high=64), Lengths("exponential", 32, 8, 96),
                               Arrivals("poisson", rate=0.15, start_step=10), priority=0, ttft_slo_steps=8)
    bulk = RequestClassSpec("batch", 24, Lengths("uniform", low=128, high=256), Lengths("uniform", low=128, high=256),
                            Arrivals("all-at-once"), priority=2)
    # the chapter's three kinds of request (交互式请求、内部高优工单、批量离线任务): offline work fills every slot at
    # step 0, so an interactive arrival finds them full (vLLM issue #40004's head-of-line case)
    interactive = RequestClassSpec("interactive", 24, Lengths("uniform", low=16, high=48),
                                   Lengths("exponential", 24, 4, 64), Arrivals("poisson", rate=0.2, start_step=10),
                                   priority=0, ttft_slo_steps=8)
    ticket = RequestClassSpec("ticket", 8, Lengths("uniform", low=64, high=128), Lengths("uniform", low=48, high=96),
                              Arrivals("poisson", rate=0.05, start_step=5), priority=1, ttft_slo_steps=40)
    offline = RequestClassSpec("offline", 16, Lengths("uniform", low=128, high=256),
                               Lengths("uniform", low=128, high=256), Arrivals("all-at-once"), priority=2)
    return {
        "three-kinds": Workload("three-kinds", (interactive, ticket, offline), engine_hints={"max_num_seqs": 8}),
        # memory is tight on purpose: 96 blocks of 16 = 1,536 token slots for 16 slots of up to 448 tokens
        "chat-and-reports": Workload("chat-and-reports", (chat, report),
                                     engine_hints={"max_num_seqs": 16, "num_blocks": 96}),
        "support-bot-vs-batch": Workload("support-bot-vs-batch", (support, bulk), engine_hints={"max_num_seqs": 8}),
        "uniform": Workload("uniform", (RequestClassSpec("uniform", 32, Lengths("fixed", 32), Lengths("fixed", 64)),),
                            engine_hints={"max_num_seqs": 8}),
        # the same requests arriving over time: hole 2 (newcomers wait for the whole batch) without hole 1
        "online-uniform": Workload("online-uniform", (RequestClassSpec(
            "uniform", 32, Lengths("fixed", 32), Lengths("fixed", 64), Arrivals("poisson", rate=0.1)),),
            engine_hints={"max_num_seqs": 8}),
        "high-variance": Workload("high-variance", (RequestClassSpec(
            "mixed", 64, Lengths("uniform", low=16, high=64), Lengths("exponential", 64, 4, 384)),),
            engine_hints={"max_num_seqs": 16}),
        "long-context": Workload("long-context", (RequestClassSpec(
            "long", 24, Lengths("lognormal", 256, 128, 400, sigma=0.3), Lengths("uniform", low=32, high=96),
            Arrivals("poisson", rate=0.5)),), engine_hints={"max_num_seqs": 8, "num_blocks": 64}),
        "shared-system-prompt": Workload("shared-system-prompt", (RequestClassSpec(
            "question", 32, Lengths("uniform", low=8, high=32), Lengths("uniform", low=16, high=48),
            Arrivals("poisson", rate=0.5)),), shared_prefix_tokens=96,
            engine_hints={"max_num_seqs": 8, "enable_prefix_caching": True}),
    }


PRESETS = _presets()


def engine_config_for(workload: Workload | None, **overrides) -> EngineConfig:
    """The workload's suggested settings, then the caller's (None means: keep the default)."""
    settings = dict(workload.engine_hints) if workload else {}
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return EngineConfig(**settings)


def preset(name: str) -> Workload:
    if name not in PRESETS:
        raise ConfigError("workload.unknown", name=name, choices=", ".join(PRESETS))
    return PRESETS[name]
