"""No worksheet verdict depends on words: a task is complete only with verified evidence, right choices of
fact, and each explanation self-assessed as met (and, in a class, marked ✓ by the instructor). The keyword
reader still gives hints, labelled as hints, on the explanations; it never passes or fails one."""
import pytest

from lessons import LANGS, check_field, load_tasks
from lessons.evidence import Verdict
from lessons.worksheet_status import task_status

TASKS = {lang: {t.id: t for t in load_tasks(lang)} for lang in LANGS}
VERIFIED, UNVERIFIED = Verdict(), Verdict()
VERIFIED.add(True, "figure_ok")
UNVERIFIED.add(False, "figure_off")

# explanations that use the right words to say the wrong thing, or only list the words
WRONG_BUT_WORDY = {
    "paged-attention-purpose": [
        "Cache organisation and memory management are not what it is about; paged attention mostly makes the "
        "attention computation itself faster.",
        "Paged attention allocates each request one contiguous run of GPU memory sized for prompt + max_tokens "
        "before it starts, so the attention kernel can read the KV cache faster.",
        "memory cache block allocation waste fragmentation throughput block_table",
        "显存 缓存 块 分配 浪费 碎片 吞吐 块表"],
    "compare-batching": ["length idle every step join leave wait ttft latency",
                         "Lengths do not differ online, no slot is ever idle, and nobody waits; it never lets "
                         "requests join."],
    "hard-requests": ["memory preempt queue wait latency",
                      "It does not touch memory, nobody waits and nothing is preempted."],
    "chat-slo-goal": ["I understand TTFT, throughput and fairness.", "ttft throughput fairness"],
}


def answers_for(task, text: str) -> dict:
    right = {f.id: f.answer for f in task.fields if f.kind == "choice" and f.answer}
    return {**right, **{f.id: text for f in task.explanations()}}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("task_id", list(WRONG_BUT_WORDY))
def test_keyword_stuffed_and_negated_explanations_are_never_marked_complete_by_the_machine(lang, task_id):
    task = TASKS[lang][task_id]
    for text in WRONG_BUT_WORDY[task_id] + task.model_answers.get(task.explanations()[0].id, []):
        answers = answers_for(task, text)
        # whatever the text says, with verified evidence and right choices the machine alone completes nothing
        assert not task_status(task, answers, VERIFIED, {}, None).complete, text
        assert task_status(task, answers, VERIFIED, {}, None).waiting_for() == ["self_assess"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_verdict_is_the_same_for_a_model_answer_and_a_wrong_one(lang):
    task = TASKS[lang]["paged-attention-purpose"]
    good, bad = task.model_answers["answer"][0], WRONG_BUT_WORDY[task.id][0]
    for evidence in (VERIFIED, UNVERIFIED, None):
        for assessed in ({}, {"answer": "met"}, {"answer": "partly"}):
            for marks in ({}, {"answer": "ok"}, {"answer": "needs_work"}):
                for in_class in (False, True):
                    a, b = (task_status(task, answers_for(task, text), evidence, assessed, marks if in_class else None)
                            for text in (good, bad))
                    assert a == b


@pytest.mark.parametrize("lang", LANGS)
def test_complete_needs_evidence_choices_a_met_self_assessment_and_in_class_the_instructors_tick(lang):
    task = TASKS[lang]["compare-batching"]
    answers = answers_for(task, task.model_answers["why_online"][0])
    met = {"why_online": "met"}
    assert task_status(task, answers, VERIFIED, met, None).complete
    assert task_status(task, answers, UNVERIFIED, met, None).waiting_for() == ["evidence"]
    assert task_status(task, answers, None, met, None).waiting_for() == ["evidence"]
    wrong_choice = {**answers, "complexity_fixed": "more-complex"}
    assert task_status(task, wrong_choice, VERIFIED, met, None).waiting_for() == ["choices"]
    assert task_status(task, answers, VERIFIED, {"why_online": "partly"}, None).waiting_for() == ["self_assess"]
    assert task_status(task, answers, VERIFIED, met, {}).waiting_for() == ["mark"]
    assert not task_status(task, answers, VERIFIED, met, {"why_online": "needs_work"}).complete
    assert task_status(task, answers, VERIFIED, met, {"why_online": "ok"}).complete
    assert task_status(task, {**answers, "why_online": "  "}, VERIFIED, met, None).waiting_for() == ["write"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_keyword_reader_still_hints_at_what_an_explanation_leaves_out(lang):
    field = next(f for f in TASKS[lang]["paged-attention-purpose"].fields if f.id == "answer")
    hints = check_field(field, WRONG_BUT_WORDY["paged-attention-purpose"][2], lang)
    assert hints.stuffed and ("关键词" in hints.messages[0] if lang == "zh" else "keywords" in hints.messages[0])
    denied = check_field(field, "It has nothing to do with memory or blocks; it is just a faster kernel.", lang)
    assert any(c.denied for c in denied.criteria)
