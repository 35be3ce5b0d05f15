"""The battery (tools/quiz_cues.py) finds a cue that is there: on a bank where the right option is always the
shortest, or the right set is always the two shortest, or the right reason of a two-tier question is always the
longest, the strategies that read that form pass it, and the leave-one-out classifier learns it from the other
questions; on a bank whose right option is always a sentence of the lesson, the echo strategies
(tools/quiz_echo.py) pass it. On the real bank no echo strategy passes single choice, in either language
(tests/test_quiz_form.py runs the form-only battery on the real bank)."""
import random

import pytest

from lessons import LANGS, load_quiz
from lessons.loader import Question
from tools.quiz_cues import battery, echo_single_scores, single_items, too_good
from tools.quiz_echo import GRAMS, SOURCES, Reading

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


# --- echo: the option most (or least) like text the student can read (tools/quiz_echo.py) ---------------------

def planted_echo_bank(n: int = 16) -> list[Question]:
    """Single-choice questions whose right option is always a sentence of the batching lesson, beside distractors
    of the lab's words: 'most like the lesson' has only to read it."""
    from lessons.loader import load_lessons

    lesson = next(le for le in load_lessons("en") if le.id == "why-batching")
    sentences = [s.strip() for s in lesson.body.replace("\n", " ").split(". ") if len(s.split()) > 8]
    rng, bank = random.Random(2), []
    for i in range(n):
        options = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(3)]
        answer = rng.randrange(4)
        options.insert(answer, sentences[i % len(sentences)])
        bank.append(Question(f"e{i}", "single", "batching", "Which one?", "", {}, options=tuple(options),
                             answer=answer, lang="en"))
    return bank


def test_an_echo_of_the_lesson_is_found():
    bank = planted_echo_bank()
    scores = echo_single_scores(bank, Reading(bank, "en"))
    chance = 0.25
    for grams in GRAMS:
        assert scores[f"most like the lesson ({grams})"] == 1.0
        assert too_good("single", scores[f"most like the chapter ({grams})"], chance)
        assert scores[f"least like the lesson ({grams})"] == 0.0
    # the bank's explanations are empty: nothing read, every option alike, a tie split four ways
    assert all(abs(scores[f"{end} like explanations already read ({g})"] - chance) < 1e-9
               for end in ("most", "least") for g in GRAMS)


@pytest.mark.parametrize("lang", LANGS)
def test_no_echo_strategy_passes_the_real_bank_on_single_choice(lang):
    """Every single-choice echo strategy (the option most or least like the question's lesson, the chapter or the
    explanations already read, in word and character n-grams) stays within chance + 10 points, over the
    single-choice questions and each tier of the two-tier ones."""
    bank = load_quiz(lang)
    scores = echo_single_scores(bank, Reading(bank, lang))
    chance = sum(1 / len(q.options) for q in single_items(bank)) / len(single_items(bank))
    assert len(scores) == len(SOURCES) * len(GRAMS) * 2
    passing = {name: round(score, 3) for name, score in scores.items() if too_good("single", score, chance)}
    assert not passing, f"{lang}: these echo strategies pass single choice (chance {chance:.0%}): {passing}"
