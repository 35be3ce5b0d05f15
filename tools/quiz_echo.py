"""How far the quiz can be passed by echoing text a student can read: pick the option most (or least) like the
lesson of the question's topic, like the whole chapter, or like the explanations of the questions already
answered in the attempt's order (the quiz shows each question's explanation once it is done).

Likeness is the cosine of TF-IDF vectors (IDF over the lessons and the explanations, the text the student reads)
over two kinds of n-gram: words (1-2 words; for zh, which has no word spaces, pairs of characters and ASCII words)
and characters (3-5 for en, 1-3 for zh). Single choice (and each tier of a two-tier question) is a pick among the
options shown, ties split; multiple-select ticks the options more (or less) like the text than the question's
median option. tools/quiz_cues.py reports these strategies beside the form-only ones.
"""
from __future__ import annotations

import re
from typing import Callable

from lessons.grading import quiz_order
from lessons.loader import Question, load_lessons

TOPIC_LESSONS = {"batching": ("why-batching",), "fixed-batch": ("fixed-batch",),
                 "continuous": ("continuous-batching",), "paged": ("paged-attention",), "four-axes": ("four-axes",),
                 "priorities": ("priorities-sla",), "decisions": ("decisions", "scenarios")}
SOURCES = ("the lesson", "the chapter", "explanations already read")
GRAMS = ("words", "characters")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_ASCII_WORD = re.compile(r"[a-z_0-9]+")


def _zh_words(text: str) -> list[str]:
    """zh has no word spaces: pairs of adjacent Chinese characters stand in for words, beside ASCII words."""
    text = text.lower()
    runs = re.findall(r"[\u4e00-\u9fff]+", text)
    return [r[i:i + 2] for r in runs for i in range(max(1, len(r) - 1))] + _ASCII_WORD.findall(text)


def _vectorizer(lang: str, grams: str):
    from sklearn.feature_extraction.text import TfidfVectorizer

    if grams == "characters":
        return TfidfVectorizer(analyzer="char_wb" if lang == "en" else "char",
                               ngram_range=(3, 5) if lang == "en" else (1, 3), sublinear_tf=True)
    if lang == "zh":
        return TfidfVectorizer(analyzer=_zh_words, sublinear_tf=True)
    return TfidfVectorizer(ngram_range=(1, 2), token_pattern=r"(?u)\b\w+\b", sublinear_tf=True)


class Reading:
    """What a student of one language can read before answering, vectorized: each lesson, the chapter, and every
    question's explanation; `likeness` scores an option against one of them."""

    def __init__(self, bank: list[Question], lang: str):
        lessons = load_lessons(lang)
        self.lang = lang
        self.bank = bank
        self.lesson_text = {le.id: f"{le.title}\n{le.summary}\n{le.body}" for le in lessons}
        self.explanations = {q.id: q.explanation for q in bank}
        self._fitted = {}
        for grams in GRAMS:
            vec = _vectorizer(lang, grams).fit(list(self.lesson_text.values()) + list(self.explanations.values()))
            self._fitted[grams] = vec
        self._cache: dict = {}  # (grams, text) -> its vector
        self._read: dict = {}  # (question id, seed) -> the explanations read before it
        self._likeness: dict = {}  # (grams, option, text) -> their cosine: strategies ask the same pair many times

    def _vector(self, grams: str, text: str):
        key = (grams, text)
        if key not in self._cache:
            self._cache[key] = self._fitted[grams].transform([text])
        return self._cache[key]

    def lesson_of(self, q: Question) -> str:
        ids = list(TOPIC_LESSONS[q.topic])
        page = (q.link or {}).get("page", "")
        if page.startswith("lesson-") and page[len("lesson-"):] not in ids:
            ids.append(page[len("lesson-"):])
        return "\n".join(self.lesson_text[i] for i in ids if i in self.lesson_text)

    def read_before(self, q: Question, seed: int) -> str:
        """The explanations of the questions before `q` in the attempt's order (empty for the first)."""
        key = (q.id.split("#")[0], seed)
        if key not in self._read:
            order = [x.id for x in quiz_order(self.bank, seed)]
            self._read[key] = "\n".join(self.explanations[i] for i in order[:order.index(key[0])])
        return self._read[key]

    def source(self, name: str, q: Question, seed: int) -> str:
        if name == "the lesson":
            return self.lesson_of(q)
        if name == "the chapter":
            return "\n".join(self.lesson_text.values())
        return self.read_before(q, seed)

    def likeness(self, grams: str, option: str, text: str) -> float:
        if not text.strip():
            return 0.0
        key = (grams, option, text)
        if key not in self._likeness:
            a, b = self._vector(grams, option), self._vector(grams, text)
            self._likeness[key] = round(float((a @ b.T).toarray()[0, 0]), 9)  # rows are L2-normalised: the cosine
        return self._likeness[key]


def single_strategies(reading: Reading) -> dict[str, Callable[[Question, list[int], int], list[int]]]:
    """Per source and kind of n-gram, the options most like it and the options least like it (a bank whose
    distractors echo the lessons more than the right options would be passed by the second)."""
    out = {}
    for source in SOURCES:
        for grams in GRAMS:
            for most in (True, False):
                def strategy(q, shown, seed, source=source, grams=grams, most=most):
                    text = reading.source(source, q, seed)
                    values = {i: reading.likeness(grams, q.options[i], text) for i in shown}
                    best = max(values.values()) if most else min(values.values())
                    return [i for i in shown if values[i] == best]
                out[f"{'most' if most else 'least'} like {source} ({grams})"] = strategy
    return out


def tick_strategies(reading: Reading) -> dict[str, Callable[[Question, int], set[int]]]:
    """Multiple-select: tick the options more like the source than the question's median option (or less)."""
    out = {}
    for source in SOURCES:
        for grams in GRAMS:
            for more in (True, False):
                def strategy(q, seed, source=source, grams=grams, more=more):
                    text = reading.source(source, q, seed)
                    values = [reading.likeness(grams, o, text) for o in q.options]
                    median = sorted(values)[len(values) // 2]
                    return {i for i, v in enumerate(values) if (v > median if more else v < median)}
                out[f"{'more' if more else 'less'} like {source} than the median ({grams})"] = strategy
    return out
