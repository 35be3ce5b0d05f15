"""The chapter's words: a zh <-> en glossary linked from every lesson that uses a term, and zh text that
uses the chapter's own terms (连续 only ever names continuous batching; contiguous is 整段预留)."""
import re

import pytest
import yaml

from ui.shell.i18n import STRINGS_FILE

from lessons import LANGS, load_lessons, load_moments, load_quiz, load_tasks, valid_pages
from lessons.glossary import first_use_is_linked, load_glossary, render_links
from tests.test_app_teaching import page

GLOSSARY = {lang: load_glossary(lang) for lang in LANGS}
REQUIRED = {"fixed-batch", "continuous-batching", "paged-attention", "kv-cache", "fragmentation",
            "ttft", "tpot", "e2e", "goodput", "slo-sla", "jain", "block", "block-table", "slot-mapping", "preemption",
            "swap", "recompute", "prefix-caching", "chunked-prefill", "token-budget"}


def test_zh_and_en_glossaries_match():
    zh, en = ({t.id: t for t in GLOSSARY[lang]} for lang in ("zh", "en"))
    assert list(zh) == list(en) and REQUIRED <= set(en)
    for tid in en:
        assert zh[tid].view == en[tid].view
        assert (zh[tid].term, zh[tid].other) == (en[tid].other, en[tid].term)  # each names the other language's term
        cjk = re.compile(r"[\u4e00-\u9fff]")
        assert cjk.search(zh[tid].definition) and not cjk.search(en[tid].definition)


@pytest.mark.parametrize("lang", LANGS)
def test_every_term_points_to_a_real_lab_view(lang):
    pages, moments = valid_pages(lang), load_moments()
    for term in GLOSSARY[lang]:
        assert term.view["page"] in pages, term.id
        assert term.view["moment"] is None or moments[term.view["moment"]].page == term.view["page"], term.id


@pytest.mark.parametrize("lang", LANGS)
def test_every_glossary_term_used_in_a_lesson_links_to_it(lang):
    used = 0
    for lesson in load_lessons(lang):
        for term in GLOSSARY[lang]:
            linked = first_use_is_linked(lesson.body, term)
            assert linked is not False, f"{lesson.id}: the first use of {term.id} is not a glossary link"
            used += linked is True
    assert used >= 30
    body = "Read the [TTFT](glossary:ttft) rows."
    assert render_links(body, f"lang={lang}&instructor=1") == \
        f"Read the [TTFT](glossary?lang={lang}&instructor=1#ttft) rows."


def _zh_texts():
    """Every zh text a student reads (keyword lists excepted: they list what students might type)."""
    for lesson in load_lessons("zh"):
        yield lesson.id, lesson.title + lesson.summary + lesson.body
    for q in load_quiz("zh"):
        yield q.id, " ".join([q.prompt, q.explanation, q.hint, *q.options, *q.items, *q.reasons,
                              *(label for _, label in q.classes)])
    for task in load_tasks("zh"):
        yield task.id, " ".join([task.title, task.prompt] + [f.label for f in task.fields] +
                                [x for f in task.fields for c in f.criteria for x in (c.ok, c.missing)] +
                                [a for answers in task.model_answers.values() for a in answers])
    for m in load_moments().values():
        yield m.id, m.narration["zh"]
    strings = yaml.load(STRINGS_FILE.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    for key, value in strings.items():
        yield key, value["zh"]
    for term in GLOSSARY["zh"]:
        yield term.id, term.term + term.definition + term.shows


def test_连续_never_names_the_contiguous_layout():
    for where, text in _zh_texts():
        m = re.search("连续(?:布局|预留|分配|的 KV|的缓存|批处理)", text)  # the layout is 整段预留
        assert not m, f"{where}: …{text[max(0, m.start() - 10):m.end() + 10]}…"


def test_zh_uses_the_chapters_terms_and_glosses_them_on_first_use():
    chapter = re.sub(r"\[([^\]]*)\]\(glossary:[a-z-]+\)", r"\1", "\n".join(le.body for le in load_lessons("zh")))
    for term, gloss in (("固定 batch", "（"), ("continuous batching", "（"), ("paged attention", "（"),
                        ("首 token latency", "（TTFT"), ("缓存组织", "（cache organisation）"),
                        ("显存管理", "（memory management）")):
        first = chapter.index(term)
        assert chapter[first + len(term):].startswith(gloss), term
    assert "整段预留（contiguous）" in chapter and "吞吐优化的前提是状态管理做得住" in chapter
    for where, text in _zh_texts():
        assert "首 token 时间" not in text, where  # the chapter says 首 token latency
        assert "静态批" not in text, where  # the fixed batch has one name: 固定 batch


@pytest.mark.parametrize("lang", LANGS)
def test_the_glossary_page_lists_every_term_with_a_way_to_its_lab_view(lang):
    at = page("pages/glossary.py", lang)
    keys = {b.key for b in at.button}
    assert {f"gloss.{t.id}" for t in GLOSSARY[lang]} <= keys
    assert [s.value for s in at.subheader][:3] == [f"{t.term} · {t.other}" for t in GLOSSARY[lang][:3]]
    next(b for b in at.button if b.key == "gloss.prefix-caching").click().run()
    assert not at.exception, [e.value for e in at.exception]
