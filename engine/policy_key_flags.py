"""The command line's flags for a student's policy key, shared by `bench` and `serve`."""
from __future__ import annotations

import argparse

from engine.config import EngineConfig


def add_policy_key_args(p: argparse.ArgumentParser) -> None:
    """A student's own policy (engine/policy_key.py), for `serve` and `bench` alike."""
    default = EngineConfig.default
    p.add_argument("--policy-key", default=default("policy_key"),
                   help="an expression over a request's fields, lower runs first; replaces the named policy, "
                        "e.g. \"waited - 0.1 * max_tokens\"")
    p.add_argument("--policy-victim-key", default=default("policy_victim_key"),
                   help="who is preempted when memory runs short: highest first (default: the policy key)")
    p.add_argument("--policy-key-preemptive", action=argparse.BooleanOptionalAction,
                   default=default("policy_key_preemptive"),
                   help="a waiting request may evict running work its key ranks strictly below it")


POLICY_KEY_KNOBS = ("policy_key", "policy_victim_key", "policy_key_preemptive")
