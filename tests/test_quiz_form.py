"""The real quiz bank cannot be passed by form alone, in either language: every form-only strategy of
tools/quiz_cues.py (length, position, words shared with the question, absolute words, because-clauses, and a
leave-one-out classifier over such features) stays within 10 points of chance on single choice, on each tier of a
two-tier question and on both tiers together, and under twice chance on the exact set of a multiple-select.
`python -m tools.quiz_cues` prints every figure; tests/test_quiz_cues.py shows the battery finds a cue that is there."""
import functools

import pytest

from lessons import LANGS, load_quiz
from tools.quiz_cues import battery, single_items, size, too_good

BANKS = {lang: load_quiz(lang) for lang in LANGS}
CLASSIFIER = "classifier (leave one question out)"
SINGLE = {"longest", "shortest", "middle length", *(f"position {p}" for p in range(1, 5)),
          "most words shared with the question", "fewest words shared with the question", "absolute words",
          "no absolute words", "a because-clause", "no because-clause", CLASSIFIER}
MULTIPLE = {*(f"the {k} {end}" for k in (1, 2, 3) for end in ("shortest", "longest")), "shorter than the median",
            "every option without absolute words", "every option", CLASSIFIER}


@functools.cache
def battery_scores(lang: str) -> dict:
    """The battery's scores in one language: seconds of classifier fits, so run once by the worker that first
    needs them, not at every worker's collection."""
    return battery(BANKS[lang], lang)


@pytest.mark.parametrize("kind", ["single", "multiple", "two_tier"])
@pytest.mark.parametrize("lang", LANGS)
def test_no_form_only_strategy_passes_the_bank(lang, kind):
    scores = dict(battery_scores(lang)[kind])
    assert scores, f"{lang}: no {kind} questions to score"
    chance = scores.pop("chance")
    form = MULTIPLE if kind == "multiple" else SINGLE
    # the echo strategies (tools/quiz_echo.py) are held to the bar on single choice (tests/test_quiz_cues.py);
    # on the 8 multiple-selects and the 5 two-tier questions they are reported, not yet held
    passing = {name: round(score, 3) for name, score in scores.items()
               if (name in form or kind == "single") and too_good(kind, score, chance)}
    assert not passing, f"{lang} {kind}: these strategies pass without the idea (chance {chance:.0%}): {passing}"
    assert set(scores) >= (MULTIPLE if kind == "multiple" else SINGLE)  # the whole battery ran, classifier too


@pytest.mark.parametrize("lang", LANGS)
def test_the_battery_reads_both_tiers_of_every_two_tier_question(lang):
    bank = BANKS[lang]
    two = [q for q in bank if q.type == "two_tier"]
    items = single_items(bank)
    assert len(items) == sum(q.type == "single" for q in bank) + 2 * len(two)
    assert {x.id for x in items} >= {f"{q.id}#{tier}" for q in two for tier in ("answer", "reason")}
    reasons = [x for x in items if x.id.endswith("#reason")]
    assert all(x.options == q.reasons and x.answer == q.reason for x, q in zip(reasons, two))


@pytest.mark.parametrize("lang", LANGS)
def test_no_right_set_is_the_k_shortest_or_longest_for_any_k(lang):
    """Beyond the battery's own k (1 to 3): the right set of a multiple-select is never simply the k shortest or
    the k longest options, whatever k is."""
    for q in (q for q in BANKS[lang] if q.type == "multiple"):
        ranked = sorted(range(len(q.options)), key=lambda i: size(q.options[i], lang))
        k = len(q.answer)
        assert set(ranked[:k]) != set(q.answer) and set(ranked[-k:]) != set(q.answer), (lang, q.id)


@pytest.mark.parametrize("lang", LANGS)
def test_the_right_option_has_no_favourite_length(lang):
    """Across single choice and both tiers: the right option is the longest, the shortest and in between, none of
    them in more than 40 % of the items."""
    items = single_items(BANKS[lang])
    ranks = []
    for q in items:
        sizes = [size(o, lang) for o in q.options]
        ranks.append("longest" if sizes[q.answer] == max(sizes) else "shortest" if sizes[q.answer] == min(sizes)
                     else "between")
    shares = {r: ranks.count(r) / len(ranks) for r in ("longest", "shortest", "between")}
    assert all(share > 0.1 for share in shares.values()), shares
    assert shares["longest"] <= 0.4 and shares["shortest"] <= 0.4, shares
