"""Chinese text in the chapter's own words, read from the sources rather than a rendered page: every lesson,
moment, quiz item, worksheet, glossary entry, evidence message and UI string in zh.

The chapter writes 固定 batch, continuous batching, paged attention, 首 token latency (TTFT), 公平性 and 显存;
a student moving between the chapter and the lab must meet one vocabulary, one name per thing, no English
prose outside the agreed terms, and no line break or space between two Chinese characters (Markdown and
folded YAML turn a line break into a space, which shows between Chinese characters)."""
import re
from pathlib import Path

import pytest
import yaml

from tests.test_zh_prose import english_words

ROOT = Path(__file__).resolve().parent.parent
ZH_ONLY = [*sorted((ROOT / "lessons/zh").glob("*.md")), ROOT / "lessons/zh/quiz.yaml", ROOT / "lessons/zh/tasks.yaml"]
MIXED = [ROOT / "lessons/moments.yaml", ROOT / "lessons/glossary.yaml", ROOT / "lessons/strings.yaml",
         ROOT / "lessons/vllm_v1.yaml",
         ROOT / "ui/shell/strings.yaml"]
# Keyword lists name what a student might type (学生常常中英混写), not what the lab says.
NOT_PROSE = {"any", "reject_if_only", "match", "id", "page", "moment", "link", "run", "metric", "settings", "type",
             "topic", "evidence", "kind", "options_from", "workload", "compare", "versus"}
# Replaced by the chapter's terms, or a second name for one thing: (wrong, right).
REPLACED = [("固定批次", "固定 batch"), ("连续批处理", "continuous batching"), ("分页注意力", "paged attention"),
            ("首 token 延迟", "首 token latency"), ("首 token 时间", "首 token latency"), ("静态批", "固定 batch"),
            ("试验场", "游乐场"), ("重新预填充", "重新 prefill"), ("chat 类", "对话类"), ("内存管理", "显存管理")]
# Names: a system and the CLI's and the metrics' own spellings (vllm:*, --trace, vllm bench serve, http://).
NAMES = {"DistServe", "vllm", "sglang", "trace", "bench", "serve", "inf", "http", "https",
         "temperature", "seed", "stop", "true", "false",  # SamplingParams fields and JSON values in API errors
         "kind", "header", "request", "snapshot", "length",  # a trace line's kinds; finish_reason 'length'
         "gguf", "safetensors", "PyPI", "llama"}  # model files and where they come from
CJK = "\u4e00-\u9fff，。：；！？、（）「」“”"


def texts_under(node, lang: str, under: bool = False, skip=frozenset(), key: str = ""):
    """Every string under a `lang` key of a YAML tree (every string, when already `under` one), leaving out the
    entries whose key is in `skip`."""
    if key in skip:
        return
    if isinstance(node, str):
        if under:
            yield node
    elif isinstance(node, list):
        for item in node:
            yield from texts_under(item, lang, under, skip, key)
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from texts_under(v, lang, under or k == lang, skip, str(k))


def zh_texts():
    """(where, text) for every zh text a student or teacher reads, one string at a time."""
    for path in ZH_ONLY:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".md":
            front, body = text.split("\n---\n", 1)
            meta = yaml.load(front.removeprefix("---\n"), Loader=yaml.CSafeLoader)
            yield from ((f"{path.name}:{k}", meta[k]) for k in ("title", "summary"))
            yield from ((f"{path.name}:{i}", para) for i, para in enumerate(body.split("\n\n")))
        else:
            tree = yaml.load(text, Loader=yaml.CSafeLoader)
            yield from ((path.name, s) for s in texts_under(tree, "zh", True, NOT_PROSE))
    for path in MIXED:
        tree = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        yield from ((path.name, s) for s in texts_under(tree, "zh", False, NOT_PROSE))


TEXTS = list(zh_texts())


def test_the_sources_are_all_read():
    assert len(TEXTS) > 1000 and any("固定 batch" in t for _, t in TEXTS)


@pytest.mark.parametrize("wrong,right", REPLACED)
def test_zh_uses_the_chapters_term_not_a_replacement(wrong, right):
    found = [f"{where}: …{t[max(0, t.index(wrong) - 12):t.index(wrong) + 16]}…" for where, t in TEXTS if wrong in t]
    assert not found, f"write {right!r}, not {wrong!r}: " + "; ".join(found[:5])


def test_the_four_axes_are_named_as_the_chapter_names_them():
    axes = re.compile(r"吞吐、[^。\n]{0,12}延迟、[^。\n]{0,6}显存(?:和|、)(公平性?)")
    named = [(where, m.group(1)) for where, t in TEXTS for m in axes.finditer(t)]
    assert named and all(name == "公平性" for _, name in named), named


def test_zh_prose_carries_no_english_outside_the_agreed_terms():
    found = {}
    for where, text in TEXTS:
        if not re.search(r"[\u4e00-\u9fff]", text):
            continue  # a name or a code value (a workload's id), not prose
        for word in english_words(text):
            if word not in NAMES:
                found.setdefault(word, f"{where}: {text[:80]!r}")
    assert not found, "English in zh prose: " + "; ".join(f"{w!r} in {s}" for w, s in list(found.items())[:8])


def test_no_line_break_or_space_between_two_chinese_characters():
    gap = re.compile(f"[{CJK}]\\s+[{CJK}]|[，。：；！？、][ \t]+(?=\\S)")  # 出来。 continuous: a folded line
    found = [f"{where}: {t[max(0, m.start() - 10):m.end() + 10]!r}" for where, t in TEXTS
             for m in gap.finditer(t) if not t[m.start():m.end()].strip(CJK).startswith("\n\n")]
    assert not found, f"{len(found)} breaks inside Chinese prose, e.g. " + "; ".join(found[:6])


def test_the_scans_catch_what_they_are_for():
    assert english_words("chat 是 0 级，report 是 2 级") == ["chat", "report"]
    gap = re.compile(f"[{CJK}]\\s+[{CJK}]|[，。：；！？、][ \t]+(?=\\S)")
    assert gap.search("生成到一半显存不够，\n调度器只能抢占") and gap.search("才出来。 continuous batching 让它")
    assert not gap.search("首 token latency（TTFT）和 `block_table` 见下")


def _stuck_bold(text: str) -> list[str]:
    """Bold spans CommonMark will not open or close: `**` after a Chinese character and before punctuation, or
    after punctuation and before a Chinese character."""
    han, punct = r"[\u4e00-\u9fff]", r"[\[\]（）()「」“”`]"
    out = []
    for m in re.finditer(r"\*\*(.+?)\*\*", text):
        before, after = text[m.start() - 1:m.start()], text[m.end():m.end() + 1]
        inner = m.group(1)
        opens = not (re.match(han, before) and re.match(punct, inner[0]))
        closes = not (re.match(punct, inner[-1]) and re.match(han, after))
        if not (opens and closes):
            out.append(text[max(0, m.start() - 10):m.end() + 10])
    return out


def test_bold_next_to_chinese_opens_and_closes():
    """CommonMark opens `**` only before a non-punctuation character (or after a space or punctuation), and closes it
    likewise: 「可以**[抢占](…)**正在」 shows its asterisks. Put the bold inside the link: [**抢占**](…)."""
    found = [f"{where}: {s!r}" for where, t in TEXTS for s in _stuck_bold(t)]
    assert not found, "; ".join(found[:6])
    assert _stuck_bold("还可以**[抢占](glossary:preemption)**正在") and not _stuck_bold("还可以[**抢占**](g)正在")
    assert not _stuck_bold("批处理器、**请求状态机**（等待")
