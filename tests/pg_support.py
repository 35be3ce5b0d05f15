"""A real PostgreSQL server for the storage tests: Debian's `postgresql` binaries, a cluster in a temporary folder
on a free 127.0.0.1 port, started once per test session and stopped at its end (and, for a test that stops and
starts its server, one of the test's own). Root may not run a PostgreSQL
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


class Cluster:
    """A PostgreSQL cluster in a temporary folder on a free 127.0.0.1 port: `url` (no database name), `stop` and
    `start` (a server going away under a running app, and coming back on the same port, with its data)."""

    def __init__(self, bindir: str, user: str | None):
        self.bindir, self.run = bindir, _as_owner(user)
        self.root = tempfile.mkdtemp(prefix="serving-lab-pg-")
        self.data, self.log = os.path.join(self.root, "data"), os.path.join(self.root, "server.log")
        if user:
            entry = pwd.getpwnam(user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.port = free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}"
        try:
            subprocess.run([*self.run, f"{bindir}/initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E",
                            "UTF8", "--no-sync", "--no-instructions"], check=True, capture_output=True, timeout=120)
            self.start()
        except subprocess.CalledProcessError as exc:
            tail = open(self.log).read()[-2000:] if os.path.exists(self.log) else ""
            self.remove()
            pytest.fail(f"PostgreSQL did not start: {exc.stderr.decode(errors='replace')}\n{tail}")

    def start(self) -> None:
        subprocess.run([*self.run, f"{self.bindir}/pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60",
                        "start", "-o", f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                        "-c max_connections=200"], check=True, capture_output=True, timeout=90)

    def stop(self, mode: str = "fast") -> None:
        subprocess.run([*self.run, f"{self.bindir}/pg_ctl", "-D", self.data, "-m", mode, "-w", "stop"],
                       capture_output=True, timeout=60)

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def _owner() -> str | None:
    """Who runs the server: this user, or as root (which PostgreSQL refuses) `postgres` or `nobody`."""
    if _binaries() is None:
        pytest.skip("PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb): "
                    "`make test` installs it, or `apt-get install -y postgresql`")
    if os.geteuid() != 0:
        return None
    user = next((u for u in ("postgres", "nobody") if _has_user(u)), None)
    if user is None:
        pytest.skip("running as root, and neither a `postgres` nor a `nobody` user exists to own the cluster")
    return user


@pytest.fixture(scope="session")
def postgres_server():
    """The server's base URL (no database name). Skips only when the binaries are not installed."""
    cluster = Cluster(_binaries(), _owner())
    try:
        yield cluster.url
    finally:
        cluster.remove()


@pytest.fixture
def postgres_cluster():
    """A server of this test's own, to stop and start (the session's server is shared by every storage test)."""
    cluster = Cluster(_binaries(), _owner())
    try:
        yield cluster
    finally:
        cluster.remove()


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

