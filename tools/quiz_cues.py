"""How far the quiz can be passed without the idea: a battery of lazy students who never read for meaning.

Each strategy sees what a student sees (the question, its options in the attempt's shuffled order) and picks by
form only: length, position, words shared with the question, absolute words, a "because" clause, or a
classifier trained, leave one question out, on such features over the rest of the bank; or by echo
(tools/quiz_echo.py): the option most or least like the lesson, the chapter or the explanations already read,
in word and character n-grams. Single choice is
scored as the share of questions answered right (ties split evenly), against chance (1 / options); each tier of
a two-tier question (the answer, then the reason) counts as a single-choice question here, and the two_tier
section scores both tiers right together against 1 / (options x reasons); multiple-select as the share of
questions whose exact set is ticked, against a random set's chance, and per option (option_credit: the share of
options ticked or left as they should be) against a coin's 1/2.

    .venv/bin/python -m tools.quiz_cues      # every strategy's score, per language
"""
from __future__ import annotations

import math
import re
from itertools import combinations
from typing import Callable

from lessons.attempt import option_order
from lessons.loader import LANGS, Question
from lessons.quiz_loader import load_quiz
from tools.quiz_echo import Reading, single_strategies, tick_strategies

SEEDS = range(20)  # attempts averaged over: positions are shuffled per attempt
ABSOLUTE = {"en": r"\b(always|never|only|every|all|none|cannot|must|any|whatever|however)\b",
            "zh": r"总是|一定|永远|只有|只要|所有|任何|从不|绝不|必然|必须|无论|都会|完全"}
BECAUSE = {"en": r"\b(because|since|so that|so|which is why)\b", "zh": r"因为|所以|因此|由于|从而|以便"}


def words(text: str, lang: str) -> set[str]:
    """Words for en; characters and ASCII words for zh (no word spaces)."""
    text = text.lower()
    if lang == "zh":
        return set(re.findall(r"[\u4e00-\u9fff]", text)) | set(re.findall(r"[a-z_0-9]+", text))
    return set(re.findall(r"[a-z_0-9]+", text))


def size(text: str, lang: str) -> int:
    """Characters for zh, words for en."""
    return len(text.replace(" ", "")) if lang == "zh" else len(text.split())


def features(q: Question, lang: str) -> list[list[float]]:
    """Per option, what form shows: length (and its rank and z-score in the question), words shared with the
    question, absolute words, a because-clause, digits, code, commas."""
    sizes = [size(o, lang) for o in q.options]
    mean = sum(sizes) / len(sizes)
    spread = (sum((s - mean) ** 2 for s in sizes) / len(sizes)) ** 0.5 or 1.0
    ranks = {i: r for r, i in enumerate(sorted(range(len(sizes)), key=lambda i: sizes[i]))}
    asked = words(q.prompt, lang)
    rows = []
    for i, option in enumerate(q.options):
        shared = len(words(option, lang) & asked)
        rows.append([(sizes[i] - mean) / spread, ranks[i] / max(1, len(sizes) - 1), shared,
                     shared / max(1, len(words(option, lang))), bool(re.search(ABSOLUTE[lang], option.lower())),
                     bool(re.search(BECAUSE[lang], option.lower())), bool(re.search(r"\d", option)),
                     "`" in option, option.count(",") + option.count("，") + option.count(";") + option.count("；")])
    return rows


# --- single choice: a strategy maps a question to the options it would pick among (one of them, by chance) ----

def _extreme(key: Callable[[Question, int, str], float], pick_max: bool):
    def strategy(q: Question, lang: str, shown: list[int]) -> list[int]:
        values = {i: key(q, i, lang) for i in shown}
        best = max(values.values()) if pick_max else min(values.values())
        return [i for i in shown if values[i] == best]
    return strategy


def _middle(q: Question, lang: str, shown: list[int]) -> list[int]:
    """The options neither longest nor shortest."""
    ranked = sorted(shown, key=lambda i: size(q.options[i], lang))
    return ranked[1:-1] or ranked


def _position(p: int):
    return lambda q, lang, shown: [shown[min(p, len(shown) - 1)]]


def _without(pattern: dict[str, str]):
    def strategy(q: Question, lang: str, shown: list[int]) -> list[int]:
        clean = [i for i in shown if not re.search(pattern[lang], q.options[i].lower())]
        return clean or shown
    return strategy


def _with(pattern: dict[str, str]):
    def strategy(q: Question, lang: str, shown: list[int]) -> list[int]:
        found = [i for i in shown if re.search(pattern[lang], q.options[i].lower())]
        return found or shown
    return strategy


def _shared(q: Question, i: int, lang: str) -> float:
    return len(words(q.options[i], lang) & words(q.prompt, lang))


def _length(q: Question, i: int, lang: str) -> float:
    return size(q.options[i], lang)


SINGLE = {
    "longest": _extreme(_length, True),
    "shortest": _extreme(_length, False),
    "middle length": _middle,
    **{f"position {p + 1}": _position(p) for p in range(4)},
    "most words shared with the question": _extreme(_shared, True),
    "fewest words shared with the question": _extreme(_shared, False),
    "no absolute words": _without(ABSOLUTE),
    "absolute words": _with(ABSOLUTE),
    "a because-clause": _with(BECAUSE),
    "no because-clause": _without(BECAUSE),
}


TIER = "#"  # a two-tier question's tiers: `<id>#answer` and `<id>#reason`


def tiers(q: Question) -> tuple[Question, Question]:
    """A two-tier question's two tiers as single-choice questions: the answer, then the reason, which the student
    picks under the question and the answer (so a reason that echoes the right answer's words shows as a cue)."""
    base = dict(type="single", topic=q.topic, explanation="", link={}, lang=q.lang)
    return (Question(f"{q.id}{TIER}answer", prompt=q.prompt, options=q.options, answer=q.answer, **base),
            Question(f"{q.id}{TIER}reason", prompt=f"{q.prompt}\n{q.options[q.answer]}", options=q.reasons,
                     answer=q.reason, **base))


def single_items(questions: list[Question]) -> list[Question]:
    """What single choice is scored on: the single-choice questions and both tiers of every two-tier one."""
    return [x for q in questions for x in ((q,) if q.type == "single" else tiers(q) if q.type == "two_tier" else ())]


def _base(q: Question) -> str:
    return q.id.split(TIER)[0]


def _hit(strategy, q: Question, lang: str, seed: int) -> float:
    """1 for a right pick on the options in the seed's order, split evenly among tied picks."""
    picks = strategy(q, lang, option_order(q, seed))
    return (q.answer in picks) / len(picks)


def _echo_hit(strategy, q: Question, seed: int) -> float:
    picks = strategy(q, option_order(q, seed), seed)
    return (q.answer in picks) / len(picks)


def _strategy_means(items: list[Question], score, strategies: dict | None = None) -> dict[str, float]:
    """Each single-choice strategy's mean `score(strategy, question, seed)` over the items and SEEDS."""
    return {name: sum(score(strategy, q, seed) for q in items for seed in SEEDS) / (len(items) * len(SEEDS))
            for name, strategy in (strategies or SINGLE).items()}


def echo_single_scores(questions: list[Question], reading: Reading) -> dict[str, float]:
    """The echo strategies' share of single-choice questions (and two-tier tiers) right, as single_scores."""
    return _strategy_means(single_items(questions), _echo_hit, single_strategies(reading))


def single_scores(questions: list[Question], lang: str, reading: Reading) -> dict[str, float]:
    """Each strategy's share of single-choice questions (and two-tier tiers) right (ties split, averaged over
    SEEDS), the echo strategies' (tools/quiz_echo.py), the leave-one-out classifier's, and chance."""
    single = single_items(questions)
    if not single:
        return {}
    scores = _strategy_means(single, lambda strategy, q, seed: _hit(strategy, q, lang, seed))
    scores.update(echo_single_scores(questions, reading))
    scores["classifier (leave one question out)"] = _classifier_single(questions, single, lang)
    scores["chance"] = sum(1 / len(q.options) for q in single) / len(single)
    return scores


def _fit(rows: list[list[float]], labels: list[int]):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(rows, labels)


def _training(questions: list[Question], lang: str, held_out: Question) -> tuple[list, list]:
    rows, labels = [], []
    for q in questions:
        if _base(q) == _base(held_out):  # the whole question out, both tiers of a two-tier one
            continue
        right = {q.answer} if q.type == "single" else set(q.answer)
        for i, row in enumerate(features(q, lang)):
            rows.append(row)
            labels.append(int(i in right))
    return rows, labels


def _choice(questions: list[Question]) -> list[Question]:
    return single_items(questions) + [q for q in questions if q.type == "multiple"]


def _classifier_hit(bank: list[Question], q: Question, lang: str) -> float:
    """Trained on every other choice question's options (single, two-tier tiers and multiple), the classifier
    picks the option it rates most likely right: 1 if that is right (ties split)."""
    model = _fit(*_training(bank, lang, q))
    p = model.predict_proba(features(q, lang))[:, 1]
    best = [i for i in range(len(p)) if p[i] == p.max()]
    return (q.answer in best) / len(best)


def _classifier_single(questions: list[Question], single: list[Question], lang: str) -> float:
    bank = _choice(questions)
    return sum(_classifier_hit(bank, q, lang) for q in single) / len(single)


def two_tier_scores(questions: list[Question], lang: str, reading: Reading) -> dict[str, float]:
    """Each strategy used on both tiers of every two-tier question: the share right on both (ties split, averaged
    over SEEDS), the classifier's, and chance (1 / (options x reasons))."""
    two = [q for q in questions if q.type == "two_tier"]
    if not two:
        return {}
    scores = _strategy_means(two, lambda strategy, q, seed: math.prod(_hit(strategy, tier, lang, seed)
                                                                      for tier in tiers(q)))
    scores.update(_strategy_means(two, lambda strategy, q, seed: math.prod(_echo_hit(strategy, tier, seed)
                                                                           for tier in tiers(q)),
                                  single_strategies(reading)))
    bank = _choice(questions)
    scores["classifier (leave one question out)"] = sum(
        _classifier_hit(bank, a, lang) * _classifier_hit(bank, r, lang) for a, r in map(tiers, two)) / len(two)
    scores["chance"] = sum(1 / (len(q.options) * len(q.reasons)) for q in two) / len(two)
    return scores


# --- multiple select: a strategy ticks a set -----------------------------------------------------------------

def _k_by_length(k: int, shortest: bool):
    def strategy(q: Question, lang: str) -> set[int]:
        ranked = sorted(range(len(q.options)), key=lambda i: size(q.options[i], lang), reverse=not shortest)
        return set(ranked[:k])
    return strategy


def _below_median(q: Question, lang: str) -> set[int]:
    sizes = sorted(size(o, lang) for o in q.options)
    median = sizes[len(sizes) // 2]
    return {i for i, o in enumerate(q.options) if size(o, lang) < median}


def _set_without(pattern: dict[str, str]):
    return lambda q, lang: {i for i, o in enumerate(q.options) if not re.search(pattern[lang], o.lower())}


MULTIPLE = {
    **{f"the {k} shortest": _k_by_length(k, True) for k in (1, 2, 3)},
    **{f"the {k} longest": _k_by_length(k, False) for k in (1, 2, 3)},
    "shorter than the median": _below_median,
    "every option without absolute words": _set_without(ABSOLUTE),
    "every option": lambda q, lang: set(range(len(q.options))),
}


def _ticks(questions: list[Question], lang: str, reading: Reading) -> dict[str, Callable[[Question, int], set]]:
    """Every multiple-select strategy as `ticks(question, seed)`: the form-only ones and the echo ones."""
    form = {name: (lambda q, seed, strategy=strategy: strategy(q, lang)) for name, strategy in MULTIPLE.items()}
    return form | tick_strategies(reading)


def _mean_over(multiple: list[Question], score) -> float:
    return sum(score(q, seed) for q in multiple for seed in SEEDS) / (len(multiple) * len(SEEDS))


def multiple_scores(questions: list[Question], lang: str, reading: Reading) -> dict[str, float]:
    """Each strategy's exact-set rate, the classifier's (ticks what it rates over one half), and chance: a
    student who knows the bank's rule (1 to n-1 right) and picks such a set at random."""
    multiple = [q for q in questions if q.type == "multiple"]
    if not multiple:
        return {}
    scores = {name: _mean_over(multiple, lambda q, seed, ticks=ticks: ticks(q, seed) == set(q.answer))
              for name, ticks in _ticks(questions, lang, reading).items()}
    bank, hits = _choice(questions), 0
    for q in multiple:
        model = _fit(*_training(bank, lang, q))
        p = model.predict_proba(features(q, lang))[:, 1]
        hits += {i for i in range(len(p)) if p[i] > 0.5} == set(q.answer)
    scores["classifier (leave one question out)"] = hits / len(multiple)
    scores["chance"] = sum(1 / (2 ** len(q.options) - 2) for q in multiple) / len(multiple)
    return scores


def option_credit_scores(questions: list[Question], lang: str, reading: Reading) -> dict[str, float]:
    """Multiple-select, per option: each strategy's mean share of options ticked or left as they should be,
    against chance (each option ticked by a coin: 1/2). The quiz never shows this credit as the score."""
    multiple = [q for q in questions if q.type == "multiple"]
    if not multiple:
        return {}
    scores = {name: _mean_over(multiple, lambda q, seed, ticks=ticks: sum(
        (i in ticks(q, seed)) == (i in q.answer) for i in range(len(q.options))) / len(q.options))
        for name, ticks in _ticks(questions, lang, reading).items()}
    scores["chance"] = 0.5
    return scores


def battery(questions: list[Question], lang: str) -> dict[str, dict[str, float]]:
    """Every strategy's score on this bank: {"single": {...}, "multiple": {...}, "two_tier": {...},
    "option_credit": {...}}."""
    reading = Reading(questions, lang)
    return {"single": single_scores(questions, lang, reading), "multiple": multiple_scores(questions, lang, reading),
            "two_tier": two_tier_scores(questions, lang, reading),
            "option_credit": option_credit_scores(questions, lang, reading)}


def cue_figures(questions: list[Question], lang: str) -> dict:
    """The first guard (tests/test_lessons.py), in the bank's own option order. single (and each two-tier tier):
    share where the right option is (strictly) the longest, where a 'pick the longest' student scores (ties
    split), and the most common right position. multiple: the 'pick the longest half' strategy's exact-match
    rate against the chance rate of picking a random set of that size."""
    single = single_items(questions)
    longest_right = longest_score = shortest_score = 0.0
    positions: dict[int, int] = {}
    for q in single:
        sizes = [size(o, lang) for o in q.options]
        top = [i for i, s in enumerate(sizes) if s == max(sizes)]
        longest_right += q.answer in top and len(top) == 1
        longest_score += (q.answer in top) / len(top)
        low = [i for i, s in enumerate(sizes) if s == min(sizes)]
        shortest_score += (q.answer in low) / len(low)
        positions[q.answer] = positions.get(q.answer, 0) + 1
    multiple = [q for q in questions if q.type == "multiple"]
    half_hits = chance = 0.0
    for q in multiple:
        sizes = [size(o, lang) for o in q.options]
        k = len(q.answer)
        ranked = sorted(range(len(sizes)), key=lambda i: -sizes[i])
        half_hits += set(ranked[:k]) == set(q.answer)
        chance += 1 / len(list(combinations(range(len(sizes)), k)))
    n, m = max(len(single), 1), max(len(multiple), 1)
    return {"single": len(single), "longest_is_right": longest_right / n, "longest_strategy": longest_score / n,
            "shortest_strategy": shortest_score / n,
            "top_position_share": max(positions.values(), default=0) / n, "positions": dict(sorted(positions.items())),
            "multiple": len(multiple), "longest_half": half_hits / m, "chance": chance / m}


def too_good(kind: str, score: float, chance: float) -> bool:
    """The bar a strategy that never reads for meaning must stay under: chance + 10 points (single choice, both
    tiers of a two-tier question, a multiple-select's per-option credit), twice chance (multiple-select, exact
    set)."""
    return score - chance > 0.10 if kind in ("single", "two_tier", "option_credit") else score >= 2 * chance


def _counted(bank: list[Question], kind: str) -> str:
    n = sum(1 for q in bank if q.type == ("multiple" if kind == "option_credit" else kind))
    if kind != "single":
        return f"{n} questions"
    two = sum(1 for q in bank if q.type == "two_tier")
    return f"{n} questions + {2 * two} tiers of {two} two-tier questions"


if __name__ == "__main__":
    for lang in LANGS:
        bank = load_quiz(lang)
        for kind, scores in battery(bank, lang).items():
            if not scores:
                continue
            chance = scores.pop("chance")
            print(f"{lang} {kind} ({_counted(bank, kind)}), chance {chance:.0%}:")
            for name, score in sorted(scores.items(), key=lambda kv: -kv[1]):
                passes = too_good(kind, score, chance)
                print(f"  {score:6.0%}  {name}" + ("   <-- passes without the idea" if passes else ""))
