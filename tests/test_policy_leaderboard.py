"""The class leaderboard of the policy challenge, on SQLite and on a real PostgreSQL: each student's best score
against the class's targets (the instructor's, never a student's), anonymous when they chose it, no student reads
another's policy text or any hidden seed's per-axis figure, and the pace of graded submissions is counted in the
store, so parallel sessions share one count."""
import threading

import pytest

from classroom import challenge_pace
from classroom.errors import StorageError
from classroom.records import PolicySubmission
from classroom.store import Store
from engine.lab.challenge_score import DEFAULT_TARGETS, score

# figures meeting every default target, and a rule that buys SLOs with memory and throughput
BALANCED = {"slo_attainment": 0.8, "throughput_vs_fcfs": 0.96, "worst_class_slowdown": 2.5, "jain": 0.75,
            "preemptions": 2.0}
GREEDY = {"slo_attainment": 0.95, "throughput_vs_fcfs": 0.86, "worst_class_slowdown": 1.5, "jain": 0.93,
          "preemptions": 15.0}


@pytest.fixture
def store(store_url):
    s = Store(store_url)
    yield s
    s.close()


def submit(store, token, key, anonymous=False, **figures):
    return store.submit_policy(token, PolicySubmission(key, "", False, anonymous, {**BALANCED, **figures}))


def test_the_leaderboard_keeps_each_students_best_score_in_order(store):
    ana, bo, cy = (store.new_student(n, "c1") for n in ("Ana", "Bo", "Cy"))
    outsider = store.new_student("Di", "c2")
    submit(store, ana, "arrival_step", slo_attainment=0.45, worst_class_slowdown=8.0)
    submit(store, ana, "deadline", slo_attainment=0.6)  # Ana's best
    submit(store, ana, "waited", **GREEDY)  # the higher SLO share, bought with memory and throughput: scores less
    submit(store, bo, "num_prompt_tokens + max_tokens")  # every target met
    submit(store, cy, "priority")  # the same score as Bo's, later: below him
    submit(store, outsider, "0")
    board = store.leaderboard("c1", instructor=True)
    assert [(r.rank, r.name, r.policy_key) for r in board] == [
        (1, "Bo", "num_prompt_tokens + max_tokens"), (2, "Cy", "priority"), (3, "Ana", "deadline")]
    assert board[0].score == 100.0 and board[2].score == pytest.approx(score({**BALANCED, "slo_attainment": 0.6},
                                                                               DEFAULT_TARGETS))
    assert score(GREEDY, DEFAULT_TARGETS) < board[2].score


def test_a_student_set_target_cannot_move_a_rank_and_the_instructors_can(store):
    """A grade's own `targets` (say, a Task 4 goal of 0.001 written into it) and the student's worksheet draft are
    never read: the class's targets are the store's. The instructor changing them re-scores every submission."""
    from classroom.schema import SCHEMA_VERSION

    ana, bo = store.new_student("Ana", "c1"), store.new_student("Bo", "c1")
    submit(store, ana, "deadline", **GREEDY)
    lowered = {axis: 0.001 if axis not in ("worst_class_slowdown", "preemptions") else 1000 for axis in BALANCED}
    store.save_draft(bo, "chat-slo-goal", "throughput_min", "0.001")
    store.submit_policy(bo, PolicySubmission("arrival_step", "", False, False,
                                             {**BALANCED, "slo_attainment": 0.5, "targets": lowered,
                                              "met": {a: True for a in BALANCED}, "score": 100.0}))
    before = [(r.name, r.score) for r in store.leaderboard("c1", instructor=True)]
    assert [name for name, _ in before] == ["Bo", "Ana"], before  # by the class's (default) targets
    assert before[0][1] == pytest.approx(score({**BALANCED, "slo_attainment": 0.5}, DEFAULT_TARGETS))
    assert before[0][1] < 100
    # the instructor asks for SLOs above all: Ana's rule now leads
    store.set_challenge_targets("c1", {**DEFAULT_TARGETS, "slo_attainment": 0.9, "throughput_vs_fcfs": 0.85,
                                       "preemptions": 16.0})
    assert [r.name for r in store.leaderboard("c1", instructor=True)] == ["Ana", "Bo"]
    assert store.challenge_targets("c2") == DEFAULT_TARGETS and SCHEMA_VERSION == Store.schema_version


@pytest.mark.parametrize("targets,field", [
    ({**DEFAULT_TARGETS, "slo_attainment": 1.5}, "slo_attainment"), ({**DEFAULT_TARGETS, "jain": float("nan")}, "jain"),
    ({**DEFAULT_TARGETS, "preemptions": "4"}, "preemptions"), ({"slo_attainment": 0.5}, "targets"),
    ({**DEFAULT_TARGETS, "extra": 1.0}, "targets"),
])
def test_a_target_out_of_range_is_refused_and_nothing_changes(store, targets, field):
    with pytest.raises(StorageError) as refused:
        store.set_challenge_targets("c1", targets)
    assert refused.value.params.get("field") == field
    assert store.challenge_targets("c1") == DEFAULT_TARGETS


def test_a_student_never_reads_another_students_policy_and_an_anonymous_one_has_no_name(store):
    ana, bo = store.new_student("Ana", "c1"), store.new_student("Bo", "c1")
    submit(store, ana, "deadline - 0.5 * waited", anonymous=True)
    submit(store, bo, "arrival_step", slo_attainment=0.5)
    seen_by_bo = store.leaderboard("c1", viewer_token=bo)
    assert [(r.name, r.policy_key, r.mine) for r in seen_by_bo] == [(None, None, False), ("Bo", "arrival_step", True)]
    assert "deadline - 0.5 * waited" not in repr(seen_by_bo) and "Ana" not in repr(seen_by_bo)
    assert ana not in repr(seen_by_bo) and bo not in repr(seen_by_bo)  # no tokens either
    assert "0.96" not in repr(seen_by_bo) and "jain" not in repr(seen_by_bo)  # no per-axis figure
    instructor = store.leaderboard("c1", instructor=True)
    assert instructor[0].policy_key == "deadline - 0.5 * waited" and instructor[0].name is None
    assert store.my_submissions(ana)[0]["policy_key"] == "deadline - 0.5 * waited"
    assert store.my_submissions(bo)[0]["policy_key"] == "arrival_step" and len(store.my_submissions(bo)) == 1


@pytest.mark.parametrize("change,field", [
    (dict(policy_key="x" * 501), "policy_key"), (dict(policy_key="a\x00b"), "policy_key"),
    (dict(figures={**BALANCED, "x": float("nan")}), "figures"),
    (dict(figures={**BALANCED, "slo_attainment": float("inf")}), "slo_attainment"),
    (dict(figures={**BALANCED, "preemptions": None}), "preemptions"), (dict(anonymous="yes"), "anonymous"),
])
def test_a_malformed_submission_is_refused_and_nothing_is_stored(store, change, field):
    tok = store.new_student("Ana", "c1")
    args = dict(policy_key="waited", victim_key="", preemptive=False, anonymous=False, figures=BALANCED) | change
    with pytest.raises(StorageError) as refused:
        store.submit_policy(tok, PolicySubmission(**args))
    assert refused.value.params.get("field") == field
    assert store.my_submissions(tok) == [] and store.leaderboard("c1") == []


def test_the_pace_is_one_graded_submission_per_gap_and_start_over_does_not_reset_it(store):
    tok, other = store.new_student("Ana", "c1"), store.new_student("Bo", "c1")
    t0 = 1_000_000.0
    assert store.claim_submission(tok, now=t0) == 0.0
    assert store.claim_submission(tok, now=t0 + 60) == pytest.approx(challenge_pace.SUBMIT_GAP_S - 60)
    assert store.claim_submission(other, now=t0 + 60) == 0.0  # another student's pace is their own
    store.start_over(tok)
    assert store.claim_submission(tok, now=t0 + 61) > 0
    assert store.claim_submission(tok, now=t0 + challenge_pace.SUBMIT_GAP_S) == 0.0


def test_a_class_shares_its_hourly_count_so_new_tokens_add_nothing(store, monkeypatch):
    monkeypatch.setattr(challenge_pace, "CLASS_PER_HOUR", 3)
    t0 = 2_000_000.0
    puppets = [store.new_student(f"P{i}", "c1") for i in range(4)]
    for i, tok in enumerate(puppets[:3]):
        assert store.claim_submission(tok, now=t0 + i) == 0.0
    assert store.claim_submission(puppets[3], now=t0 + 10) == pytest.approx(challenge_pace.HOUR_S - 10)
    assert store.claim_submission(store.new_student("Q", "c2"), now=t0 + 10) == 0.0  # another class
    assert store.claim_submission(puppets[3], now=t0 + challenge_pace.HOUR_S + 1) == 0.0


def test_parallel_sessions_of_one_student_get_one_graded_submission(store):
    tok = store.new_student("Ana", "c1")
    t0, results, start = 3_000_000.0, [], threading.Barrier(6)

    def claim():
        start.wait()
        results.append(store.claim_submission(tok, now=t0))

    threads = [threading.Thread(target=claim) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(results)[0] == 0.0 and all(r == challenge_pace.SUBMIT_GAP_S for r in sorted(results)[1:])


def test_start_over_keeps_the_students_submissions(store):
    tok = store.new_student("Ana", "c1")
    submit(store, tok, "waited")
    store.start_over(tok)  # a new attempt of the worksheets and the quiz: graded submissions are history too
    assert len(store.my_submissions(tok)) == 1 and len(store.leaderboard("c1", instructor=True)) == 1


def test_a_version_4_database_gains_the_challenge_tables_and_keeps_its_rows(store_url):
    from sqlalchemy import MetaData, create_engine, inspect, select, text

    from classroom.schema import challenge_claims, challenge_targets, metadata, schema_meta

    engine = create_engine(store_url)
    v4 = MetaData()
    for table in metadata.sorted_tables:
        if table.name not in (challenge_claims.name, challenge_targets.name):
            table.to_metadata(v4)
    v4.create_all(engine)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO schema_meta (id, version) VALUES (1, 4)"))
        conn.execute(text("INSERT INTO students (token, name, class_code, created) "
                          "VALUES ('abcdefghijklmnopqrstuv', 'Old', 'c1', 1.0)"))
    assert challenge_targets.name not in inspect(engine).get_table_names()
    s = Store(store_url)
    submit(s, "abcdefghijklmnopqrstuv", "waited")
    s.set_challenge_targets("c1", {**DEFAULT_TARGETS, "jain": 0.5})
    assert s.claim_submission("abcdefghijklmnopqrstuv") == 0.0
    assert s.student("abcdefghijklmnopqrstuv").name == "Old"
    assert [(r.name, r.score) for r in s.leaderboard("c1")] == [("Old", 100.0)]
    s.close()
    with engine.connect() as conn:
        assert conn.execute(select(schema_meta.c.version)).scalar() == Store.schema_version == 6
    engine.dispose()
