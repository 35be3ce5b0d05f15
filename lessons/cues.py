"""How far a quiz can be passed by form alone: the right option's length and position over the bank.

    .venv/bin/python -m lessons.cues      # prints the figures per language
"""
from __future__ import annotations

from itertools import combinations

from lessons.loader import LANGS, Question, load_quiz


def _size(text: str, lang: str) -> int:
    """Characters for zh (no word spaces), words for en."""
    return len(text.replace(" ", "")) if lang == "zh" else len(text.split())


def cue_figures(questions: list[Question], lang: str) -> dict:
    """single: share where the right option is (strictly) the longest, where a 'pick the longest' student
    scores (ties split), and the most common right position. multiple: the 'pick the longest half'
    strategy's exact-match rate against the chance rate of picking a random set of that size."""
    single = [q for q in questions if q.type == "single"]
    longest_right = longest_score = shortest_score = 0.0
    positions: dict[int, int] = {}
    for q in single:
        sizes = [_size(o, lang) for o in q.options]
        top = [i for i, s in enumerate(sizes) if s == max(sizes)]
        longest_right += q.answer in top and len(top) == 1
        longest_score += (q.answer in top) / len(top)
        low = [i for i, s in enumerate(sizes) if s == min(sizes)]
        shortest_score += (q.answer in low) / len(low)
        positions[q.answer] = positions.get(q.answer, 0) + 1
    multiple = [q for q in questions if q.type == "multiple"]
    half_hits = chance = 0.0
    for q in multiple:
        sizes = [_size(o, lang) for o in q.options]
        k = len(q.answer)
        ranked = sorted(range(len(sizes)), key=lambda i: -sizes[i])
        half_hits += set(ranked[:k]) == set(q.answer)
        chance += 1 / len(list(combinations(range(len(sizes)), k)))
    n, m = max(len(single), 1), max(len(multiple), 1)
    return {"single": len(single), "longest_is_right": longest_right / n, "longest_strategy": longest_score / n,
            "shortest_strategy": shortest_score / n,
            "top_position_share": max(positions.values(), default=0) / n, "positions": dict(sorted(positions.items())),
            "multiple": len(multiple), "longest_half": half_hits / m, "chance": chance / m}


if __name__ == "__main__":
    for lang in LANGS:
        f = cue_figures(load_quiz(lang), lang)
        print(f"{lang}: single={f['single']} right-is-longest={f['longest_is_right']:.0%} "
              f"longest-strategy={f['longest_strategy']:.0%} shortest-strategy={f['shortest_strategy']:.0%} "
              f"top-position={f['top_position_share']:.0%} "
              f"positions={f['positions']} | multiple={f['multiple']} longest-half={f['longest_half']:.0%} "
              f"chance={f['chance']:.0%}")
