"""The Real server page under AppTest: a small load against a server the test starts, in both
languages; an unreachable URL; the page starting and stopping the lab's own server."""
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from streamlit.testing.v1 import AppTest

from engine.server.thread import free_port
from ui.shell.i18n import strings

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parent.parent
STRINGS = strings()
PAGE = "real-server"


def start_server(*extra) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "engine", "serve", "--model", "tiny", "--port", str(port),
                             "--max-num-seqs", "8", *extra], cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    pytest.fail("python -m engine serve did not come up")


@pytest.fixture(scope="module")
def server():
    proc, url = start_server()
    yield url
    proc.terminate()
    proc.wait(timeout=20)


def page(lang: str, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["lang"] = lang
    at.run()
    for key, value in state.items():
        at.session_state[f"{PAGE}.{key}"] = value
    at.switch_page("pages/real_server.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == f"{PAGE}.{key}")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_small_load_against_a_running_server_shows_both_runs(server, lang):
    at = page(lang, url=server, prompts=4, rate=0.0, workload="chat-and-reports")
    assert "tiny" in at.success[0].value and "vLLM" in at.success[0].value  # says what it talks to
    assert STRINGS["rs.cannot_see"][lang] in [c.value for c in at.caption]
    button(at, "run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    completed = [m.value for m in at.metric if m.label == STRINGS["rs.completed"][lang]]
    assert completed == ["4 / 4", "4 / 4"]  # the server over HTTP, and the in-process engine
    result = at.session_state[f"{PAGE}.result"]
    assert result["server"]["engine_kind"] == "vllm" and result["server"]["timeline"]
    assert len(at.get("plotly_chart")) == 4


def test_the_rate_sweep_draws_latency_against_load(server):
    at = page("en", url=server, prompts=4, inprocess=False, workload="uniform")
    button(at, "sweep").click().run()
    assert not at.exception, [e.value for e in at.exception]
    rows = at.session_state[f"{PAGE}.sweep_rows"]
    assert [r["rate"] for r in rows] == [2.0, 4.0, 8.0, 16.0] and all(r["mean_ttft_ms"] > 0 for r in rows)
    assert STRINGS["rs.curve_note"]["en"] in [c.value for c in at.caption]


def test_an_unreachable_url_gets_a_message_not_a_traceback():
    at = page("en", url="http://127.0.0.1:9")
    assert "Cannot reach http://127.0.0.1:9" in at.warning[0].value
    for bad in ("localhost:8000", "http://"):  # no scheme; a scheme with no host, which loadgen refuses too
        at = page("zh", url=bad)
        assert STRINGS["rs.bad_url"]["zh"] in at.warning[0].value, bad


def test_the_page_starts_and_stops_the_labs_own_server():
    at = page("en", url="http://127.0.0.1:9")
    button(at, "start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    url = at.session_state[f"{PAGE}.url"]
    assert url != "http://127.0.0.1:9" and httpx.get(url + "/health").status_code == 200
    assert "tiny" in at.success[0].value
    button(at, "stop").click().run()
    with pytest.raises(httpx.HTTPError):
        httpx.get(url + "/health", timeout=2)


def test_the_lecture_moment_brings_its_own_server_and_runs_the_load():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["lang"] = "en"
    at.run()
    at.session_state[f"{PAGE}.url"] = "http://127.0.0.1:9"
    at.session_state[f"{PAGE}.prompts"] = 4
    at.session_state["pending_moment"] = "real-server-knee"
    at.switch_page("pages/real_server.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("The knee on a real server" in i.value for i in at.info)  # the moment's narration
    assert at.session_state[f"{PAGE}.result"]["server"]["completed"] == 4
    button(at, "stop").click().run()
    assert not at.exception


def test_in_a_class_a_student_cannot_start_stop_load_or_repoint_the_server(monkeypatch, tmp_path):
    """With a passcode set (a class), a session without it sees every control disabled, the address read-only
    and not its own: the lab's machine fetches no URL a student typed. The instructor's session can start."""
    from classroom import get_store
    from ui.instructor import passcode, sessions

    monkeypatch.setattr(passcode, "SECRETS", tmp_path / "secrets.toml")
    monkeypatch.setenv(passcode.ENV, "room key")
    student = page("en", url="http://127.0.0.1:9/anything-a-student-types")
    assert all(button(student, k).disabled for k in ("start", "stop", "run", "sweep"))
    box = next(w for w in student.text_input if w.key == f"{PAGE}.url")
    assert box.disabled and "anything-a-student-types" not in box.value
    assert STRINGS["rs.instructor_only"]["en"] in [i.value for i in student.info]
    assert not any("anything-a-student-types" in w.value for w in student.warning)

    instructor = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    instructor.session_state["lang"] = "en"
    instructor.session_state["instructor.unlocked"] = sessions.issue(get_store())  # as the passcode form does
    instructor.run()
    instructor.switch_page("pages/real_server.py").run()
    assert not button(instructor, "start").disabled and not button(instructor, "run").disabled
