"""A real PostgreSQL server for the storage tests: Debian's `postgresql` binaries, a cluster in a temporary folder
on a free 127.0.0.1 port, started once per test session and stopped at its end. Root may not run a PostgreSQL
server, so as root the cluster belongs to the `postgres` user the package creates (or `nobody`)."""
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid

import pytest

from engine.server.thread import free_port


def _binaries() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


def _as_owner(user: str | None) -> list[str]:
    return ["runuser", "-u", user, "--"] if user else []


@pytest.fixture(scope="session")
def postgres_server():
    """The server's base URL (no database name). Skips only when the binaries are not installed."""
    bindir = _binaries()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb): "
                    "`make test` installs it, or `apt-get install -y postgresql`")
    user = None
    if os.geteuid() == 0:
        user = next((u for u in ("postgres", "nobody") if _has_user(u)), None)
        if user is None:
            pytest.skip("running as root, and neither a `postgres` nor a `nobody` user exists to own the cluster")
    root = tempfile.mkdtemp(prefix="serving-lab-pg-")
    data, log = os.path.join(root, "data"), os.path.join(root, "server.log")
    if user:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    port = free_port()
    run = _as_owner(user)
    try:
        subprocess.run([*run, f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                        "--no-sync", "--no-instructions"], check=True, capture_output=True, timeout=120)
        subprocess.run([*run, f"{bindir}/pg_ctl", "-D", data, "-l", log, "-w", "-t", "60", "start", "-o",
                        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"],
                       check=True, capture_output=True, timeout=90)
    except subprocess.CalledProcessError as exc:
        tail = open(log).read()[-2000:] if os.path.exists(log) else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {exc.stderr.decode(errors='replace')}\n{tail}")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run([*run, f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def fresh_database(base_url: str) -> str:
    """A new, empty database on the server: each test starts from nothing, as with a new SQLite file."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(base_url.replace("postgresql+psycopg", "postgresql") + "/postgres",
                         autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # a generated identifier, no user input
    return f"{base_url}/{name}"

