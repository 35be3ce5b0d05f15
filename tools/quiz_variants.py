"""Write the pool of checked variants for the quiz's numeric questions (lessons/quiz_variants.json).

    python -m tools.quiz_variants            # runs every candidate (1,920 runs; each made once, cached), on every core
    python -m tools.quiz_variants --check    # each question's pool: how many variants, how many answers, their range

Each question draws candidates (a workload seed, and where the question says so a scale, max_num_seqs, num_blocks
or an output length) from ranges of its own (max_num_seqs may be drawn around a class's size: "spare"); each
candidate's runs are made as the quiz's Run button makes them (lessons.run_spec), on random weights: the figures are
the schedule's, the same on every model (every output has its workload's length). A candidate joins the pool where
the question's claim holds on it (lessons.quiz_variants.CLAIMS)."""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from multiprocessing import Pool
from pathlib import Path

import torch

from engine.lab.workload import preset
from lessons import load_moments, load_quiz, run_spec, workload_of
from lessons.quiz_variants import CLAIMS, POOL_FILE, QuizVariant, class_count, metric_paths, recorded
from lessons.grading import measured_value, metric_value, shown_value, within

PER_QUESTION = 50
MODEL = "random-small"
SEEDS = range(10_000)  # the lab pages' seed box
# what a question's variants change beside the seed, and how many candidates to run for PER_QUESTION to pass;
# questions on one moment with the same ranges draw the same candidates, so their runs are made once
RANGES = {
    "fixed-chat-ttft-ratio": {"candidates": 2 * PER_QUESTION},
    "short-wait-p95-ratio": {"candidates": 2 * PER_QUESTION},
    # ceil(requests / slots) rounds of the output length: 13 answers over 50 variants with the preset's 64 alone
    "uniform-steps-predict": {"slots": (3, 16), "scales": (0.25, 0.5, 1.0, 1.5), "outputs": (16, 96)},
    "fixed-slot-ratio": {"slots": (6, 24), "candidates": 5 * PER_QUESTION // 2},
    "paged-throughput-ratio": {"blocks": (64, 192), "candidates": 3 * PER_QUESTION},
    # the batch job's size varies with the scale (12, 24 or 36 requests) and max_num_seqs is drawn around it
    # ("spare": slots minus the batch job's requests), so whether a slot is left for support is read from both
    # numbers of the student's own variant. Not 36 for the SLO: its 48 support questions outlast the batch job, and
    # full slots no longer starve them. With slots to spare the SLO answers gather at 100 %, with none at 0 %: each
    # kept under a quarter, near what a guess drawn evenly from 0-100 % passes (±10 points: a fifth); for EDF's
    # throughput too
    "fcfs-support-slo-predict": {"spare": (-6, 10), "scales": (0.5, 1.0), "candidates": 6 * PER_QUESTION,
                                 "spread": 0.24},
    "fcfs-longest-wait": {"spare": (-6, 12), "scales": (0.5, 1.0, 1.5), "candidates": 3 * PER_QUESTION},
    "edf-throughput-predict": {"slots": (10, 30), "candidates": 6 * PER_QUESTION, "spread": 0.24},
}
# a question's answers are spread: no answer passes (within the question's tolerance) on more than this share of
# its variants (or its RANGES' "spread"), and for "which class" neither class is the answer on more than half, so
# no fixed guess (and no classmate's answer) passes much more often than any other
SPREAD = 0.3

_loaded = None
CACHE = Path(tempfile.gettempdir()) / "quiz_variants_runs.jsonl"  # runs made so far: a build cut short goes on


def _cached(keys: set[str]) -> dict[str, dict]:
    """The runs of `keys` already made (the schedule is deterministic: a run's key names its figures)."""
    out = {}
    if CACHE.exists():
        for line in CACHE.read_text(encoding="utf-8").splitlines():
            try:
                key, summary = json.loads(line)
            except ValueError:  # a line cut short when a build was stopped
                continue
            if key in keys:
                out[key] = summary
    return out


def candidates(question) -> list[QuizVariant]:
    ranges = RANGES.get(question.id, {})
    rng = random.Random(f"{question.run['moment']}:{json.dumps(ranges.get('slots'))}:{ranges.get('scales')}"
                        + "".join(f":{ranges[k]}" for k in ("blocks", "outputs", "spare") if k in ranges))
    workload = preset(load_moments()[question.run["moment"]].workload)
    out = []
    for _ in range(ranges.get("candidates", PER_QUESTION + PER_QUESTION // 5)):
        seed = rng.choice(SEEDS)
        slots = rng.randint(*ranges["slots"]) if "slots" in ranges else None
        scale = rng.choice(ranges["scales"]) if "scales" in ranges else 1.0
        if "spare" in ranges:
            slots = class_count(workload, "batch", scale) + rng.randint(*ranges["spare"])
        blocks = rng.randint(*ranges["blocks"]) if "blocks" in ranges else None
        output = rng.randint(*ranges["outputs"]) if "outputs" in ranges else None
        out.append(QuizVariant(seed, scale, slots, blocks=blocks, output=output))
    return out


def _run(key: str) -> tuple[str, dict]:
    """A worker's run of `key` (its process's own model, one thread: a process a core)."""
    from engine import load_model
    global _loaded
    if _loaded is None:
        torch.set_num_threads(1)  # one process a core: threads on top of them only contend
        _loaded = load_model(MODEL)
    return key, summary_of(_loaded, key)


def summary_of(loaded, key: str) -> dict:
    """summarize() of the run `key` names ([workload, seed, scale, settings, output]), made as the quiz makes it."""
    from engine.lab.experiment import run_requests, workload_requests
    from engine.lab.workload import engine_config_for
    workload_name, seed, scale, settings, *output = json.loads(key)
    workload = workload_of({"workload": workload_name, "scale": scale, "output": output[0] if output else None})
    return run_requests(loaded, workload_requests(loaded, workload, seed), engine_config_for(workload, **settings)
                        ).summary


def key_of(spec: dict, settings: dict) -> str:
    """A run's key; the output length only where a variant sets it, so the runs cached before it are found."""
    key = [spec["workload"], spec["seed"], spec["scale"], dict(sorted(settings.items()))]
    return json.dumps(key + [spec["output"]] if spec.get("output") else key)


def build(jobs: int, only: list[str] | None = None) -> dict:
    """The pool, every question's drawn anew (or only those in `only`: the rest kept from the file)."""
    questions = [q for q in load_quiz("en") if q.type == "numeric" and (not only or q.id in only)]
    moments = load_moments()
    drawn = {q.id: candidates(q) for q in questions}
    keys = set()
    for q in questions:
        for v in drawn[q.id]:
            spec = run_spec(q, moments, v)
            keys |= {key_of(spec, s) for s in (spec["settings"], spec["versus_settings"]) if s is not None}
    summaries = _cached(keys)
    todo = sorted(keys - set(summaries))
    print(f"{len(keys)} runs for {len(questions)} questions, {len(todo)} to make", file=sys.stderr)
    with Pool(jobs) as pool, CACHE.open("a", encoding="utf-8") as cache:
        for i, (key, summary) in enumerate(pool.imap_unordered(_run, todo, chunksize=2), 1):
            summaries[key] = summary
            cache.write(json.dumps([key, summary]) + "\n")
            cache.flush()
            if i % 50 == 0:
                print(f"  {i}/{len(todo)}", file=sys.stderr)
    out = {}
    for q in questions:
        workload = preset(moments[q.run["moment"]].workload)
        holding = []
        for v in drawn[q.id]:
            spec = run_spec(q, moments, v)
            run = summaries[key_of(spec, spec["settings"])]
            versus = summaries[key_of(spec, spec["versus_settings"])] if spec["versus_settings"] else None
            figures = QuizVariant(v.seed, v.scale, v.slots, {p: metric_value(run, p) for p in metric_paths(q, run)},
                                  {p: metric_value(versus, p) for p in metric_paths(q, versus)} if versus else None,
                                  v.blocks, v.output)
            if recorded(q, figures) is not None and CLAIMS[q.id](q, figures, workload):
                holding.append(figures)
        kept = choose(q, holding)
        out[q.id] = [v.to_dict() for v in kept]
        print(f"{q.id}: {len(kept)} kept of {len(drawn[q.id])} candidates", file=sys.stderr)
    if only:
        out = json.loads(POOL_FILE.read_text(encoding="utf-8"))["variants"] | out
    return {"model": MODEL, "variants": out}


def choose(q, holding: list[QuizVariant]) -> list[QuizVariant]:
    """Up to PER_QUESTION of the variants the claim holds on, the answers spread: first each answer once (two
    students share an answer only where the pool runs short of others), then in the order drawn."""
    kept: list[QuizVariant] = []
    for first_of_its_answer in (True, False):
        for v in holding:
            answer = measured_value(recorded(q, v))
            if v in kept or (first_of_its_answer and any(measured_value(recorded(q, k)) == answer for k in kept)):
                continue
            if len(kept) < PER_QUESTION and spread(q, kept + [v]):
                kept.append(v)
    return kept


def spread(q, variants: list[QuizVariant]) -> bool:
    """Whether a question's answers over `variants` (of a pool of PER_QUESTION) stay spread (SPREAD)."""
    answers = [measured_value(recorded(q, v)) for v in variants]
    if q.compare == "max_class":
        return max(answers.count(a) for a in answers) <= PER_QUESTION // 2
    answers = [shown_value(q, a) for a in answers]  # as the student enters it: a share in percent
    most = RANGES.get(q.id, {}).get("spread", SPREAD) * PER_QUESTION
    return max(sum(within(guess, a, q.tolerance) for a in answers) for guess in guesses(answers, q.tolerance)) \
        <= most


def guesses(answers: list[float], tolerance: dict) -> set[float]:
    """The fixed guesses that pass on the most of `answers`: each answer, and each at its tolerance's edges (a
    guess's passes change only where it crosses one)."""
    out = set(answers)
    for a in answers:
        out |= {a - tolerance.get("abs", 0), a + tolerance.get("abs", 0), a * (1 - tolerance.get("rel", 0)),
                a * (1 + tolerance.get("rel", 0))}
    return out


def check() -> None:
    from lessons.quiz_variants import pool
    for q in (q for q in load_quiz("en") if q.type == "numeric"):
        values = [measured_value(recorded(q, v)) for v in pool().get(q.id, ())]
        if q.compare == "max_class":
            counts = ", ".join(f"{c} {values.count(c)}" for c in sorted(set(values)))
            print(f"{q.id}: {len(values)} variants: {counts}")
            continue
        shown = sorted(shown_value(q, v) for v in values)
        print(f"{q.id}: {len(values)} variants, {len(set(shown))} distinct answers, from {shown[0]:.4g} to "
              f"{shown[-1]:.4g} {q.unit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="describe the pool; run nothing")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", nargs="+", metavar="QUESTION", help="draw these questions' variants anew")
    args = parser.parse_args()
    if args.check:
        check()
        return
    POOL_FILE.write_text(json.dumps(build(args.jobs, args.only), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {POOL_FILE}", file=sys.stderr)


if __name__ == "__main__":
    main()
