"""SamplingParams: how each request picks its next token and when it stops (vLLM's names)."""
from __future__ import annotations

from dataclasses import dataclass

from engine.messages import ConfigError


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 1.0  # 0: greedy
    top_p: float = 1.0
    top_k: int = 0  # 0: off
    max_tokens: int = 16
    seed: int | None = None  # per-request generator: results do not depend on batching
    ignore_eos: bool = False
    stop_token_ids: tuple[int, ...] = ()

    def __post_init__(self):
        if self.temperature < 0:
            raise ConfigError("sampling.temperature", value=self.temperature)
        if not 0 < self.top_p <= 1:
            raise ConfigError("sampling.top_p", value=self.top_p)
        if self.top_k < 0:
            raise ConfigError("sampling.top_k", value=self.top_k)
        if self.max_tokens < 1:
            raise ConfigError("sampling.max_tokens", value=self.max_tokens)
        object.__setattr__(self, "stop_token_ids", tuple(self.stop_token_ids))

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0
