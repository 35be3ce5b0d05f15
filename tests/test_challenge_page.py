"""The policy challenge page under streamlit.testing: a typo's message at its line and column in the student's
language, a run beside FCFS with every axis on the public seed, a submission graded on the class's hidden seeds of
which only the score reaches the page or the session, a second submission paced, targets that are the class's
(never the student's Task 4 goal), set by the instructor in the class view."""
import json

import pytest
from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from app_support import runs_ended
from test_app import ROOT

BALANCED = {"slo_attainment": 0.8, "throughput_vs_fcfs": 0.96, "worst_class_slowdown": 2.5, "jain": 0.75,
            "preemptions": 2.0}


def page(lang: str, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["lang"] = lang
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/challenge.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def press(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def everything_shown(at: AppTest) -> str:
    parts = [str(getattr(e, "value", "")) for e in at.main] + [str(e.value) for e in at.dataframe]
    parts += [str(e.value) for e in at.table]
    return "\n".join(parts)


def session(at: AppTest) -> str:
    return repr({k: at.session_state[k] for k in at.session_state})


@pytest.mark.parametrize("lang,expected", [("zh", "第 1 行第 10 列"), ("en", "line 1, column 10")])
def test_a_typo_is_shown_at_its_line_and_column_in_the_students_language(lang, expected):
    at = page(lang)
    at.text_area(key="challenge.key").set_value("waited + max_tokns").run()
    press(at, "challenge.run")
    assert expected in at.error[0].value and "max_tokns" in at.error[0].value
    assert at.code[0].value.endswith("\n" + " " * 9 + "^")
    assert "challenge.runs" not in at.session_state  # nothing ran


@pytest.mark.parametrize("lang,limit", [("zh", "上限"), ("en", "limit")])
def test_a_key_is_checked_as_it_is_entered_and_its_message_goes_when_it_changes(lang, limit):
    """No Run needed to hear of a typo, and no stale message under a corrected key; a key past the length limit
    (pasted, say) is refused with the limit in the student's language and stays in its box to be cut down."""
    at = page(lang)
    at.text_area(key="challenge.key").set_value("waited + max_tokns").run()
    assert len(at.error) == 1 and "max_tokns" in at.error[0].value
    at.text_area(key="challenge.key").set_value("waited + max_tokens").run()
    assert not at.error and "challenge.runs" not in at.session_state  # gone at once; nothing ran
    long_key = "waited + " * 80 + "1"
    at.text_area(key="challenge.key").set_value(long_key).run()
    assert len(at.error) == 1 and str(len(long_key)) in at.error[0].value and "500" in at.error[0].value
    assert limit in at.error[0].value
    assert at.text_area(key="challenge.key").value == long_key  # nothing lost
    press(at, "challenge.run")
    assert len(at.error) == 1 and "challenge.runs" not in at.session_state


def test_a_submission_shows_one_score_and_no_hidden_seed_or_figure_reaches_the_page_or_the_session():
    """The public seed's grade shows every axis; the submission's grade on the hidden seeds is a score alone: its
    seeds, its per-axis figures and its payers stay on the server and in the store. A Task 4 goal of the student
    (the lowest throughput there is) sets no target. A second submission at once is refused by the pace."""
    from classroom import get_store
    from classroom.schema import policy_submissions
    from engine.lab.challenge import Grade, hidden_seeds
    from engine.lab.challenge_score import DEFAULT_TARGETS
    from ui.practice.challenge import SECRET

    goal = {"chat-slo-goal": {"throughput_mode": "pct_of_fcfs", "throughput_min": "0.001", "fairness_mode": "jain",
                              "fairness_bound": "0.001"}}
    at = page("en", answers=goal)
    at.text_area(key="challenge.key").set_value("0 if request_class == 'support' else priority + 1").run()
    at.toggle(key="challenge.preemptive").set_value(True).run()
    press(at, "challenge.run")
    runs_ended(at)
    assert not at.error
    assert [r.label for r in at.session_state["challenge.runs"]] == ["key", "fcfs", "sjf"]
    assert at.session_state["challenge.trial"].targets == DEFAULT_TARGETS  # not the Task 4 goal's
    shown = everything_shown(at)
    assert "Who paid for your rule" in shown and "SLO attainment of support" in shown and "Preemptions" in shown
    tables_before = len(at.dataframe)
    press(at, "challenge.submit")
    assert not at.error and not at.warning
    score = at.session_state["challenge.submitted"]
    assert isinstance(score, float) and 0 <= score <= 100
    shown, state = everything_shown(at), session(at)
    assert f"Score: {score:.1f} / 100" in shown and len(at.dataframe) == tables_before
    db = get_store()
    tok = at.session_state["progress.token"]
    with db._read() as conn:
        stored = conn.execute(select(policy_submissions.c.figures, policy_submissions.c.token)
                              .order_by(policy_submissions.c.id.desc()).limit(1)).first()
    hidden = json.loads(stored.figures)
    assert hidden["num_runs"] == 2 and stored.token == tok
    for seed in hidden_seeds(db.server_secret(SECRET), ""):
        assert str(seed) not in shown and str(seed) not in state
    for axis in BALANCED:  # a short figure ("9.0" preemptions) can stand on the page by chance: long ones only
        if len(repr(hidden[axis])) >= 6:
            assert repr(hidden[axis]) not in shown and repr(hidden[axis]) not in state, axis
    assert not any(p["request_id"] in shown for p in hidden["payers"] if "·" in p["request_id"])
    assert all(v.num_runs == 1 for k in at.session_state if isinstance(v := at.session_state[k], Grade))

    press(at, "challenge.submit")  # at once: the pace refuses it, and nothing is graded
    assert "challenge.submitted" not in at.session_state
    assert any("Not graded this time" in w.value for w in at.warning)


def test_the_policy_tournament_replays_the_classs_top_three_and_the_instructor_sets_the_targets(monkeypatch,
                                                                                                tmp_path):
    """In the class view, the instructor's leaderboard shows every key and a score, the tournament runs the top
    three on the public seed, named as the leaderboard names them (an anonymous student stays anonymous), and the
    targets form stores the class's targets (the defaults until then)."""
    import uuid

    from classroom import PolicySubmission, get_store
    from engine.lab.challenge_score import DEFAULT_TARGETS
    from test_class_view import PASSCODE, class_view, enter
    from ui.instructor import passcode

    monkeypatch.setattr(passcode, "SECRETS", tmp_path / "secrets.toml")
    monkeypatch.setenv(passcode.ENV, PASSCODE)
    code, db = f"c-{uuid.uuid4().hex[:8]}", get_store()
    keys = ["deadline", "num_prompt_tokens + max_tokens", "arrival_step", "-arrival_step"]
    for i, key in enumerate(keys):
        tok = db.new_student(f"Student {i}", code)
        figures = {**BALANCED, "slo_attainment": 0.7 - 0.05 * i}  # scores in the keys' order
        db.submit_policy(tok, PolicySubmission(key, "", i == 0, i == 1, figures))
    at = enter(class_view(), PASSCODE)
    at.text_input(key="class-view.class.widget").input(code).run()
    board = "\n".join(str(e.value) for e in at.table)
    assert all(key in board for key in keys) and "100.0" in board and "jain" not in board.lower()
    at.number_input(key=f"challenge-targets.{code}.jain").set_value(0.8)
    at.button(key=f"FormSubmitter:challenge-targets.{code}-Save the targets").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert db.challenge_targets(code) == {**DEFAULT_TARGETS, "jain": 0.8}
    at.button(key="tournament.start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    runs = at.session_state["tournament.runs"]
    assert [r.label for r in runs] == ["top1", "top2", "top3"]
    assert [r.config.policy_key for r in runs] == keys[:3] and runs[0].config.policy_key_preemptive
    assert at.session_state["tournament.names"] == {"top1": "#1 · Student 0", "top2": "#2 · anonymous",
                                                    "top3": "#3 · Student 2"}
