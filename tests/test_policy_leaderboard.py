"""The class leaderboard of the policy challenge, on SQLite and on a real PostgreSQL: each student's best
submission in order, anonymous when they chose it, and no student reads another's policy text."""
import pytest

from classroom.errors import StorageError
from classroom.records import PolicySubmission
from classroom.store import Store


@pytest.fixture
def store(store_url):
    s = Store(store_url)
    yield s
    s.close()


def submit(store, token, key, met, slo, **more):
    figures = {"slo_by_class": {"chat": slo}, "met": {"slo_attainment": met > 0}}
    fields = dict(victim_key="", preemptive=False, anonymous=False, figures=figures, targets_met=met,
                  slo_attainment=slo, throughput_vs_fcfs=1.0, worst_class_slowdown=2.0)
    fields |= {{"tput": "throughput_vs_fcfs"}.get(k, k): v for k, v in more.items()}
    return store.submit_policy(token, PolicySubmission(key, **fields))


def test_the_leaderboard_keeps_each_students_best_in_order(store):
    ana, bo, cy = (store.new_student(n, "c1") for n in ("Ana", "Bo", "Cy"))
    outsider = store.new_student("Di", "c2")
    submit(store, ana, "arrival_step", met=1, slo=0.4)
    submit(store, ana, "deadline", met=3, slo=0.7)  # Ana's best
    submit(store, ana, "waited", met=2, slo=0.9)  # fewer targets met: not her best, though a higher SLO share
    submit(store, bo, "num_prompt_tokens + max_tokens", met=3, slo=0.8)
    submit(store, cy, "priority", met=3, slo=0.8, tput=0.9)  # ties Bo on targets and SLO; lower throughput
    submit(store, outsider, "0", met=4, slo=1.0)
    board = store.leaderboard("c1", instructor=True)
    assert [(r.rank, r.name, r.policy_key) for r in board] == [
        (1, "Bo", "num_prompt_tokens + max_tokens"), (2, "Cy", "priority"), (3, "Ana", "deadline")]
    assert board[0].figures["slo_by_class"] == {"chat": 0.8}


def test_a_student_never_reads_another_students_policy_and_an_anonymous_one_has_no_name(store):
    ana, bo = store.new_student("Ana", "c1"), store.new_student("Bo", "c1")
    submit(store, ana, "deadline - 0.5 * waited", met=3, slo=0.9, anonymous=True)
    submit(store, bo, "arrival_step", met=1, slo=0.3)
    seen_by_bo = store.leaderboard("c1", viewer_token=bo)
    assert [(r.name, r.policy_key, r.mine) for r in seen_by_bo] == [(None, None, False), ("Bo", "arrival_step", True)]
    assert "deadline - 0.5 * waited" not in repr(seen_by_bo) and "Ana" not in repr(seen_by_bo)
    assert ana not in repr(seen_by_bo) and bo not in repr(seen_by_bo)  # no tokens either
    instructor = store.leaderboard("c1", instructor=True)
    assert instructor[0].policy_key == "deadline - 0.5 * waited" and instructor[0].name is None
    assert store.my_submissions(ana)[0]["policy_key"] == "deadline - 0.5 * waited"
    assert store.my_submissions(bo)[0]["policy_key"] == "arrival_step" and len(store.my_submissions(bo)) == 1


@pytest.mark.parametrize("change,field", [
    (dict(policy_key="x" * 501), "policy_key"), (dict(policy_key="a\x00b"), "policy_key"),
    (dict(figures={"x": float("nan")}), "figures"), (dict(slo_attainment=float("inf")), "slo_attainment"),
    (dict(targets_met=True), "targets_met"), (dict(anonymous="yes"), "anonymous"),
])
def test_a_malformed_submission_is_refused_and_nothing_is_stored(store, change, field):
    tok = store.new_student("Ana", "c1")
    args = dict(policy_key="waited", victim_key="", preemptive=False, anonymous=False, figures={}, targets_met=1,
                slo_attainment=0.5, throughput_vs_fcfs=1.0, worst_class_slowdown=2.0) | change
    with pytest.raises(StorageError) as refused:
        store.submit_policy(tok, PolicySubmission(**args))
    assert refused.value.params.get("field") == field
    assert store.my_submissions(tok) == [] and store.leaderboard("c1") == []


def test_start_over_keeps_the_students_submissions(store):
    tok = store.new_student("Ana", "c1")
    submit(store, tok, "waited", met=1, slo=0.5)
    store.start_over(tok)  # a new attempt of the worksheets and the quiz: graded submissions are history too
    assert len(store.my_submissions(tok)) == 1 and len(store.leaderboard("c1", instructor=True)) == 1


def test_a_version_2_database_gains_the_submissions_table_and_keeps_its_rows(store_url):
    from sqlalchemy import MetaData, create_engine, inspect, select, text

    from classroom.schema import metadata, policy_submissions, schema_meta

    engine = create_engine(store_url)
    v2 = MetaData()
    for table in metadata.sorted_tables:
        if table.name != policy_submissions.name:
            table.to_metadata(v2)
    v2.create_all(engine)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO schema_meta (id, version) VALUES (1, 2)"))
        conn.execute(text("INSERT INTO students (token, name, class_code, created) "
                          "VALUES ('abcdefghijklmnopqrstuv', 'Old', 'c1', 1.0)"))
    assert policy_submissions.name not in inspect(engine).get_table_names()
    s = Store(store_url)
    submit(s, "abcdefghijklmnopqrstuv", "waited", met=2, slo=0.5)
    assert s.student("abcdefghijklmnopqrstuv").name == "Old"
    assert [r.name for r in s.leaderboard("c1")] == ["Old"]
    s.close()
    with engine.connect() as conn:
        assert conn.execute(select(schema_meta.c.version)).scalar() == Store.schema_version == 5
    engine.dispose()
