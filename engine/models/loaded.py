"""A loaded model as every loader returns it, and where derived files (dequantized weights) are kept."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.models.llama import LlamaForCausalLM
    from engine.models.tokenizer import Tokenizer


Progress = Callable[[str, float], None]  # (what is happening, fraction done)


@dataclass
class LoadedModel:
    name: str
    model: LlamaForCausalLM
    tokenizer: Tokenizer
    source: str  # where the weights came from, for the UI and the CLI


def cache_root() -> Path:
    """Where derived files live (dequantized weights, the chart component): $SERVING_LAB_CACHE or ~/.cache."""
    return Path(os.environ.get("SERVING_LAB_CACHE") or Path.home() / ".cache" / "serving-lab")
