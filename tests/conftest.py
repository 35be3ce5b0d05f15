import os
import shutil
import tempfile
import time

import pytest
import torch
from pg_support import postgres_cluster, postgres_server  # noqa: F401  (store_url below; a server to stop)

torch.set_num_threads(1)  # tiny ops: threads cost more than they give, and CI has 2 cores

# No test writes into the repository's data/ folder: each test process (AppTest in it, and the lab servers it
# starts, which inherit the environment) stores progress in a temporary SQLite file of its own.
_DB_DIR = tempfile.mkdtemp(prefix="serving-lab-db-")
os.environ["SERVING_LAB_DB"] = f"sqlite:///{_DB_DIR}/serving-lab.db"


def _run_store() -> str:
    """One folder of recorded runs for the whole test session (ui/playback/run_cache.py reads it through): the
    pytest-xdist workers of one run share it by the run's id, and the lab servers inherit it."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return tempfile.mkdtemp(prefix="serving-lab-runs-")
    folder = os.path.join(tempfile.gettempdir(), f"serving-lab-runs-{run}")
    os.makedirs(folder, exist_ok=True)
    return folder


_MADE_RUN_STORE = "SERVING_LAB_RUN_STORE" not in os.environ  # xdist workers inherit the controller's
if _MADE_RUN_STORE:
    os.environ["SERVING_LAB_RUN_STORE"] = _run_store()


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_DB_DIR, ignore_errors=True)
    if _MADE_RUN_STORE and not hasattr(session.config, "workerinput"):  # the controller: the last to end
        shutil.rmtree(os.environ["SERVING_LAB_RUN_STORE"], ignore_errors=True)


@pytest.fixture(scope="session")
def random_small():
    from engine.models.loader import load_model
    return load_model("random-small", device="cpu")  # the CPU suite runs on CPU everywhere; test_cuda.py has its own


@pytest.fixture(scope="session")
def tiny():
    from engine.models.loader import load_model
    return load_model("tiny", device="cpu")


@pytest.fixture(scope="session")
def smollm2_loads(tmp_path_factory):
    """Load SmolLM2 twice through the public entry point, the cache in a temporary folder: GGUF, then cache."""
    from engine.models.loader import load_model

    cache_root = tmp_path_factory.mktemp("serving-lab-cache")
    runs = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SERVING_LAB_CACHE", str(cache_root))
        for _ in range(2):
            messages = []
            start = time.perf_counter()
            loaded = load_model("smollm2", device="cpu", progress=lambda msg, frac: messages.append(msg))
            runs.append((loaded, messages, time.perf_counter() - start))
        yield {"fresh": runs[0], "cached": runs[1], "cache_root": cache_root}
    shutil.rmtree(cache_root, ignore_errors=True)  # 540 MB of fp32 weights


@pytest.fixture(scope="session")
def smollm2(smollm2_loads):
    return smollm2_loads["fresh"][0]


def dense_greedy(model, prompt_ids: list[int], max_tokens: int, eos_ids=()) -> list[int]:
    """The oracle: no cache at all, recompute the whole sequence for every new token."""
    ids = list(prompt_ids)
    out = []
    with torch.inference_mode():
        for _ in range(max_tokens):
            logits = model.forward_dense(torch.tensor([ids]))[0, -1]
            token = int(logits.argmax())
            out.append(token)
            ids.append(token)
            if token in eos_ids:
                break
    return out


# The browser tests' fixtures (the lab on a free port, Debian's chromium), for every test module that asks.
from browser_support import browser, server  # noqa: E402, F401


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.server)])
def store_url(request, tmp_path):
    """A database URL for a storage test: once SQLite (a temporary file), once the real PostgreSQL of pg_support."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'lab.db'}"
    from pg_support import fresh_database

    return fresh_database(request.getfixturevalue("postgres_server"))
