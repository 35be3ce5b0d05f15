"""Why a request waits (engine/core/wait.py), decided where the scheduler holds it back and kept in the step's
snapshot. On random workloads and knobs (the soak's cases), after every step every waiting request has exactly one
wait, and its figures say what held it back: held by slots, the slots were full; by the budget, what was left of
the step's tokens was fewer than it needed, and the batch had used the rest; by memory, it needed more blocks than
were free; queued behind a request, that request could not start and nobody it outranks was let in instead. The
records survive the snapshot columns and a JSON round trip, and each code is met on some case."""
import json
import random
from collections import Counter

from html import escape

import pytest
import streamlit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import SamplingParams
from engine.core.llm_engine import LLMEngine
from engine.core.snapshot import StepSnapshot
from engine.core.wait import CODES, HEAD_CODES, Wait
from engine.lab.columns import SnapshotColumns
from engine.config import EngineConfig
from engine.core.request import SLO, ServiceClass
from engine.lab.soak import SoakCase, SoakRequest, random_case
from ui.views.base import view_labels
from ui.views.words import frame_table_html
from viz.html import queue_html

STEADY_URGENCY = ("fcfs", "sjf")  # urgency read after a step as in it (EDF's deadline moves at the first token)


def run_checked(loaded, case: SoakCase, seen: Counter, seed=None) -> list[StepSnapshot]:
    cfg = case.config
    engine = LLMEngine(loaded, cfg)
    for r in case.requests:
        params = SamplingParams(temperature=0.0, max_tokens=r.max_tokens, ignore_eos=True)
        engine.add_request(r.prompt_token_ids, params, arrival_step=r.arrival_step, priority=r.priority,
                           service=ServiceClass(slo=r.slo))
    snaps = []
    while engine.has_unfinished() and len(snaps) < 3_000:
        snap = engine.step()
        snaps.append(snap)
        where = f"seed {seed}, step {snap.step}, {cfg}"
        assert set(snap.waits) == set(snap.waiting), where
        scheduled = snap.num_prefill_tokens + snap.num_decode_tokens
        for rid, w in snap.waits.items():
            assert w.code in CODES, (where, rid, w)
            seen[w.code] += 1
            if w.code == "slots":
                assert w.have == w.need == cfg.max_num_seqs, (where, rid, w)
                # the slots it found busy: those still held, and those whose requests finished in this step
                assert sum(1 for s in snap.slots if s) + len(snap.finished) == cfg.max_num_seqs, (where, rid, w)
            elif w.code == "budget":
                assert w.need > w.have == cfg.max_num_batched_tokens - scheduled, (where, rid, w)
            elif w.code == "memory":
                assert w.need > w.have and w.have <= snap.num_free_blocks, (where, rid, w)
            elif w.code == "fragmentation":  # enough blocks free in all, but no unbroken run of them
                assert cfg.kv_layout == "contiguous" and w.need <= w.have <= snap.num_free_blocks, (where, rid, w)
            elif w.code == "queue":
                # behind the request tried and refused (its own wait may say it was preempted in this step)
                head = snap.waits.get(w.behind)
                assert head is not None and (head.code in HEAD_CODES or snap.blocked.get(w.behind) in HEAD_CODES), \
                    (where, rid, w)
                if cfg.policy in STEADY_URGENCY:
                    policy, me = engine.scheduler.policy, engine.requests[rid]
                    assert not any(policy.outranks(me, engine.requests[a], snap.step) for a in snap.admitted), where
            elif w.code in ("preempted", "evicted"):
                assert rid in snap.preempted and w.behind in engine.requests, (where, rid, w)
            elif w.code == "preempting":
                assert w.have == len(snap.preempted) > 0 and not snap.admitted, (where, rid, w)
            elif w.code == "batch_running":
                assert cfg.batcher == "static" and not snap.admitted and w.have > 0, (where, rid, w)
            elif w.code == "batch_forming":
                assert cfg.batcher == "static" and w.have < w.need == cfg.max_num_seqs, (where, rid, w)
        for rid in snap.preempted:  # a request preempted and still waiting says by whom
            if rid in snap.waits:
                assert snap.waits[rid].code in ("preempted", "evicted"), (where, rid)
    return snaps


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_every_waiting_request_has_one_wait_and_its_figures_hold(random_small, seed):
    run_checked(random_small, random_case(random.Random(seed), random_small.model.config.vocab_size), Counter(), seed)


def holes() -> SoakCase:
    """Three runs of 4 blocks fill a contiguous pool of 12; the first and the third end at once, and a request
    that needs 8 in a row finds 8 free in two holes of 4."""
    config = EngineConfig(kv_layout="contiguous", block_size=4, num_blocks=12, max_num_seqs=3,
                          contiguous_reserve="max_tokens")
    short, long = [5] * 14, [6] * 6
    return SoakCase(config, [SoakRequest(short, 2, 0, 0, SLO()), SoakRequest(long, 10, 0, 0, SLO()),
                             SoakRequest(short, 2, 0, 0, SLO()), SoakRequest([7] * 24, 8, 0, 0, SLO())], seed=0)


def test_each_code_is_met_and_the_records_survive_the_columns_and_json(random_small):
    seen: Counter = Counter()
    cases = [random_case(random.Random(seed), random_small.model.config.vocab_size) for seed in range(60)]
    for seed, case in enumerate([holes(), *cases]):
        snaps = run_checked(random_small, case, seen, seed)
        columns = SnapshotColumns(snaps)
        assert not columns._kept, "a step's waits the columns could not hold"
        for snap, back in zip(snaps, columns):
            assert back.waits == snap.waits and all(type(w) is Wait for w in back.waits.values())
        for snap in snaps[::7]:
            again = StepSnapshot.from_dict(json.loads(json.dumps(snap.to_dict())))
            assert again.waits == snap.waits and all(type(w) is Wait for w in again.waits.values())
    assert set(seen) == set(CODES), f"codes never met: {set(CODES) - set(seen)}; met: {dict(seen)}"


@pytest.mark.parametrize("lang, words", [("en", "not enough free blocks: it needs {need}, {have} are free"),
                                         ("zh", "空闲块不够：它要 {need} 块，只有 {have} 块空闲")])
def test_the_queue_says_why_each_request_waits_in_the_students_language(random_small, lang, words):
    """Every cell of the queue at the door carries its request's wait in words, with the figures (its tooltip)."""
    streamlit.session_state["lang"] = lang
    snaps = run_checked(random_small, holes(), Counter())
    labels = view_labels()
    for snap in snaps:
        html = queue_html(snap, {}, labels)
        for rid, w in snap.waits.items():
            said = labels[f"wait.{w.code}"].format(have=w.have, need=w.need, behind=w.behind)
            assert escape(said) in html, (snap.step, rid, w)
    runs = [w for snap in snaps for w in snap.waits.values() if w.code == "fragmentation"]
    assert runs, "the holes case makes a request wait for a run of blocks"
    assert words.format(need=9, have=8) == labels["wait.memory"].format(need=9, have=8)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_frame_as_a_table_lists_every_waiting_request_and_why(random_small, lang):
    """The table a screen reader or a projector reads under the views: a row per waiting request, its wait in words."""
    streamlit.session_state["lang"] = lang
    snaps = run_checked(random_small, holes(), Counter())
    labels = view_labels()
    waited = [snap for snap in snaps if snap.waiting]
    assert waited
    for snap in waited:
        html = frame_table_html(snap)
        for rid, w in snap.waits.items():
            said = labels[f"wait.{w.code}"].format(have=w.have, need=w.need, behind=w.behind)
            # the cell goes on with what would have let it in (tests/test_lets_in.py)
            assert f"<td>{escape(rid)}</td>" in html and f"<td>{escape(said)}" in html, (snap.step, rid)
    assert frame_table_html(snaps[-1]).count("<table") == 1  # nobody waits at the end: the slots alone
