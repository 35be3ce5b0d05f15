"""SamplingParams: how each request picks its next token and when it stops (vLLM's names and bounds).

The bounds below are the one schema every door uses: the HTTP server's request models declare them (and so
its OpenAPI schema), the trace loader builds SamplingParams from a file's line, and SamplingParams checks
them again whoever calls it. A value that passes here cannot fail later inside a step.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from engine.messages import ConfigError

SAMPLING_EPS = 1e-5  # vLLM's _SAMPLING_EPS: a temperature below it is greedy
MIN_TEMPERATURE = 1e-2  # vLLM's _MAX_TEMP: smaller ones are raised to it (logits / 1e-30 overflow)
SEED_MIN, SEED_MAX = -(2 ** 63), 2 ** 63 - 1  # vLLM: torch.iinfo(torch.long)
MAX_STOP_STRINGS = 32  # OpenAI takes 4; vLLM no limit. Each is searched in the text after every token
MAX_STOP_LEN = 256  # characters
MAX_STOP_TOKEN_IDS = 256


def _shown(value):
    """A value in a message: a short number as it is, anything else as its repr clipped (a refusal must not
    echo a megabyte back)."""
    try:
        text = repr(value)
    except RecursionError:  # a list nested thousands deep
        return f"a {type(value).__name__} nested too deep to show"
    if len(text) <= 60:
        return value if isinstance(value, (int, float)) else text
    return text[:57] + "..."


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _finite(x) -> bool:
    """A real number a float can hold and that is not NaN or infinite (an int of 400 digits is not)."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 1.0  # 0 (or below SAMPLING_EPS): greedy
    top_p: float = 1.0
    top_k: int = 0  # 0 or -1: off
    max_tokens: int = 16
    seed: int | None = None  # per-request generator: results do not depend on batching
    ignore_eos: bool = False
    stop_token_ids: tuple[int, ...] = ()
    stop: tuple[str, ...] = ()  # stop strings: the API server ends the text before the first one

    def __post_init__(self):
        t = self.temperature
        if not _is_real(t) or not _finite(t) or t < 0:
            raise ConfigError("sampling.temperature", value=_shown(t))
        t = 0.0 if t < SAMPLING_EPS else max(float(t), MIN_TEMPERATURE)
        object.__setattr__(self, "temperature", t)
        if not _is_real(self.top_p) or not 0 < self.top_p <= 1:  # NaN fails both comparisons
            raise ConfigError("sampling.top_p", value=_shown(self.top_p))
        if not _is_int(self.top_k) or self.top_k < -1:
            raise ConfigError("sampling.top_k", value=_shown(self.top_k))
        if not _is_int(self.max_tokens) or self.max_tokens < 1:
            raise ConfigError("sampling.max_tokens", value=_shown(self.max_tokens))
        if self.seed is not None and (not _is_int(self.seed) or not SEED_MIN <= self.seed <= SEED_MAX):
            raise ConfigError("sampling.seed", low=SEED_MIN, high=SEED_MAX, value=_shown(self.seed))
        if not isinstance(self.ignore_eos, bool):
            raise ConfigError("sampling.ignore_eos", value=_shown(self.ignore_eos))
        ids = self.stop_token_ids
        if (isinstance(ids, (str, bytes)) or not hasattr(ids, "__len__") or len(ids) > MAX_STOP_TOKEN_IDS
                or not all(_is_int(i) and 0 <= i < 2 ** 31 for i in ids)):
            raise ConfigError("sampling.stop_token_ids", limit=MAX_STOP_TOKEN_IDS, value=_shown(ids))
        stop = (self.stop,) if isinstance(self.stop, str) else self.stop
        if (not hasattr(stop, "__len__") or len(stop) > MAX_STOP_STRINGS
                or not all(isinstance(s, str) and len(s) <= MAX_STOP_LEN for s in stop)):
            raise ConfigError("sampling.stop", limit=MAX_STOP_STRINGS, max_len=MAX_STOP_LEN, value=_shown(stop))
        object.__setattr__(self, "top_k", max(int(self.top_k), 0))
        object.__setattr__(self, "max_tokens", int(self.max_tokens))
        object.__setattr__(self, "top_p", float(self.top_p))
        object.__setattr__(self, "seed", None if self.seed is None else int(self.seed))
        object.__setattr__(self, "stop_token_ids", tuple(int(i) for i in ids))
        object.__setattr__(self, "stop", tuple(s for s in stop if s))

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0
