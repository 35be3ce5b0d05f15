"""The policy challenge page under streamlit.testing: a typo's message at its line and column in the student's
language, a run beside FCFS, a submission graded on hidden seeds that never reach the page."""
import pytest
from streamlit.testing.v1 import AppTest

from app_support import runs_ended
from test_app import ROOT

HIDDEN = ("413377", "820961")


def page(lang: str, monkeypatch) -> AppTest:
    monkeypatch.setenv("SERVING_LAB_CHALLENGE_SEEDS", ",".join(HIDDEN))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["lang"] = lang
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
    return "\n".join(parts)


@pytest.mark.parametrize("lang,expected", [("zh", "第 1 行第 10 列"), ("en", "line 1, column 10")])
def test_a_typo_is_shown_at_its_line_and_column_in_the_students_language(lang, expected, monkeypatch):
    at = page(lang, monkeypatch)
    at.text_area(key="challenge.key").set_value("waited + max_tokns").run()
    press(at, "challenge.run")
    assert expected in at.error[0].value and "max_tokns" in at.error[0].value
    assert at.code[0].value.endswith("\n" + " " * 9 + "^")
    assert "challenge.runs" not in at.session_state  # nothing ran


def test_a_key_runs_beside_fcfs_and_a_submission_is_graded_without_its_seeds_reaching_the_page(monkeypatch):
    at = page("en", monkeypatch)
    at.text_area(key="challenge.key").set_value("0 if request_class == 'support' else priority + 1").run()
    at.toggle(key="challenge.preemptive").set_value(True).run()
    press(at, "challenge.run")
    runs_ended(at)
    assert not at.error
    labels = [r.label for r in at.session_state["challenge.runs"]]
    assert labels == ["key", "fcfs", "sjf"]
    shown = everything_shown(at)
    assert "Who paid for your rule" in shown and "SLO attainment of support" in shown
    press(at, "challenge.submit")
    assert not at.error
    shown = everything_shown(at)
    assert "mean over two hidden seeds" in shown
    state = repr({k: at.session_state[k] for k in at.session_state})
    for seed in HIDDEN:
        assert seed not in shown and seed not in state


@pytest.mark.parametrize("goal,targets", [
    ({"throughput_mode": "pct_of_fcfs", "throughput_min": "90", "fairness_mode": "jain", "fairness_bound": "0.8"},
     {"throughput_vs_fcfs": 0.9, "jain": 0.8}),
    ({"throughput_mode": "tok_per_step", "throughput_min": "3", "fairness_mode": "report_slowdown",
      "fairness_bound": "3"}, {"worst_class_slowdown": 3.0}),
    ({"throughput_mode": "pct_of_fcfs", "throughput_min": "lots", "fairness_mode": "jain", "fairness_bound": "7"}, {}),
    ({}, {}),
])
def test_the_students_task_4_goal_sets_the_targets_it_can(goal, targets):
    from ui.practice.challenge_grade import goal_targets

    assert goal_targets(goal) == targets


def test_the_policy_tournament_replays_the_classs_top_three_side_by_side(monkeypatch, tmp_path):
    """In the class view, the instructor's leaderboard shows every key, and the tournament runs the top three on
    the public seed, named as the leaderboard names them (an anonymous student stays anonymous)."""
    import uuid

    from classroom import PolicySubmission, get_store
    from test_class_view import PASSCODE, class_view, enter
    from ui.instructor import passcode

    monkeypatch.setattr(passcode, "SECRETS", tmp_path / "secrets.toml")
    monkeypatch.setenv(passcode.ENV, PASSCODE)
    code, db = f"c-{uuid.uuid4().hex[:8]}", get_store()
    keys = ["deadline", "num_prompt_tokens + max_tokens", "arrival_step", "-arrival_step"]
    for i, key in enumerate(keys):
        tok = db.new_student(f"Student {i}", code)
        db.submit_policy(tok, PolicySubmission(key, "", i == 0, i == 1, {}, 4 - i, 0.5, 1.0, 2.0))
    at = enter(class_view(), PASSCODE)
    at.text_input(key="class-view.class.widget").input(code).run()
    board = "\n".join(str(e.value) for e in at.table)
    assert all(key in board for key in keys)
    at.button(key="tournament.start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    runs = at.session_state["tournament.runs"]
    assert [r.label for r in runs] == ["top1", "top2", "top3"]
    assert [r.config.policy_key for r in runs] == keys[:3] and runs[0].config.policy_key_preemptive
    assert at.session_state["tournament.names"] == {"top1": "#1 · Student 0", "top2": "#2 · anonymous",
                                                    "top3": "#3 · Student 2"}
