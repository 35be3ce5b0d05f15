"""Each of the chapter's items has its lesson paragraph and a graded check, in zh in the chapter's own words and
in en."""
import re

import pytest

from lessons import LANGS, load_lessons, load_quiz

LESSONS = {lang: {le.id: le.body for le in load_lessons(lang)} for lang in LANGS}
QUIZ = {lang: {q.id: q for q in load_quiz(lang)} for lang in LANGS}

ITEMS = [  # (lesson, what the zh lesson says in the chapter's words, the graded check)
    ("overview", ["吞吐优化的前提是状态管理做得住"], "state-before-throughput"),
    ("paged-attention", ["缓存更灵活，调度才更现实"], "flexible-cache-scheduling"),
    ("four-axes", ["更偏吞吐还是更偏时延？对长短请求混跑友好吗？缓存组织能不能支撑动态调度？", "真实服务器"],
     "framework-cache-question"),
    ("mechanisms-myths", ["攒够一批再跑"], "batching-wait-myth"),
    ("decisions", ["短请求的等待", "首 token p95"], "short-wait-p95-ratio"),
    ("priorities-sla", ["交互式请求、内部高优工单、批量离线任务", "v1-head-of-line"], None),
]


@pytest.mark.parametrize("lesson,words,check", ITEMS)
def test_each_chapter_item_has_its_paragraph_and_its_check_in_both_languages(lesson, words, check):
    for word in words:
        assert word in LESSONS["zh"][lesson], (lesson, word)
    if check:
        assert check in QUIZ["zh"] and check in QUIZ["en"]
        assert QUIZ["zh"][check].type == QUIZ["en"][check].type and QUIZ["zh"][check].answer == QUIZ["en"][check].answer


def test_lesson_10s_misconceptions_are_the_chapters_and_waiting_to_fill_a_batch_is_refuted_by_a_run():
    for lang in LANGS:
        body = LESSONS[lang]["mechanisms-myths"]
        assert len(re.findall(r"^## （?\(?[abc][)）]", body, re.M)) == 3
        assert "`online-uniform`" in body and "max_wait_steps" in body
    assert "总是比固定 batch 好" not in LESSONS["zh"]["mechanisms-myths"]
    assert QUIZ["en"]["batching-wait-myth"].misconception == "b"


def test_decision_2_measures_the_short_requests_waiting_not_a_throughput_gap():
    q = QUIZ["en"]["short-wait-p95-ratio"]
    assert q.metric == "by_class.chat.ttft_steps.p95" and q.compare == "ratio"
    decision_2 = LESSONS["en"]["decisions"].split("## Decision 2")[1].split("## Decision 3")[0]
    assert "TTFT p95" in decision_2 and "throughput (tokens per step)" not in decision_2
