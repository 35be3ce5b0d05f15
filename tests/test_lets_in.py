"""What would have let a waiting request in (Wait.more_slots / more_blocks / more_budget), checked against the
scheduler itself: on random workloads and knobs, the scheduler's state is copied as each admission check is asked
(and as each static batch forms); for every request the batcher tried and refused, each raise it names is made on a
copy (max_num_seqs, the pool's blocks or the token budget left, one at a time), the check asked again there lets it
in, and a raise one smaller does not. Each knob is met as the answer on some case, and so is "no single knob"."""
import copy
import random
from collections import Counter
from html import escape

import pytest
import streamlit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import SamplingParams
from engine.core.llm_engine import LLMEngine
from engine.core.request import ServiceClass
from engine.core.scheduler import SchedulerOutput
from engine.core.wait import HEAD_CODES
from engine.lab.soak import random_case
from ui.views.words import frame_table_html, wait_text


def raised(saved, knob: str, k: int):
    """A copy of what was saved (the scheduler first), with one knob raised by `k`."""
    saved = copy.deepcopy(saved)
    sched = saved[0]
    if knob == "slots":
        sched.config = copy.copy(sched.config)
        sched.config.max_num_seqs += k
        sched.slots += [None] * k
    elif knob == "blocks":  # k more free blocks at the pool's end
        bm, old = sched.block_manager, sched.block_manager.num_blocks
        bm.pool.num_blocks += k
        bm.pool.ref_counts += [0] * k
        bm.pool.free_ids.extend(range(old, old + k))
        for per_block in ("block_hash", "block_tokens"):
            if hasattr(bm, per_block):
                getattr(bm, per_block).extend([None] * k)
    return saved


def lets_in(saved, knob: str, k: int) -> bool:
    """Whether the raise admits the request: the continuous batcher's admission check asked again, on a copy of the
    state it was asked in (its budget raised for the budget knob); the static batcher's whole decision made again."""
    sched, *rest = raised(saved, knob, k)
    if len(rest) == 2:  # (step, now): the static batch formed again
        return rest[1] in sched.schedule(*rest[0]).admitted
    request, budget, step, now = rest
    return sched.try_admit(request, budget + (k if knob == "budget" else 0), SchedulerOutput(), step, now) > 0


def run_checked(loaded, case, seen: Counter) -> None:
    engine = LLMEngine(loaded, case.config)
    for r in case.requests:
        engine.add_request(r.prompt_token_ids, SamplingParams(temperature=0.0, max_tokens=r.max_tokens,
                                                              ignore_eos=True),
                           arrival_step=r.arrival_step, priority=r.priority, service=ServiceClass(slo=r.slo))
    sched, asked = engine.scheduler, {}
    decide, admit = sched.schedule, sched.try_admit

    def keep(*state):
        kept = copy.deepcopy((sched, *state))
        kept[0].__dict__.pop("schedule"), kept[0].__dict__.pop("try_admit")
        return kept

    def schedule(step, now):  # the state a static batch forms from
        asked["static"] = keep((step, now))
        return decide(step, now)

    def try_admit(request, budget, out, step, now):  # the state each admission check is asked in
        asked[request.request_id] = keep(request, budget, step, now)
        return admit(request, budget, out, step, now)
    sched.schedule, sched.try_admit = schedule, try_admit
    static = case.config.batcher == "static"
    for _ in range(2_000):
        if not engine.has_unfinished():
            break
        snap = engine.step()
        for rid, w in snap.waits.items():
            tried = w.code == "memory" if static else (w.code in HEAD_CODES and rid in snap.blocked)
            assert w.asked == tried and (tried or not w.lets_in), (snap.step, rid, w)  # asked where it was tried
            if not tried:
                continue
            seen["none" if not w.lets_in else "tried"] += 1
            saved = (*asked["static"], rid) if static else asked[rid]
            for knob, k in w.lets_in.items():
                seen[knob] += 1
                assert k >= 1 and lets_in(saved, knob, k), (f"{knob}+{k} did not let it in", snap.step, rid, w,
                                                            case.config)
                assert k == 1 or not lets_in(saved, knob, k - 1), (f"{knob}+{k - 1} let it in already", snap.step,
                                                                   rid, w, case.config)
        asked.clear()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_each_raise_named_lets_the_request_in_at_that_step_and_one_less_does_not(random_small, seed):
    run_checked(random_small, random_case(random.Random(seed), random_small.model.config.vocab_size), Counter())


def test_every_knob_and_no_single_knob_are_each_met(random_small):
    seen: Counter = Counter()
    for seed in range(80):
        case = random_case(random.Random(seed), random_small.model.config.vocab_size)
        run_checked(random_small, case, seen)
    assert {"slots", "blocks", "budget", "none"} <= set(seen), dict(seen)


@pytest.mark.parametrize("lang, said", [
    ("en", "When its turn came, what alone would have let it in: 1 more slot (max_num_seqs +1)"),
    ("zh", "轮到它时，只改一个旋钮就能让它进来的办法：多 1 个槽位（max_num_seqs +1）")])
def test_the_frame_as_a_table_says_what_would_let_it_in(random_small, lang, said):
    streamlit.session_state["lang"] = lang
    from engine.config import EngineConfig
    engine = LLMEngine(random_small, EngineConfig(max_num_seqs=1, num_blocks=64, block_size=4))
    for _ in range(2):
        engine.add_request([5] * 6, SamplingParams(temperature=0.0, max_tokens=3, ignore_eos=True))
    snap = engine.step()
    (rid, w), = snap.waits.items()
    assert w.code == "slots" and w.lets_in == {"slots": 1}
    text = wait_text(w)
    assert said in text and escape(text) in frame_table_html(snap)
