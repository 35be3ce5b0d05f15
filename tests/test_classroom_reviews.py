"""Explanations judged by people, stored: the student's self-assessment and the instructor's mark, on SQLite and
a real PostgreSQL; an instructor marks only their own class; a version-1 database upgrades in place."""
import pytest
from sqlalchemy import MetaData, Table, create_engine, inspect, select, text

from classroom import StorageError, Store
from classroom.schema import marks, metadata, policy_submissions, self_assessments


@pytest.fixture
def store(store_url):
    s = Store(store_url)
    yield s
    s.close()


def code(err) -> str:
    return err.value.code


def test_a_self_assessment_and_a_mark_round_trip_and_a_mark_keeps_the_text_it_read(store):
    tok = store.new_student("Ada", "cs-101")
    store.save_draft(tok, "paged-attention-purpose", "answer", "blocks on demand")
    store.self_assess(tok, "paged-attention-purpose", "answer", "partly")
    store.self_assess(tok, "paged-attention-purpose", "answer", "met")
    assert store.self_assessments(tok) == {"paged-attention-purpose": {"answer": "met"}}
    store.mark("cs-101", tok, "paged-attention-purpose", "answer", "needs_work", "  say what stays the same ")
    store.mark("cs-101", tok, "paged-attention-purpose", "answer", "ok")
    mark = store.marks(tok)["paged-attention-purpose"]["answer"]
    assert (mark.mark, mark.comment, mark.text) == ("ok", "", "blocks on demand")
    store.save_draft(tok, "paged-attention-purpose", "answer", "edited after the mark")
    assert store.marks(tok)["paged-attention-purpose"]["answer"].text == "blocks on demand"
    listed = store.class_explanations("cs-101")
    assert [(s["n"], s["name"], s["texts"]["paged-attention-purpose"]["answer"]) for s in listed] == [
        (1, "Ada", "edited after the mark")]
    assert listed[0]["self"] == {"paged-attention-purpose": {"answer": "met"}}


def test_an_instructor_marks_only_their_own_class_and_only_written_text(store):
    ours, theirs, nobodys = (store.new_student("", c) for c in ("class-a", "class-b", ""))
    for tok in (ours, theirs, nobodys):
        store.save_draft(tok, "t", "why", "text")
    for tok in (theirs, nobodys):
        with pytest.raises(StorageError) as err:
            store.mark("class-a", tok, "t", "why", "ok")
        assert code(err) == "unknown_student"
    with pytest.raises(StorageError) as err:
        store.mark("class-a", ours, "t", "other-field", "ok")
    assert code(err) == "nothing_to_mark"
    assert store.marks(theirs) == {} and store.marks(ours) == {}
    assert [s["n"] for s in store.class_explanations("class-a")] == [1]


def test_bad_values_are_refused_with_a_code_and_nothing_is_stored(store):
    tok = store.new_student("", "c")
    store.save_draft(tok, "t", "why", "text")
    for call, field in ((lambda: store.self_assess(tok, "t", "why", "great"), "self_assessment"),
                        (lambda: store.mark("c", tok, "t", "why", "A+"), "mark"),
                        (lambda: store.self_assess(tok, "t", "why; DROP", "met"), "field_id")):
        with pytest.raises(StorageError) as err:
            call()
        assert (code(err), err.value.params.get("field")) == ("bad_value", field)
    with pytest.raises(StorageError) as err:
        store.mark("c", tok, "t", "why", "ok", "x" * 501)
    assert code(err) == "too_long"
    assert store.self_assessments(tok) == {} and store.marks(tok) == {}


def test_start_over_clears_the_self_assessments_and_marks(store):
    tok = store.new_student("", "c")
    store.save_draft(tok, "t", "why", "text")
    store.self_assess(tok, "t", "why", "met")
    store.mark("c", tok, "t", "why", "ok")
    store.start_over(tok)
    assert store.self_assessments(tok) == {} and store.marks(tok) == {}


def test_a_version_1_database_is_upgraded_in_place_keeping_every_row(store_url):
    """A database as version 1 left it: every table but those added since, version 1, a student with progress."""
    engine = create_engine(store_url)
    v1 = MetaData()
    for table in metadata.sorted_tables:
        if table.name not in (self_assessments.name, marks.name, policy_submissions.name):
            table.to_metadata(v1)
    v1.create_all(engine)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO schema_meta (id, version) VALUES (1, 1)"))
        conn.execute(text("INSERT INTO students (token, name, class_code, created) "
                          "VALUES ('abcdefghijklmnopqrstuv', 'Old', 'c', 1.0)"))
        conn.execute(text("INSERT INTO drafts (token, task_id, field_id, text, at) "
                          "VALUES ('abcdefghijklmnopqrstuv', 't', 'why', 'kept', 2.0)"))
    assert {self_assessments.name, marks.name}.isdisjoint(inspect(engine).get_table_names())
    s = Store(store_url)
    tok = "abcdefghijklmnopqrstuv"
    assert s.student(tok).name == "Old" and s.drafts(tok) == {"t": {"why": "kept"}}
    s.self_assess(tok, "t", "why", "met")
    s.mark("c", tok, "t", "why", "ok")
    s.close()
    with engine.connect() as conn:
        meta = Table("schema_meta", MetaData(), autoload_with=conn)
        assert conn.execute(select(meta.c.version)).scalar() == Store.schema_version == 6
    engine.dispose()


def test_the_class_list_gives_each_student_their_own_texts_assessments_and_marks_and_no_one_elses(store):
    a, b, c = (store.new_student(n, "room") for n in ("A", "B", "C"))
    elsewhere = store.new_student("X", "other")
    for tok, words in ((a, "a wrote"), (b, "b wrote"), (elsewhere, "x wrote")):
        store.save_draft(tok, "t", "why", words)
        store.self_assess(tok, "t", "why", "partly")
    store.save_draft(a, "t2", "goal", "a's goal")
    store.self_assess(a, "t2", "goal", "met")
    store.mark("room", b, "t", "why", "needs_work", "say who waits")
    store.mark("other", elsewhere, "t", "why", "ok")
    listed = store.class_explanations("room")
    assert [(s["n"], s["name"]) for s in listed] == [(1, "A"), (2, "B"), (3, "C")]
    assert [s["texts"] for s in listed] == [{"t": {"why": "a wrote"}, "t2": {"goal": "a's goal"}},
                                            {"t": {"why": "b wrote"}}, {}]
    assert [s["self"] for s in listed] == [{"t": {"why": "partly"}, "t2": {"goal": "met"}},
                                           {"t": {"why": "partly"}}, {}]
    assert [{k: {f: (m.mark, m.comment, m.text) for f, m in v.items()} for k, v in s["marks"].items()}
            for s in listed] == [{}, {"t": {"why": ("needs_work", "say who waits", "b wrote")}}, {}]
    assert [s["token"] for s in listed] == [a, b, c] and elsewhere not in repr(listed)
    assert store.class_explanations("empty-room") == []
