"""Pick each request's next token from its logits: greedy, temperature, top-k, top-p.

Each seeded request draws from its own generator, so its tokens do not depend on which other
requests share the batch. A row that cannot be sampled (NaN logits, say) fails alone: it is returned
among the failures and the other rows get their tokens.
"""
from __future__ import annotations

import torch

from engine.sampling_params import SamplingParams


def sample(logits: torch.Tensor, params: list[SamplingParams],
           generators: list[torch.Generator | None]) -> tuple[list[int], dict[int, str]]:
    """logits `[rows, vocab]`, one row per sampling request: (a token per row, {row: why it failed})."""
    logits = logits.float()
    tokens = logits.argmax(dim=-1).tolist()
    failed = {}
    for row, (p, gen) in enumerate(zip(params, generators)):
        if p.greedy:
            continue
        try:
            probs = _filtered_probs(logits[row].cpu(), p)
            tokens[row] = int(torch.multinomial(probs, 1, generator=gen).item())
        except (RuntimeError, ValueError, TypeError, ZeroDivisionError, OverflowError) as e:
            failed[row] = f"sampling failed: {type(e).__name__}: {e}"
    return tokens, failed


def _filtered_probs(logits: torch.Tensor, p: SamplingParams) -> torch.Tensor:
    logits = logits / p.temperature
    if p.top_k and p.top_k < logits.numel():
        kth = torch.topk(logits, p.top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if p.top_p < 1.0:
        sorted_logits, order = logits.sort(descending=True)
        cumulative = sorted_logits.softmax(-1).cumsum(-1)
        drop = cumulative - sorted_logits.softmax(-1) >= p.top_p  # keep the smallest set reaching top_p
        drop[0] = False  # and always the likeliest token: a top_p of 5e-324 is 0 in float32 (the fuzzer's find)
        logits = logits.masked_fill(torch.zeros_like(drop).scatter(0, order, drop), float("-inf"))
    return logits.softmax(-1)
