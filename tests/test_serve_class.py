"""Serving a room: `make class` (python -m ui.serve --class) listens beyond localhost only with an instructor
passcode, and says where at start-up; `make run` stays on localhost."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ui.instructor import passcode
from ui import serve

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def no_passcode(monkeypatch, tmp_path):
    monkeypatch.setattr(passcode, "SECRETS", tmp_path / "secrets.toml")
    monkeypatch.delenv(passcode.ENV, raising=False)


def test_a_class_is_refused_without_a_passcode(no_passcode):
    with pytest.raises(SystemExit) as refused:
        serve.streamlit_args(["--class", "--server.port", "8600"])
    assert "no instructor passcode is set" in str(refused.value.code)
    assert "SERVING_LAB_PASSCODE" in str(refused.value.code) and "尚未设置教师口令" in str(refused.value.code)


def test_with_a_passcode_a_class_listens_on_every_interface_and_says_where(no_passcode, monkeypatch):
    monkeypatch.setenv(passcode.ENV, "room 12b")
    args, banner = serve.streamlit_args(["--class", "--server.port", "8600"])
    assert "--class" not in args and serve.option(args, "--server.address") == "0.0.0.0"
    assert "listening on 0.0.0.0:8600" in banner and f"Students open http://{serve.lan_address()}:8600" in banner


@pytest.mark.parametrize("short", ["room 12", "1234", "a"])
def test_a_class_is_refused_with_a_passcode_under_8_characters(no_passcode, monkeypatch, short):
    monkeypatch.setenv(passcode.ENV, short)
    with pytest.raises(SystemExit) as refused:
        serve.streamlit_args(["--class", "--server.port", "8600"])
    message = str(refused.value.code)
    assert f"has {len(short)} characters; it needs at least 8" in message and "至少需要 8 个" in message


def test_without_the_class_flag_the_lab_stays_on_localhost(no_passcode, monkeypatch):
    monkeypatch.setenv(passcode.ENV, "room 12b")  # a passcode alone does not open the lab to the network
    args, banner = serve.streamlit_args(["--server.port", "8601"])
    assert serve.option(args, "--server.address") == "127.0.0.1" and "http://127.0.0.1:8601" in banner


def test_make_class_and_make_run_start_the_lab_this_way():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-m ui.serve --class" in makefile.split("\nclass:", 1)[1].split("\n\n", 1)[0]
    assert "--server.address" not in makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]  # serve's localhost default


@pytest.mark.server  # runs `python -m ui.serve`; the tests above only parse its arguments
def test_the_serve_command_refuses_a_class_without_a_passcode_and_starts_nothing():
    if passcode.SECRETS.is_file():
        pytest.skip(f"{passcode.SECRETS} exists here: the command would read its passcode")
    env = {k: v for k, v in os.environ.items() if k != passcode.ENV}
    done = subprocess.run([sys.executable, "-m", "ui.serve", "--class", "--server.port", "8602"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "Refusing to serve a class" in done.stderr and "拒绝为课堂开放服务" in done.stderr
    assert "You can now view" not in done.stdout  # streamlit never started
