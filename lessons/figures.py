"""Figures as people write them: a measured value rounded for its unit, and the unit beside it (zh and en)."""
from __future__ import annotations

import math

from lessons.strings import phrase

SHARES = ("slot_utilisation", "slo_attainment", "kv_waste_share", "kv_util")  # 0-1 in summarize(), shown in %
WHOLE = ("steps", "步")  # counted in whole steps


def figure(value: float, unit: str = "", lang: str = "en") -> str:
    """A figure as people write it: percent with one decimal ("37.9 %"), steps as a whole number ("491 steps"), a
    ratio with three significant digits ("2.31×", "12.3×"), anything else with one decimal ("7.2 tokens/step", a
    figure under 1 with two). `value` is already in `unit` (a share given as percent)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return str(value)
    size = abs(value)
    if unit in WHOLE:
        number = f"{round(value):d}"
    elif unit in ("×", "倍"):
        number = f"{value:.0f}" if size >= 100 else f"{value:.1f}" if size >= 10 else f"{value:.2f}"
    elif unit == "%":
        number = f"{value:.1f}"
    else:
        number = f"{value:.0f}" if size >= 100 else f"{value:.1f}" if size >= 1 or size == 0 else f"{value:.2f}"
    if number.startswith("-") and float(number) == 0:
        number = number[1:]
    return with_unit(number, unit, lang)


def unit_word(unit: str, lang: str) -> str:
    """A counted unit ("steps", "tokens/step", "tokens") as the language writes it: "步", "token/步", "个 token"."""
    return phrase(f"unit.{unit}", lang)


def with_unit(number: str, unit: str, lang: str) -> str:
    """"2.31×", "37.9 %" ("37.9%" in Chinese), "491 steps", "2.31 倍"."""
    if unit == "×" or (unit == "%" and lang == "zh"):
        return number + unit
    return f"{number} {unit}" if unit else number


def metric_figure(path: str, value: float, lang: str = "en") -> str:
    """One run's figure of a summarize() metric (`by_class.chat.ttft_steps.p50`) in its own unit: steps, tokens
    per step, a share in percent."""
    parts = [p for p in path.split(".") if not (p[:1] == "p" and p[1:].isdigit())]
    name = parts[-1] if parts else path
    if name in SHARES:
        return figure(100 * value, "%", lang)
    unit = "steps" if name.endswith("steps") else "tokens/step" if name.endswith("per_step") else ""
    return figure(value, unit_word(unit, lang) if unit else "", lang)
