"""Read a free-text answer the way a teacher skims it: which keywords it affirms, which it only mentions
to deny, and whether it is sentences or a pasted list of keywords. zh and en, and the two mixed.

Keyword forms: an ASCII keyword matches a whole word, with the usual endings (`wait` finds `waiting`,
`share` finds `sharing`, `under` does not find `understand`); a trailing `*` makes it a stem
(`preempt*` finds `preemption`). Anything else (Chinese, symbols) is a substring with spaces ignored.

Negation: a keyword after a negation cue in the same clause (不/没/无/未/别/并非/不是, not/no/never/n't/
without/rather than ...) is denied; a clause that dismisses its subject ("TTFT does not matter",
「吞吐无所谓」) denies everything in it. "not just / 不只是" does not deny, but marks what follows as
"not the only point", so a speed word there is no speed-only answer."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

_DASHES = str.maketrans({c: " " for c in "-_\u2010\u2011\u2013\u2014"} | {"\u2019": "'", "\u2018": "'"})
_WORDISH = re.compile(r"[a-z0-9 .']+\*?")


def normalize(text: str) -> str:
    """Lowercase, NFKC (full-width -> ASCII), hyphens and underscores as spaces, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", text or "").lower().translate(_DASHES).split())


# Clause ends: punctuation (a dot not inside a number) and words that start a new thought.
_CLAUSE = re.compile(r"[,;:!?()\[\]\n，。；：！？（）]|\.(?!\d)|\b(?:but|so|because|since|while|whereas|which|"
                     r"although|though|yet|however|therefore|thus|instead|then)\b|而是|但是|但|所以|因此|因为|"
                     r"导致|于是|然而|可是|不过|只是|而且|并且|从而")
_NOT_JUST = re.compile(r"\bnot (?:just|only|merely|simply|solely)\b|不只|不仅|不光|不单|不止|不但")
# zh words that contain a cue character but do not negate
# words that contain a cue but do not negate; comparisons ("no more than", 不超过) are bounds
_FALSE_CUES = re.compile(r"不同|不一|不断|不停|不少|不等|无论|不管是|非常|并非只|毫无疑问|未来|无数|"
                         r"不超过|不低于|不高于|不多于|不少于|不大于|不小于|不晚于|不到|"
                         r"\b(?:no|not) (?:more|less|later|longer|worse|higher|lower|fewer) than\b|\bnot exceed")
_NEGATION = re.compile(r"\b(?:not|never|without|neither|nor|cannot|none|nothing|nobody|hardly|rather than|instead of)\b"
                       r"|n't\b|\bno\b|并非|不是|没有|毫无|不|没|无|未|别|非|勿|否")
_DISMISS = re.compile(r"(?:does ?n't|do ?n't|does not|do not|need not|needn't|won't|will not|doesn't) "
                      r"(?:matter|count|care)|\bnot (?:important|relevant|needed|a concern|an issue)\b|\birrelevant\b"
                      r"|\bunimportant\b|\bwho cares\b|\bignore[ds]?\b|\bno need\b|\bdoes not apply\b"
                      r"|\bnothing to do with\b|\bhas no effect on\b"
                      r"|不重要|无所谓|不用管|不关心|不在乎|无关|忽略|不考虑|不用考虑|没关系|没有关系|没什么关系|不相干|不相关"
                      r"|不必在意|不需要关心")


@lru_cache(maxsize=4096)
def pattern(keyword: str):
    """A compiled regex for an ASCII keyword (whole word with endings, or a `*` stem); else the
    keyword itself without spaces, for a substring test on the space-free text."""
    kw = normalize(keyword)
    if not _WORDISH.fullmatch(kw):
        return kw.replace(" ", "")
    stem = kw.endswith("*")
    words = kw.rstrip("*").split()
    last = words[-1]
    if stem:
        end = ""
    elif last.endswith("e"):
        words[-1], end = last[:-1], r"(?:e(?:s|d|r|rs|st)?|ing|ed)"
    elif last[-1:].isdigit() or len(last) <= 3:
        end = r"s?"
    else:
        end = r"(?:s|es|ed|d|ing|er|ers|est|ly)?"
    body = r"\s*".join(re.escape(w) for w in words) + end
    return re.compile(r"(?<![a-z0-9])" + body + ("" if stem else r"(?![a-z0-9])"))


@dataclass
class Reading:
    """Where each keyword stands in one answer."""
    affirmed: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)  # found only after a negation cue
    dismissed: list[str] = field(default_factory=list)  # found only in a clause that says it does not matter
    not_only: list[str] = field(default_factory=list)  # found after "not just" (counts as affirmed)


def _clauses(norm: str) -> list[str]:
    return [c.strip() for c in _CLAUSE.split(norm) if c and c.strip()]


def _spans(clause: str, keyword: str) -> list[tuple[int, int]]:
    p = pattern(keyword)
    if isinstance(p, re.Pattern):
        return [m.span() for m in p.finditer(clause)]
    if not p:
        return []
    flat, index = [], []  # search without spaces, report positions in the clause
    for i, ch in enumerate(clause):
        if ch != " ":
            flat.append(ch)
            index.append(i)
    flat_text = "".join(flat)
    return [(index[m.start()], index[m.start() + len(p) - 1] + 1) for m in re.finditer(re.escape(p), flat_text)]


def _negations(clause: str) -> list[tuple[int, int, int]]:
    """(start, end, end of scope) per negation cue. An English cue reaches four words ("cannot reserve
    the right amount of memory" denies reserving, not memory); "rather than", "instead of" and every
    Chinese cue reach the end of the clause (Chinese clauses are short and split at 所以, 但 ...)."""
    false = [m.span() for m in _FALSE_CUES.finditer(clause)] + [m.span() for m in _NOT_JUST.finditer(clause)]
    out = []
    for m in _NEGATION.finditer(clause):
        if any(a <= m.start() < b for a, b in false):
            continue
        scope = len(clause)
        if m.group().isascii() and m.group() not in ("rather than", "instead of"):
            words = list(re.finditer(r"\S+", clause[m.end():]))
            scope = m.end() + (words[3].end() if len(words) > 3 else len(clause))
        out.append((m.start(), m.end(), min(scope, len(clause))))
    return out


def read(text: str, keywords) -> Reading:
    """Each keyword lands in one list: affirmed somewhere, or else only denied. A cue that is part of
    the keyword itself (「不连续」, 「未知」) is the keyword, not its negation."""
    out = Reading()
    clauses = _clauses(normalize(text))
    for k in keywords:
        state = None
        for clause in clauses:
            dismissed = bool(_DISMISS.search(clause))
            negs, justs = _negations(clause), [m.span() for m in _NOT_JUST.finditer(clause)]
            for a, _ in _spans(clause, k):
                if dismissed:
                    state = state or "dismissed"
                elif any(e <= a < scope for _, e, scope in negs):
                    state = "denied" if state in (None, "dismissed") else state
                elif any(e <= a for s, e in justs):
                    state = "not_only" if state in (None, "dismissed", "denied") else state
                else:
                    state = "affirmed"
        if state:
            getattr(out, state).append(k)
    return out


def matches(text: str, keywords) -> list[str]:
    """The keywords the text affirms (found outside any negation; "not just X" counts)."""
    r = read(text, keywords)
    return [k for k in keywords if k in r.affirmed or k in r.not_only]


_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[a-z0-9']+")


def size(text: str) -> int:
    """Words in en, characters in zh: a CJK character counts as one word."""
    norm = normalize(text)
    return len(_CJK.findall(norm)) + len(_WORD.findall(norm))


def keyword_cover(text: str, keywords) -> tuple[int, int]:
    """(units covered by keywords, all units): words in en, characters in zh."""
    norm = normalize(text)
    covered = [False] * len(norm)
    for k in keywords:
        for a, b in _spans(norm, k):
            covered[a:b] = [True] * (b - a)
    units = [m.span() for m in _CJK.finditer(norm)] + [m.span() for m in _WORD.finditer(norm)]
    return sum(1 for a, b in units if all(covered[a:b])), len(units)


def is_keyword_list(text: str, keywords) -> bool:
    """Keywords with (almost) nothing joining them: fewer than three other words or characters, or
    more than 85 % keywords. Real answers, even dense zh ones, keep their verbs and connectives."""
    covered, total = keyword_cover(text, keywords)
    return total - covered < 3 or covered > 0.85 * total
