"""What the lessons and the UI say about vLLM v1's priority scheduling agrees with lessons/vllm_v1.yaml, in zh and en.

vLLM v1 with `--scheduling-policy priority` does preempt: when KV blocks run out, it preempts the lowest-priority
running request so that running requests can grow. What it never does is let a *waiting* request preempt a running
one (admission never preempts; vLLM issue #40004). So no text may say that v1 never preempts running requests without
that qualification, and every text that describes v1's priority must name the preemption under KV pressure."""
import re
from pathlib import Path

import pytest
import yaml
from test_zh_terms import texts_under

from lessons import LANGS
from lessons.vllm_v1 import load_vllm_boxes

ROOT = Path(__file__).resolve().parent.parent
MIXED = ["lessons/moments.yaml", "lessons/glossary.yaml", "lessons/strings.yaml", "lessons/vllm_v1.yaml",
         "ui/shell/strings.yaml"]  # one entry per text, with its zh and en

V1 = r"vLLM v1|\bv1\b"
PRIORITY = {"en": r"priorit", "zh": r"优先级|priority"}
# "never/not/no ... preempts" (the verb: "no swap preemption" is another matter) in a clause; zh 不……抢占 in a clause,
# not 不够 (KV 块不够时才抢占 says when it does)
NEGATED = {"en": r"\b(?:never|not|n't|no)\b[^.;,:]{0,40}?\bpreempt(?:s|ed|ing)?\b",
           "zh": r"(?:从不|不会|绝不|不让|不)(?!够|足)[^，。；：]{0,14}?抢占"}
PREEMPT = {"en": r"\bpreempt", "zh": r"抢占"}
WAITING = {"en": r"\bwaiting\b|\barriv|\badmi", "zh": r"等待|新到|新来|接纳"}  # who it is that never preempts
KV_PRESSURE = {"en": r"KV blocks run out|running out of KV blocks|memory runs out",
               "zh": r"KV 块不够|显存不够"}
SENTENCE = {"en": r"(?<=[.;!?])\s+", "zh": r"(?<=[。；！？])"}
# The texts that describe v1's priority: (where, id) as units() names them.
DESCRIBE_V1_PRIORITY = [("ui/shell/strings.yaml", "pol.priority-v1"),
                        ("ui/shell/strings.yaml", "knob.vllm_v1_semantics"),
                        ("lessons/moments.yaml", "v1-head-of-line"), ("lessons/vllm_v1.yaml", "priorities-sla"),
                        ("06-four-axes.md", None), ("07-priorities-sla.md", None)]


def _entries(data) -> list[tuple[str | None, object]]:
    """(id, entry): a strings file's keys, or a list's items by their id (a vLLM box by its lesson)."""
    if isinstance(data, dict):
        return list(data.items())
    return [(entry.get("id", entry.get("lesson")) if isinstance(entry, dict) else None, entry) for entry in data]


def units(lang: str) -> list[tuple[str, str | None, str]]:
    """(where, id, text): every lesson paragraph, quiz and worksheet string, moment, glossary entry, vLLM box and UI
    string a student reads in `lang`."""
    out = []
    for path in sorted((ROOT / "lessons" / lang).glob("*.md")):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", path.read_text(encoding="utf-8"))  # a link as its words
        out += [(path.name, None, para.replace("\n", " ")) for para in text.split("\n\n")]
    for name in ("quiz.yaml", "tasks.yaml"):
        tree = yaml.load((ROOT / "lessons" / lang / name).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        for ident, entry in _entries(tree):
            out += [(name, ident, text) for text in texts_under(entry, lang, under=True)]
    for name in MIXED:
        for ident, entry in _entries(yaml.load((ROOT / name).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)):
            out += [(name, ident, text) for text in texts_under(entry, lang)]
    return out


def unqualified_negations(text: str, lang: str) -> list[str]:
    """The sentences of a text about vLLM v1 that say it does not preempt without saying it is a waiting request
    (an arrival, admission) that does not."""
    if not re.search(V1, text):
        return []
    return [s for s in re.split(SENTENCE[lang], text)
            if re.search(NEGATED[lang], s) and not re.search(WAITING[lang], s)]


def describes_v1_priority(text: str, lang: str) -> bool:
    """A text that names vLLM v1, priority and preemption together."""
    return bool(re.search(V1, text) and re.search(PRIORITY[lang], text, re.I) and re.search(PREEMPT[lang], text))


UNITS = {lang: units(lang) for lang in LANGS}


def test_the_scan_reads_every_source_and_catches_the_old_wording():
    for lang in LANGS:
        assert len(UNITS[lang]) > 1000 and {where for where, _, _ in UNITS[lang]} >= {*MIXED, "quiz.yaml",
                                                                                    "06-four-axes.md"}
    old_en = ["vLLM v1 answers the same, with far larger default budgets, and its priority never preempts running "
              "requests.", "Priority as in vLLM v1 (never preempts running requests)"]
    old_zh = ["vLLM v1 的答案相同，只是默认预算大得多，优先级也不抢占运行中的请求。",
              "优先级，按 vLLM v1（不抢占运行中的请求）"]
    assert all(unqualified_negations(t, "en") for t in old_en) and all(unqualified_negations(t, "zh") for t in old_zh)
    # qualified, but describing v1's priority without its preemption under KV pressure
    old_knob = ("Schedule as vLLM v1 does: a waiting request never preempts running ones (vLLM issue #40004), and "
                "preemption is by recompute only. Off: the lab's teaching choice, where priority and edf preempt for "
                "an urgent arrival.")
    old_moment = ("实验室的 priority 策略会为每个新到的交互式请求抢占一个运行中的离线任务；"
                  "vLLM v1 从不为等待中的请求抢占运行中的请求。")
    for text, lang in ((old_knob, "en"), (old_moment, "zh")):
        assert not unqualified_negations(text, lang) and describes_v1_priority(text, lang)
        assert not re.search(KV_PRESSURE[lang], text)
    assert not unqualified_negations("KV 块不够时，vLLM v1 才抢占优先级最低的运行中请求。", "zh")


@pytest.mark.parametrize("lang", LANGS)
def test_the_vllm_v1_box_states_both_facts(lang):
    """The source of truth: v1 preempts the lowest-priority running request under memory pressure, and a waiting
    request does not preempt running ones."""
    text = load_vllm_boxes(lang)["priorities-sla"].text
    assert re.search(KV_PRESSURE[lang], text)
    assert ("preempts the lowest-priority running request" if lang == "en" else "抢占优先级最低的运行中请求") in text
    assert re.search(NEGATED[lang], text) and not unqualified_negations(text, lang)


@pytest.mark.parametrize("lang", LANGS)
def test_no_text_says_vllm_v1_never_preempts_running_requests_without_the_waiting_request_qualification(lang):
    found = [f"{where} {ident}: {s!r}" for where, ident, text in UNITS[lang] for s in unqualified_negations(text, lang)]
    assert not found, "vLLM v1 preempts under KV pressure; only a waiting request never preempts: " + "; ".join(found)


@pytest.mark.parametrize("lang", LANGS)
def test_every_text_describing_vllm_v1_priority_names_the_preemption_under_kv_pressure(lang):
    describing = [(where, ident, text) for where, ident, text in UNITS[lang] if describes_v1_priority(text, lang)]
    silent = [f"{where} {ident}: {text[:100]!r}" for where, ident, text in describing
              if not re.search(KV_PRESSURE[lang], text)]
    assert not silent, "say that v1 preempts the lowest-priority running request when KV blocks run out: " + \
        "; ".join(silent)
    for where, ident in DESCRIBE_V1_PRIORITY:  # the texts that must describe it are found and do
        assert any(w == where and (ident is None or i == ident) for w, i, _ in describing), (lang, where, ident)
