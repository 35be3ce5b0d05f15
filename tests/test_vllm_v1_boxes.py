"""The "How vLLM v1 does it" boxes: one per lesson whose mechanism vLLM v1 does differently, in zh and en,
saying the facts a student will meet in vLLM's code, and shown on the lesson's page."""
import pytest
from streamlit.testing.v1 import AppTest

from lessons import LANGS, load_lessons
from lessons.vllm_v1 import load_vllm_boxes

BOXES = {lang: load_vllm_boxes(lang) for lang in LANGS}


def test_every_box_belongs_to_a_lesson_in_both_languages_and_names_files_to_read():
    assert set(BOXES["zh"]) == set(BOXES["en"]) == {"why-batching", "continuous-batching", "paged-attention",
                                                    "priorities-sla"}
    for lang in LANGS:
        assert set(BOXES[lang]) <= {le.id for le in load_lessons(lang)}
    read = {f for box in BOXES["en"].values() for f in box.read}
    assert {"vllm/v1/core/sched/scheduler.py", "vllm/v1/core/kv_cache_manager.py"} <= read


@pytest.mark.parametrize("lesson,facts", [
    ("continuous-batching", {"en": ["no prefill or decode phase", "`num_computed_tokens` catches up",
                                    "one token budget", "Running requests are scheduled first",
                                    "only in a step with no preemption", "one step of lag"],
                             "zh": ["没有 prefill 阶段和 decode 阶段之分", "`num_computed_tokens` 逐步追上",
                                    "一个 token 预算", "先调度运行中的请求", "本步没有发生抢占时", "滞后一步"]}),
    ("paged-attention", {"en": ["recompute only", "`--preemption-mode` swap option is gone",
                                "the vLLM paper's and v0's, not v1's"],
                         "zh": ["只用重算来抢占", "swap 选项从 v1 起已经取消", "vLLM 论文和 v0 的做法，不是 v1 的"]}),
    ("priorities-sla", {"en": ["does not preempt running ones once `max_num_seqs` is reached", "#40004",
                               "`vllm_v1_semantics`"],
                        "zh": ["达到 `max_num_seqs`", "并不会抢占", "#40004", "`vllm_v1_semantics`"]}),
    ("why-batching", {"en": ["2048", "8192 and 1024", "chunked prefill on"], "zh": ["2048", "8192 和 1024"]}),
])
def test_each_box_states_what_vllm_v1_does(lesson, facts):
    for lang in LANGS:
        for fact in facts[lang]:
            assert fact in BOXES[lang][lesson].text, (lang, lesson, fact)


def _lesson(lesson_id):
    from ui.views.lesson import render
    render(lesson_id)


@pytest.mark.parametrize("lang", LANGS)
def test_the_lesson_page_shows_its_box_and_a_lesson_without_one_shows_none(lang):
    at = AppTest.from_function(_lesson, args=("priorities-sla",), default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception
    shown = [i.value for i in at.info if "#40004" in i.value]
    assert len(shown) == 1 and "vllm/v1/core/sched/scheduler.py" in shown[0]
    assert ("vLLM v1 怎么做" if lang == "zh" else "How vLLM v1 does it") in shown[0]
    at = AppTest.from_function(_lesson, args=("four-axes",), default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    assert not [i for i in at.info if "vLLM v1" in i.value]
