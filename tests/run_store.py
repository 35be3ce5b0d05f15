"""Figures computed once per test session, across pytest-xdist's worker processes: pickled into the session's run
store folder (SERVING_LAB_RUN_STORE, which conftest.py sets and the lab servers read too)."""
import hashlib
import os
import pickle
from pathlib import Path


def once(key: str, compute):
    """`compute()`'s value for `key`: read back if any process of this session has computed it, else computed now
    and stored (written under a name of this process's own, then renamed: a reader never sees half a file)."""
    path = Path(os.environ["SERVING_LAB_RUN_STORE"]) / f"once-{hashlib.sha256(key.encode()).hexdigest()}.pkl"
    try:
        return pickle.loads(path.read_bytes())
    except FileNotFoundError:
        pass
    value = compute()
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    part.write_bytes(pickle.dumps(value))
    os.replace(part, path)
    return value
