"""Start the lab: `python -m ui.serve [--class] [streamlit options]` runs `streamlit run app.py` in this process.

Streamlit treats a `pages/` folder beside the entry script as an old-style multipage app until the
first script run calls st.navigation; a deep link (/paged-kv) opened first on a fresh server would
then run that page file on its own, without app.py's navigation and sidebar. Our pages/ folder
holds st.navigation pages, so that old mode is switched off before the server starts.

Without `--class` the lab listens on localhost only (Streamlit alone would listen on every interface).
`--class` serves a room: it listens on every interface (0.0.0.0), and only when an instructor passcode
is set, since the class view shows the class's results to whoever has it.

Every session's script runs in a thread of this one process. What the pages import is imported here,
before the first session: plotly imports pandas lazily inside a figure, and a room pressing the same
moment at once had several threads importing pandas together, where Python's import lock hands some
of them a half-initialised module (AttributeError on every page but one).
"""
from __future__ import annotations

import importlib
import socket
import sys
from pathlib import Path

from ui.instructor import passcode

APP = Path(__file__).resolve().parent.parent / "app.py"
LOCAL, ROOM = "127.0.0.1", "0.0.0.0"
NO_PASSCODE = f"""Refusing to serve a class: no instructor passcode is set.
  Set one, then start again:   SERVING_LAB_PASSCODE='choose-a-passcode' make class
  or put   instructor_passcode = "choose-a-passcode"   in .streamlit/secrets.toml
拒绝为课堂开放服务：尚未设置教师口令。
  设置后再启动：   SERVING_LAB_PASSCODE='自选口令' make class
  或在 .streamlit/secrets.toml 中写入   instructor_passcode = "自选口令"
(env {passcode.ENV})"""
MIN_PASSCODE = 8  # 20 wrong guesses a minute are checked at most (ui/instructor/attempts.py): 8 characters hold
SHORT_PASSCODE = f"""Refusing to serve a class: the instructor passcode has {{n}} characters; it needs at least \
{MIN_PASSCODE}.
  Anyone on the room's network can try passcodes against this lab: choose a longer one, then start again:
    SERVING_LAB_PASSCODE='a longer passcode' make class
拒绝为课堂开放服务：教师口令只有 {{n}} 个字符，至少需要 {MIN_PASSCODE} 个。
  同一网络中的任何人都能尝试口令：请换一个更长的口令后再启动。"""


def option(args: list[str], name: str) -> str | None:
    """The value of a streamlit option given as `--name value` or `--name=value`."""
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def lan_address() -> str:
    """This machine's address on its network, as students' machines would reach it (no packet is sent:
    connecting a UDP socket only picks the outgoing interface)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere
            return s.getsockname()[0]
        except OSError:
            return socket.gethostname()


def streamlit_args(args: list[str]) -> tuple[list[str], str]:
    """The arguments for streamlit and the start-up line to print; SystemExit with the reason when
    a class is asked for without a passcode, or on another address than every interface."""
    room = "--class" in args
    args = [a for a in args if a != "--class"]
    address = option(args, "--server.address")
    port = option(args, "--server.port") or "8501"
    if not room:
        if address is None:
            args += ["--server.address", LOCAL]
        return args, f"Serving Lab on http://{address or LOCAL}:{port} (this machine only; `make class` serves a room)"
    configured = passcode.configured()
    if configured is None:
        raise SystemExit(NO_PASSCODE)
    if len(configured) < MIN_PASSCODE:
        raise SystemExit(SHORT_PASSCODE.format(n=len(configured)))
    if address is None:
        args += ["--server.address", ROOM]
    url = f"http://{lan_address()}:{port}"
    return args, (f"Serving a class: listening on {address or ROOM}:{port} (every network interface).\n"
                  f"Students open {url}  ·  instructor: {url}/class?instructor=1 (asks for the passcode)\n"
                  f"课堂模式：监听 {address or ROOM}:{port}。学生打开 {url}；教师打开 {url}/class?instructor=1")


# imported lazily by the libraries the pages use (plotly's figures, Streamlit's tables), and our layers
# below ui/ (ui/ itself stays out: a Streamlit component declared outside a script run is never registered)
WARM_IMPORTS = ("pandas", "pyarrow", "plotly.graph_objects", "plotly.io", "plotly.subplots", "torch", "engine",
                "viz", "lessons", "classroom")


def warm_imports() -> None:
    for name in WARM_IMPORTS:
        importlib.import_module(name)


def main() -> None:
    args, banner = streamlit_args(sys.argv[1:])
    print(banner, flush=True)
    warm_imports()
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    PagesManager.uses_pages_directory = False
    sys.argv = ["streamlit", "run", str(APP), *args]
    sys.exit(cli.main())


if __name__ == "__main__":
    main()
