"""A policy key's verdict (accepted, or refused with a code, at a step and a request) depends on the key and the
requests alone, never on how busy the shared server is: the step budget counts the keys' work
(engine.policy_key.CompiledKey.cost), it does not time it. Timed in CPU time, a key near the budget was refused on
some runs and accepted on others, idle or busy alike. Here the same keys on the challenge's requests, on a quiet
machine and beside six CPU-bound processes."""
import subprocess
import sys

import pytest

from engine.core.policy import KeyPolicy
from engine.lab.challenge import CHALLENGE, PUBLIC_SEED, challenge_config, run_key
from engine.lab.experiment import run_requests, workload_requests
from engine.policy_key import FIELDS, MAX_KEY_CHARS, PolicyKeyError, compile_key

BUSY_PROCESSES = 6
BUSY_FOR_S = 600  # each busy process ends by itself after this, should the test's own `finally` never run
BUSY = f"""import time
end = time.monotonic() + {BUSY_FOR_S}
print("busy", flush=True)
while time.monotonic() < end:
    pass
"""


def heavy_key() -> str:
    """A legal key as heavy as the length limit allows: conditional max/min terms over eight fields, summed."""
    names = ["waited", "tokens_left", "num_prompt_tokens", "max_tokens", "arrival_step", "priority", "deadline",
             "step"]
    key, i = "", 0
    while True:
        a, b = names[i % len(names)], names[(i + 3) % len(names)]
        longer = (key + "+" if key else "") + f"(max({a},{b}) if {a}>{b} else min({a},{b})*2)"
        if len(longer) > MAX_KEY_CHARS:
            return key
        key, i = longer, i + 1


HEAVY = heavy_key()


def verdict(run) -> tuple:
    try:
        run()
    except PolicyKeyError as e:
        return "refused", e.code, e.message.params["step"], e.message.params["request_id"]
    return ("accepted",)


def verdicts(loaded) -> list[tuple]:
    """The plain key and the heavy one as the challenge runs them (its default budget), and the heavy one with a
    budget one operation short of three requests' work: refused at the first step with three in the queue."""
    requests = workload_requests(loaded, CHALLENGE, PUBLIC_SEED)
    near = 3 * KeyPolicy(HEAVY).cost - 1
    return [verdict(lambda: run_key(loaded, PUBLIC_SEED, "priority")),
            verdict(lambda: run_key(loaded, PUBLIC_SEED, HEAVY)),
            verdict(lambda: run_requests(loaded, requests,
                                         challenge_config(policy_key=HEAVY, policy_key_budget_ops=near)))]


def test_the_work_of_a_key_is_counted_from_its_text():
    assert compile_key("priority").cost == 1
    assert compile_key("max(0, priority - waited // 100)").cost == 8  # a call, its name, 2 numbers, 2 fields, 2 ops
    assert compile_key("0 < waited < 10").cost == 4 + 1  # a chained comparison reads its middle term twice
    heavy = compile_key(HEAVY)
    assert len(HEAVY) > MAX_KEY_CHARS - 80 and heavy.cost > 50
    assert KeyPolicy(HEAVY).cost == heavy.cost + len(heavy.names)  # and each field it reads, once per request
    assert KeyPolicy("waited", "tokens_left + waited").cost == 2 + 1 + 3
    assert set(heavy.names) <= set(FIELDS)


@pytest.mark.slow
def test_a_keys_verdict_is_the_same_on_a_quiet_and_a_busy_machine(random_small):
    quiet = verdicts(random_small)
    assert quiet[:2] == [("accepted",), ("accepted",)]
    assert quiet[2][:2] == ("refused", "policy_key.over_budget")
    busy = [subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True)
            for _ in range(BUSY_PROCESSES)]
    try:
        assert [p.stdout.readline().strip() for p in busy] == ["busy"] * BUSY_PROCESSES  # all spinning now
        loaded = verdicts(random_small)
        assert all(p.poll() is None for p in busy)
    finally:
        for p in busy:
            p.kill()
        for p in busy:
            p.wait(timeout=30)
    assert loaded == quiet
