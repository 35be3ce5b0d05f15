"""The form-only battery (lessons/cues.py) finds a cue that is there: on a bank where the right option is always
the shortest, or the right set is always the two shortest, the strategies that read that form pass it, and the
leave-one-out classifier learns it from the other questions."""
import random

from lessons.cues import battery, too_good
from lessons.loader import Question

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


def test_a_planted_length_cue_is_found_by_the_strategies_and_the_classifier():
    scores = battery(planted_bank(), "en")
    single, multiple = scores["single"], scores["multiple"]
    assert single["shortest"] == 1.0 and single["longest"] == 0.0
    assert too_good("single", single["classifier (leave one question out)"], single["chance"])
    assert multiple["the 2 shortest"] == 1.0
    assert too_good("multiple", multiple["classifier (leave one question out)"], multiple["chance"])
    # shuffled order: no position can carry the cue
    assert all(abs(single[f"position {p}"] - single["chance"]) < 0.15 for p in range(1, 5))
