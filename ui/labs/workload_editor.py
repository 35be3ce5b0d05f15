"""A custom workload as an editable table: one row per request class."""
from __future__ import annotations

import streamlit as st

from engine.lab.workload import Arrivals, Lengths, RequestClassSpec, Workload
from engine.messages import ConfigError

KINDS = ["fixed", "uniform", "exponential", "lognormal"]
ARRIVALS = ["all-at-once", "poisson", "bursty"]
STARTER = [
    {"name": "chat", "count": 24, "priority": 0, "ttft_slo_steps": 10, "arrival": "poisson", "rate": 0.3,
     "burst_size": 8, "start_step": 0, "prompt_kind": "uniform", "prompt_mean": 32, "prompt_low": 16,
     "prompt_high": 48, "output_kind": "exponential", "output_mean": 24, "output_low": 4, "output_high": 64},
    {"name": "report", "count": 6, "priority": 2, "ttft_slo_steps": None, "arrival": "poisson", "rate": 0.05,
     "burst_size": 8, "start_step": 0, "prompt_kind": "uniform", "prompt_mean": 128, "prompt_low": 96,
     "prompt_high": 192, "output_kind": "uniform", "output_mean": 200, "output_low": 160, "output_high": 256},
]


def editor(key: str) -> list[dict]:
    col = st.column_config
    return st.data_editor(STARTER, key=key, num_rows="dynamic", hide_index=True, column_config={
        "arrival": col.SelectboxColumn(options=ARRIVALS, required=True),
        "prompt_kind": col.SelectboxColumn(options=KINDS, required=True),
        "output_kind": col.SelectboxColumn(options=KINDS, required=True)})


def to_workload(rows: list[dict], shared_prefix_tokens: int = 0, temperature: float = 0.0) -> Workload:
    """Rows -> Workload; a row that makes no sense raises ConfigError naming the row and the field."""
    classes = []
    for i, row in enumerate(rows, start=1):
        def num(field, cast=int, low=None, optional=False):
            value = row.get(field)
            if value is None or value == "":
                if optional:
                    return None
                raise ConfigError("workload.row_empty", row=i, field=field)
            try:
                value = cast(value)
            except (TypeError, ValueError):
                raise ConfigError("workload.row_not_number", row=i, field=field, value=value) from None
            if low is not None and value < low:
                raise ConfigError("workload.row_below", row=i, field=field, low=low, value=value)
            return value

        def lengths(part):
            low, high = num(f"{part}_low", low=1), num(f"{part}_high", low=1)
            if high < low:
                raise ConfigError("workload.row_high_below_low", row=i, part=part, high=high, low=low)
            return Lengths(row.get(f"{part}_kind") or "fixed", num(f"{part}_mean", float, low=1), low, high)

        name = str(row.get("name") or f"class{i}")
        classes.append(RequestClassSpec(
            name, num("count", low=1), lengths("prompt"), lengths("output"),
            Arrivals(row.get("arrival") or "all-at-once", num("rate", float, low=0.0001), num("burst_size", low=1),
                     num("start_step", low=0)),
            priority=num("priority"), ttft_slo_steps=num("ttft_slo_steps", low=1, optional=True)))
    if not classes:
        raise ConfigError("workload.no_classes")
    if sum(c.count for c in classes) > 2000:
        raise ConfigError("workload.too_many", limit=2000)
    return Workload("custom", tuple(classes), shared_prefix_tokens=shared_prefix_tokens, temperature=temperature)
