"""The policy challenge's figures for a few reference rules, run by hand: each axis, the points and the score
against the default targets, on the public seed and on the hidden pair a class would draw with a given secret.
It tells whether the defaults are reachable and which rules the score favours; real runs, so it takes minutes.

    .venv/bin/python -m tools.challenge_figures [secret] [class code]   # defaults: "example-secret", "cs-101"
"""
from __future__ import annotations

import sys

from engine.lab.challenge import PUBLIC_SEED, grade_key, hidden_seeds
from engine.models.loader import load_model

# name -> (order key, victim key, preemptive)
RULES = {
    "FCFS": ("arrival_step", "", False),
    "shortest first": ("num_prompt_tokens + max_tokens", "", False),
    "shortest first, preempting": ("num_prompt_tokens + max_tokens", "", True),
    "EDF, preempting": ("deadline", "tokens_left", True),
    "support first, preempting": ("0 if request_class == 'support' else (1 if request_class == 'chat' else 2)", "",
                                  True),
    "TTFT SLO then short, cheap victim": ("ttft_slo + tokens_left / 8", "-(num_prompt_tokens + num_output_tokens)",
                                          True),
}


def main(secret: str = "example-secret", class_code: str = "cs-101") -> None:
    loaded = load_model("random-small", device="cpu")
    for label, seeds in (("public seed", (PUBLIC_SEED,)), (f"hidden pair of {class_code!r}",
                                                           hidden_seeds(secret, class_code))):
        print(f"== {label}")
        for name, (key, victim, preemptive) in RULES.items():
            g = grade_key(loaded, key, seeds, victim or None, preemptive)
            print(f"{name:36s} SLO {g.slo_attainment:.2f}  throughput {g.throughput_vs_fcfs:.3f}x  "
                  f"worst slowdown {g.worst_class_slowdown:.2f}  Jain {g.jain:.2f}  preemptions {g.preemptions:.1f}  "
                  f"met {sum(g.met().values())}/5  score {g.score():.1f}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
