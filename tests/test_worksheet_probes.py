# ruff: noqa: E501  (the probe corpus keeps each answer on one line, as a student typed it)
"""The worksheet checker reads sense, not keywords: a probe corpus of answers a teacher would accept
(the chapter's own minimum answers, the worksheets' model answers) and answers that only look right
(negated, dismissed, keyword-stuffed, repeated, empty), in zh and en. Every probe the issue lists is here.

    .venv/bin/python -m pytest tests/test_worksheet_probes.py -q -s   # prints the corpus size and pass rates
"""
import pytest

from lessons import LANGS, check_field, check_task, load_tasks

TASKS = {lang: {t.id: t for t in load_tasks(lang)} for lang in LANGS}

# (task, field, answer): each must pass. "chapter" = the chapter's own minimum answer, quoted verbatim
# where the chapter gives one (task 3), else written to the same minimum.
GOOD = {
    "chapter": [
        ("paged-attention-purpose", "answer", "paged attention 更像在解决缓存组织和内存管理问题，而不是只让 attention 更快"),
        ("paged-attention-purpose", "answer",
         "Paged attention is closer to solving cache organisation and memory management than to just making attention faster."),
        ("paged-attention-purpose", "answer", "不只是更快：它按需分配固定大小的块来管理 KV cache 显存，浪费少，能同时跑更多请求。"),
        ("paged-attention-purpose", "answer",
         "Not just faster: it manages KV cache memory in fixed-size blocks allocated on demand, so less is wasted."),
        ("compare-batching", "complexity_fixed", "复杂度低"),
        ("compare-batching", "waiting_continuous", "等待时间短"),
        ("compare-batching", "throughput_fixed", "长度不同时偏低：空槽要等最长的请求结束"),
        ("compare-batching", "why_online",
         "在线请求随时到达、长度不一；固定批次里先结束的请求留下空槽，新请求要等整批结束。连续批处理每一步都让请求进出，空槽马上补上，等待和首 token 延迟都变短。"),
        ("chat-slo-goal", "goal", "chat 的 p95 首 token 延迟不超过 10 步，吞吐不低于 FCFS 的 90%，不让任何报告请求饿死"),
        ("chat-slo-goal", "goal", "p95 TTFT for chats at most 10 steps, throughput no lower than 90% of FCFS, and no report starves."),
        ("hard-requests", "why_1", "它的 prefill 很长、占很多 KV 块，短请求只能排队等它。"),
        ("hard-requests", "why_2", "Nobody knows its output length in advance, so the scheduler cannot reserve the right amount of memory."),
    ],
}
# (task, field, answer): each must fail.
BAD = {
    "negated": [
        ("paged-attention-purpose", "answer", "not about memory or blocks and does not raise throughput; only faster"),
        ("paged-attention-purpose", "answer", "它和显存、块都没有关系，也不提高吞吐，只是更快"),
        ("paged-attention-purpose", "answer", "It has nothing to do with memory or blocks; it is just a faster kernel."),
        ("chat-slo-goal", "goal", "TTFT does not matter, throughput does not matter, fairness does not matter"),
        ("chat-slo-goal", "goal", "首 token 延迟无所谓，吞吐无所谓，公平也不重要，p95 随便"),
        ("compare-batching", "complexity_fixed", "复杂度不低"),
        ("compare-batching", "waiting_continuous", "等待时间不短"),
        ("compare-batching", "complexity_fixed", "not simple at all"),
        ("compare-batching", "waiting_continuous", "not short, the queue never moves"),
        ("compare-batching", "throughput_fixed", "Not low at all: there are no idle or empty slots"),
        ("compare-batching", "throughput_continuous", "并不高，没有提升"),
        ("compare-batching", "waiting_fixed", "no waiting"),
        ("compare-batching", "why_online",
         "Lengths do not differ online, no slot is ever idle, and nobody waits; it never lets requests join."),
        ("hard-requests", "why_1", "It does not touch memory, nobody waits and nothing is preempted."),
    ],
    "stuffed": [
        ("paged-attention-purpose", "answer", "memory cache block allocation waste fragmentation throughput block_table"),
        ("paged-attention-purpose", "answer", "显存 缓存 块 分配 浪费 碎片 吞吐 块表"),
        ("compare-batching", "why_online", "length idle every step join leave wait ttft latency"),
        ("compare-batching", "why_online", "长度 空槽 每一步 加入 离开 等待 首 token"),
        ("hard-requests", "why_1", "memory preempt queue wait latency"),
        ("chat-slo-goal", "goal", "I understand TTFT, throughput and fairness."),
        ("chat-slo-goal", "goal", "I understand ttft throughput fairness"),
    ],
    "empty": [
        ("paged-attention-purpose", "answer", ""),
        ("compare-batching", "why_online", "   "),
        ("chat-slo-goal", "goal", "\n"),
        ("hard-requests", "feature_1", ""),
    ],
}
# whole tasks: (task, answers, must pass)
TASK_PROBES = [
    ("repeated", "hard-requests", {"feature_1": "long prompt", "feature_2": "long prompt", "feature_3": "long prompt"}),
    ("repeated", "hard-requests", {"feature_1": "超长的提示", "feature_2": "很长的提示词", "feature_3": "长上下文"}),
    ("repeated", "hard-requests", {"feature_1": "a long prompt", "feature_2": "a very long context", "feature_3": "burst"}),
]
WHY = {"why_1": "它的 KV cache 占很多块，别的请求只能排队。", "why_2": "It holds its memory for a long time, so others wait.",
       "why_3": "Under FCFS it waits behind long work and misses its deadline."}
DISTINCT = {"feature_1": "A very long prompt (long context)", "feature_2": "突发到达：很多请求同时到达",
            "feature_3": "high priority with a tight TTFT SLO"}


def _field(task, fid):
    return next(f for f in task.fields if f.id == fid)


def _model_answers():
    for lang in LANGS:
        for task in TASKS[lang].values():
            for source in LANGS:
                for fid, answers in TASKS[source][task.id].model_answers.items():
                    yield from ((lang, task.id, fid, a) for a in answers)


def _results():
    """(group, lang, passed as expected) for every probe."""
    for lang in LANGS:
        for tid, fid, answer in GOOD["chapter"]:
            yield "chapter", lang, check_field(_field(TASKS[lang][tid], fid), answer, lang).passed
        for group, probes in BAD.items():
            for tid, fid, answer in probes:
                yield group, lang, not check_field(_field(TASKS[lang][tid], fid), answer, lang).passed
        for group, tid, answers in TASK_PROBES:
            yield group, lang, not check_task(TASKS[lang][tid], {**answers, **WHY}).passed
    for lang, tid, fid, answer in _model_answers():
        yield "model", lang, check_field(_field(TASKS[lang][tid], fid), answer, lang).passed


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("tid,fid,answer", GOOD["chapter"])
def test_the_chapters_minimum_answers_pass(lang, tid, fid, answer):
    fb = check_field(_field(TASKS[lang][tid], fid), answer, lang)
    assert fb.passed, fb.messages


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("group,tid,fid,answer", [(g, *p) for g, ps in BAD.items() for p in ps])
def test_negated_stuffed_and_empty_answers_fail(lang, group, tid, fid, answer):
    assert not check_field(_field(TASKS[lang][tid], fid), answer, lang).passed


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("answers", [p[2] for p in TASK_PROBES])
def test_the_same_feature_three_times_fails(lang, answers):
    fb = check_task(TASKS[lang]["hard-requests"], {**answers, **WHY})
    assert not fb.passed and fb.fields["feature_1"].passed
    repeat = next(f for f in ("feature_2", "feature_3") if fb.fields[f].same_as)
    label = _field(TASKS[lang]["hard-requests"], "feature_1").label
    assert label in fb.fields[repeat].messages[0]


@pytest.mark.parametrize("lang", LANGS)
def test_three_different_features_pass(lang):
    assert check_task(TASKS[lang]["hard-requests"], {**DISTINCT, **WHY}).passed


@pytest.mark.parametrize("lang", LANGS)
def test_feedback_names_the_denied_keyword_in_the_students_language(lang):
    task = TASKS[lang]["compare-batching"]
    fb = check_field(_field(task, "complexity_fixed"), "复杂度不低" if lang == "zh" else "not simple", lang)
    crit = fb.criteria[0]
    assert not crit.met and crit.denied
    assert crit.denied[0] in crit.feedback
    assert ("否定" in crit.feedback) if lang == "zh" else ("deny" in crit.feedback)
    fb = check_field(_field(TASKS[lang]["paged-attention-purpose"], "answer"),
                     "memory cache block allocation waste fragmentation throughput", lang)
    assert fb.stuffed and ("关键词" in fb.messages[0] if lang == "zh" else "keywords" in fb.messages[0])


def test_probe_corpus_pass_rates():
    """100 % of the good probes pass and 100 % of the bad ones fail; prints the figures (-s)."""
    rows: dict = {}
    for group, lang, ok in _results():
        n, good = rows.get((group, lang), (0, 0))
        rows[(group, lang)] = (n + 1, good + ok)
    for (group, lang), (n, good) in sorted(rows.items()):
        print(f"probe corpus {group:9} {lang}: {good}/{n} as expected")
    print(f"probe corpus total: {sum(n for n, _ in rows.values())} probes")
    assert all(n == good for n, good in rows.values()), {k: v for k, v in rows.items() if v[0] != v[1]}
