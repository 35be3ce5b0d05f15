"""The glossary (lessons/glossary.yaml): the chapter's terms in zh and en, a one-line definition and the
lab view that shows each. A lesson links a term's first use as `[text](glossary:<id>)`; the lesson page
turns that into a link to the glossary page (render_links)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from lessons.loader import LANGS, ROOT, _lang, _need

PATH = ROOT / "glossary.yaml"
LINK = re.compile(r"\[((?:`[^`]*`|[^\]])*)\]\(glossary:([a-z0-9-]+)\)")
_CODE = re.compile(r"`[^`\n]+`")


@dataclass(frozen=True)
class Term:
    id: str
    term: str  # in this language
    other: str  # the same term in the other language
    definition: str
    shows: str  # where the lab shows it
    view: dict  # {"page": ..., "moment": ... or None}
    match: tuple[str, ...]  # regular expressions for how lessons write it


def load_glossary(lang: str) -> list[Term]:
    data = yaml.load(PATH.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    _need(isinstance(data, list), PATH, "top level", "must be a list of terms")
    other = "en" if _lang(lang) == "zh" else "zh"
    out = []
    for i, d in enumerate(data):
        entry = f"term #{i + 1} ({d.get('id') if isinstance(d, dict) else d!r})"
        _need(isinstance(d, dict) and all(isinstance(d.get(k), dict) for k in (*LANGS, "view")), PATH, entry,
              "needs id, view and a zh and an en mapping")
        here = d[lang]
        for key in ("term", "definition", "shows"):
            _need(isinstance(here.get(key), str) and here[key].strip(), PATH, entry, f"{lang}.{key} must be text")
        match = here.get("match") or []
        _need(isinstance(match, list) and match, PATH, entry, f"{lang}.match must list patterns")
        for p in match:
            try:
                re.compile(p)
            except re.error as e:
                _need(False, PATH, entry, f"bad pattern {p!r}: {e}")
        out.append(Term(d["id"], here["term"], d[other].get("term", ""), here["definition"], here["shows"],
                        {"page": d["view"].get("page"), "moment": d["view"].get("moment")}, tuple(match)))
    _need(len({t.id for t in out}) == len(out), PATH, "ids", "duplicate term ids")
    return out


def _masked(body: str) -> str:
    """The body with what must not count as a use blanked out (same length): headings, fenced code,
    and the targets of links."""
    out, fenced = [], False
    for line in body.splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        blank = fenced or line.startswith(("```", "#"))
        out.append(" " * len(line.rstrip("\n")) + ("\n" if line.endswith("\n") else "") if blank else line)
    text = "".join(out)
    return re.sub(r"\]\([^)]*\)", lambda m: "]" + " " * (len(m.group()) - 1), text)


def first_use(body: str, term: Term) -> tuple[int, int] | None:
    """Where the term is first used in a lesson body (outside headings, code fences and link targets)."""
    text = _masked(body)
    hits = [m.span() for p in term.match for m in re.finditer(p, text, re.I)]
    return min(hits) if hits else None


def links(body: str) -> list[tuple[int, int, str]]:
    """(start, end, term id) of every glossary link."""
    return [(m.start(), m.end(), m.group(2)) for m in LINK.finditer(body)]


def first_use_is_linked(body: str, term: Term) -> bool | None:
    """None when the lesson does not use the term; else whether its first use sits in a link to it."""
    span = first_use(body, term)
    if span is None:
        return None
    return any(a <= span[0] < b and tid == term.id for a, b, tid in links(body))


def link_first_uses(body: str, terms: list[Term]) -> str:
    """Wrap each term's first use in a glossary link (a code span is wrapped whole). Used to write the
    lessons; first_use_is_linked checks them."""
    for term in terms:
        span = first_use(body, term)
        if span is None or any(a <= span[0] < b for a, b, _ in links(body)):
            continue
        a, b = span
        code = next((m.span() for m in _CODE.finditer(body) if m.start() <= a < m.end()), None)
        if code:
            a, b = code
        body = f"{body[:a]}[{body[a:b]}](glossary:{term.id}){body[b:]}"
    return body


def render_links(body: str, query: str) -> str:
    """`(glossary:<id>)` as a link to the glossary page's entry; the language (and instructor mode) ride in
    the URL's query, e.g. "lang=en&instructor=1"."""
    return LINK.sub(lambda m: f"[{m.group(1)}](glossary?{query}#{m.group(2)})", body)


__all__ = ["Term", "load_glossary", "first_use", "first_use_is_linked", "link_first_uses", "render_links", "PATH",
           "Path"]
