"""The form-only battery (tools/quiz_cues.py) finds a cue that is there: on a bank where the right option is always
the shortest, or the right set is always the two shortest, or the right reason of a two-tier question is always
the longest, the strategies that read that form pass it, and the leave-one-out classifier learns it from the
other questions. (tests/test_quiz_form.py runs the same battery on the real bank.)"""
import random

from lessons.loader import Question
from tools.quiz_cues import battery, too_good

WORDS = "block slot token prefill decode cache step batch queue memory request policy".split()


def planted_bank(n: int = 16) -> list[Question]:
    rng, bank = random.Random(0), []
    for i in range(n):
        sizes = rng.sample(range(4, 16), 4)
        options = tuple(" ".join(rng.choice(WORDS) for _ in range(k)) for k in sizes)
        bank.append(Question(f"s{i}", "single", "batching", "Which one?", "", {}, options=options,
                             answer=sizes.index(min(sizes)), lang="en"))
        sizes = rng.sample(range(4, 16), 5)
        options = tuple(" ".join(rng.choice(WORDS) for _ in range(k)) for k in sizes)
        two = sorted(range(5), key=lambda j: sizes[j])[:2]
        bank.append(Question(f"m{i}", "multiple", "batching", "Which ones?", "", {}, options=options,
                             answer=tuple(sorted(two)), lang="en"))
    return bank


def planted_two_tier_bank(n: int = 12) -> list[Question]:
    """Two-tier questions whose answers carry no cue, but whose right reason is always the longest."""
    rng, bank = random.Random(1), []
    for i in range(n):
        options = tuple(" ".join(rng.choice(WORDS) for _ in range(k)) for k in rng.sample(range(4, 16), 4))
        sizes = rng.sample(range(4, 16), 4)
        reasons = tuple(" ".join(rng.choice(WORDS) for _ in range(k)) for k in sizes)
        bank.append(Question(f"t{i}", "two_tier", "batching", "Which one, and why?", "", {}, options=options,
                             answer=rng.randrange(4), reasons=reasons, reason=sizes.index(max(sizes)), lang="en"))
    return bank


def test_a_cue_planted_in_the_reason_tier_is_found():
    bank = planted_two_tier_bank()
    scores = battery(bank, "en")
    assert too_good("single", scores["single"]["longest"], scores["single"]["chance"])  # the tiers, pooled
    assert too_good("single", scores["single"]["classifier (leave one question out)"], scores["single"]["chance"])
    assert scores["two_tier"]["chance"] == 1 / 16
    # with the answer a random guess, "longest" gets both tiers right about a quarter of the time, not 1/16
    assert too_good("two_tier", scores["two_tier"]["longest"], scores["two_tier"]["chance"])


def test_a_planted_length_cue_is_found_by_the_strategies_and_the_classifier():
    scores = battery(planted_bank(), "en")
    single, multiple = scores["single"], scores["multiple"]
    assert single["shortest"] == 1.0 and single["longest"] == 0.0
    assert too_good("single", single["classifier (leave one question out)"], single["chance"])
    assert multiple["the 2 shortest"] == 1.0
    assert too_good("multiple", multiple["classifier (leave one question out)"], multiple["chance"])
    # shuffled order: no position can carry the cue
    assert all(abs(single[f"position {p}"] - single["chance"]) < 0.15 for p in range(1, 5))
