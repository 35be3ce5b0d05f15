"""Every page rendered in Chinese carries no English prose: only code identifiers and agreed terms.

Each page is rendered under streamlit.testing in zh, labs after their first lecture moment, the
playground after a run and after a configuration that cannot work; every visible string (markdown,
captions, alerts, metrics, table headers and cells, widget labels and options, expanders, the HTML
views) is split into ASCII words, and a word that is neither an identifier nor on the allow-list fails."""
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.config import BACKENDS, BATCHERS, KV_LAYOUTS, POLICIES, PREEMPTION_MODES, EngineConfig
from lessons import load_lessons, load_moments
from app_support import runs_ended

ROOT = Path(__file__).resolve().parent.parent

# Terms a Chinese text about LLM serving uses as they are (the chapter itself writes them so).
TERMS = {
    "TTFT", "TPOT", "ITL", "E2E", "E2EL", "KV", "GPU", "CPU", "SLO", "SLA", "QPS", "token", "tokens", "prompt",
    "prefill", "decode", "vLLM", "SGLang", "Triton", "torch", "PyTorch", "CUDA", "Streamlit", "Orca",
    "FasterTransformer", "Sarathi", "Serve", "OSDI", "SOSP", "HF", "Hugging", "Face", "Transformers", "TGI", "OPT",
    "LLM", "LLaMA", "Llama", "GQA", "RoPE", "BPE", "GGUF", "JSON", "JSONL", "CSV", "PNG", "HTML", "Markdown", "URL",
    "API", "HTTP", "FCFS", "SJF", "EDF",
    "LPM", "OOM", "FLOPs", "FLOP", "p50", "p90", "p95", "p99", "tiny", "SmolLM2", "Jain", "Paris", "Anyscale",
    "Kwon", "al", "et", "Q", "K", "V", "A100", "H100", "max", "min", "auto", "recompute", "swap", "Poisson", "null",
    "ms", "MB", "MiB", "GB", "GiB", "ID", "id", "ids", "MLP", "vs", "goodput", "Transformer", "softmax",
    "query", "key", "value",  # attention's Q, K and V
    "OpenAI", "Python", "SSE", "Prometheus", "issue",  # a GitHub issue, as Chinese developers write it
    # the chapter's own terms: 固定 batch, continuous batching, paged attention, 首 token latency, model runner
    "batch", "batching", "continuous", "paged", "attention", "latency", "cache", "chunked", "model", "runner",
}
# Names and fixed phrases: the product, the language picker's "English", the established "KV cache".
PHRASES = ("Serving Lab", "English", "KV cache")
# Engine knob names and their values are code: they read the same in vLLM, in the CLI and here.
CODE = ({f.name for f in EngineConfig.__dataclass_fields__.values()} | set(BATCHERS) | set(POLICIES) | set(KV_LAYOUTS)
        | set(PREEMPTION_MODES) | set(BACKENDS)
        | {"cpu", "cuda", "max_tokens", "max_model_len", "fixed", "uniform", "exponential", "lognormal", "all-at-once",
           "poisson", "bursty"})


def english_words(text: str) -> list[str]:
    """ASCII words that read as English prose: code spans, identifiers (with _ . / digits or CamelCase
    inside), request ids (chat-3), file names and numbers are not."""
    text = re.sub(r"<style>.*?</style>", " ", text, flags=re.S)  # the page's CSS
    text = re.sub(r"\]\([^)]*\)", "] ", text)  # a Markdown link's target (glossary?lang=zh#ttft)
    text = re.sub(r"`[^`]*`", " ", text)  # code spans
    text = re.sub(r"https?://\S+|\{[^}]*\}|" + "|".join(PHRASES), " ", text)
    text = re.sub(r"(?<=[\u4e00-\u9fff*])[（(][A-Za-z][A-Za-z -]*[)）]", " ", text)  # a gloss: 重算（recompute）
    words = []
    for token in re.findall(r"[A-Za-z0-9_./#:@+-]*[A-Za-z][A-Za-z0-9_./#:@+-]*", text):
        if token.startswith("/"):  # a path: /metrics, /v1/completions
            continue
        token = token.strip(".:-+/")
        if (not token or token in TERMS or token in CODE or re.search(r"[_\d./#@:]", token)
                or re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", token)):  # request ids, presets, moment ids
            continue
        for part in token.split("-"):
            known = part in TERMS or part in CODE or re.fullmatch(r"[A-Z]+s?", part)
            if part and len(part) > 1 and not known:
                words.append(part)
    return words


def visible_text(at: AppTest) -> list[str]:
    out = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success", "text"):
        out += [e.value for e in getattr(at, kind) if isinstance(e.value, str)]
    # less the page's CSS and its scripts (ui/shell/a11y.py): code, not prose
    out += [re.sub(r"[^{}<>]*\{[^{}]*\}", " ", re.sub(r"(?s)<(script|style)>.*?</\1>", " ", e.proto.body))
            for e in at.get("html")]
    for m in at.metric:
        out += [m.label, str(m.value)]
    for df in [*at.dataframe, *at.table]:
        frame = df.value
        out += [str(c) for c in frame.columns] + [str(v) for v in frame.to_numpy().ravel() if isinstance(v, str)]
    for kind in ("button", "download_button", "toggle", "checkbox", "number_input", "slider", "select_slider",
                 "text_input", "text_area", "expander", "tabs", "form_submit_button"):
        out += [e.label for e in getattr(at, kind) if getattr(e, "label", None)]
    for kind in ("selectbox", "multiselect", "radio", "segmented_control"):
        for e in getattr(at, kind):
            out += [e.label, *map(str, e.options)]
    return [re.sub(r"<[^>]+>", " ", s) for s in out]  # html: the text between the tags


def assert_no_english(at: AppTest, where: str) -> None:
    assert not at.exception, [e.value for e in at.exception]
    found = {}
    for text in visible_text(at):
        for word in english_words(text):
            found.setdefault(word, text[:120])
    assert not found, f"{where}: English in the Chinese page: {sorted(found)}; e.g. " + "; ".join(
        f"{w!r} in {s!r}" for w, s in list(found.items())[:3])


def page(path: str, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["lang"] = "zh"
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(path).run()
    return at


def press(at: AppTest, key: str) -> AppTest:
    next(b for b in [*at.button, *at.form_submit_button] if b.key == key).click().run()
    return at


def first_moment(page_id: str) -> str:
    return next(m.id for m in load_moments().values() if m.page == page_id)


@pytest.mark.parametrize("path", ["pages/home.py", "pages/tasks.py", "pages/quiz.py"])
def test_practice_and_home_pages_carry_no_english_prose_in_zh(path):
    assert_no_english(page(path), path)


@pytest.mark.parametrize("path,page_id,state", [
    ("pages/why_batch.py", "why-batch", {"why-batch.tokens": 4}),
    ("pages/static_vs_continuous.py", "static-vs-continuous", {}),
    ("pages/paged_kv.py", "paged-kv", {}),
    ("pages/policies.py", "policies", {}),
])
@pytest.mark.slow
def test_each_lab_after_its_first_lecture_moment_carries_no_english_prose_in_zh(path, page_id, state):
    at = page(path, **state)
    press(at, f"{page_id}.moment-btn.{first_moment(page_id)}")
    skip = next((b for b in at.button if b.label == "跳过，直接运行"), None)  # the moment's prediction question
    if skip is not None:
        skip.click().run()
    runs_ended(at)
    assert at.get("plotly_chart") or at.dataframe, "the moment produced no result"
    assert_no_english(at, path)


def test_the_playground_after_a_run_and_after_a_bad_config_carries_no_english_prose_in_zh():
    at = page("pages/playground.py", **{"playground.scale": 0.25})
    press(at, "playground.run")
    runs_ended(at)
    frame_line = next(h.proto.body for h in at.get("html") if "lab-frame-value" in h.proto.body)
    last = int(re.search(r'lab-frame-value">\d+ / (\d+)', frame_line).group(1))
    at.slider(key="playground.slider").set_value(last).run()
    assert_no_english(at, "playground after a run")
    at.session_state["playground.max_num_seqs"] = 0
    press(at, "playground.run")
    assert at.error
    assert_no_english(at, "playground after max_num_seqs 0")


def lesson_script(lesson_id: str):
    from ui.views.lesson import render
    render(lesson_id)


@pytest.mark.parametrize("lesson", [lesson.id for lesson in load_lessons("zh")])
def test_each_lesson_carries_no_english_prose_in_zh(lesson):
    at = AppTest.from_function(lesson_script, args=(lesson,), default_timeout=60)
    at.session_state["lang"] = "zh"
    at.run()
    assert_no_english(at, f"lesson {lesson}")


def test_the_scanner_finds_english_prose_and_passes_identifiers():
    found = english_words("这个配置无法运行：max_num_seqs must be at least 1 (got 0)")
    assert found == ["must", "be", "at", "least", "got"]
    assert english_words("请求 chat-3 的 TTFT p50 是 12 ms，`block_table` 见下") == []
    assert english_words("TTFT p50 · report") == ["report"]
    assert english_words("重算（recompute）丢掉 KV cache；切换到 English") == []
    assert english_words("原因：it needs up to 22 KV blocks") == ["it", "needs", "up", "to", "blocks"]
