"""The worksheets' evidence, checked against what the engine measured on the student's own runs.

Each check takes what the student entered (field id -> text, as the worksheet saves it), the student's runs
(key -> RunSpec, in the order they were made) and the summaries measured for them (key -> summarize() dict;
the caller runs the specs), and returns a Verdict: every finding, passed or not, with what it compared.
Nothing here reads words: a finding is about runs and numbers only."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from engine.config import POLICIES
from lessons.evidence.metrics import EFFECT_METRICS, METRICS, Metric
from lessons.evidence.runs import CHANGES, RunSpec, SpecError
from lessons.grading import parse_number

FEATURES = 3  # the hard-requests worksheet names three features
GOAL_WORKLOAD = "chat-and-reports"
GOAL_CLASSES = ("chat", "report")  # whose TTFT the goal bounds, and whose slowdown


@dataclass(frozen=True)
class Finding:
    ok: bool
    code: str  # lessons/evidence/messages.py says it
    params: dict = field(default_factory=dict)


@dataclass
class Verdict:
    findings: list[Finding] = field(default_factory=list)

    def add(self, ok: bool, code: str, **params) -> bool:
        self.findings.append(Finding(ok, code, params))
        return ok

    @property
    def verified(self) -> bool:
        return bool(self.findings) and all(f.ok for f in self.findings)


def run_name(key: str, runs: dict) -> str:
    """How the page lists a run: "#3" (its place in the student's list)."""
    return f"#{list(runs).index(key) + 1}" if key in runs else key


def _named_run(v: Verdict, claims: dict, column: str, runs: dict, measured: dict) -> RunSpec | None:
    key = (claims.get(f"{column}_run") or "").strip()
    if not key:
        v.add(False, "no_run", column=column)
        return None
    if key not in runs:
        v.add(False, "never_made", run=key, column=column)
        return None
    if key not in measured:
        v.add(False, "not_measured", run=run_name(key, runs))
        return None
    return runs[key]


def _figure(v: Verdict, claims: dict, field_id: str, metric: Metric, summary: dict, run: str) -> None:
    """The figure typed into `field_id` against the one `run` measured (over all its requests)."""
    text = (claims.get(field_id) or "").strip()
    value = parse_number(text, percent=metric.scale == 100) if text else None
    measured = metric.value(summary)
    if not text:
        v.add(False, "no_figure", field=field_id)
    elif value is None:
        v.add(False, "not_number", field=field_id, text=text)
    elif measured is None:
        v.add(False, "no_such_figure", field=field_id, run=run)
    elif abs(value - measured) > metric.tolerance(measured):
        v.add(False, "figure_off", field=field_id, typed=text, run=run, metric=metric.id)  # never the value itself
    else:
        v.add(True, "figure_ok", field=field_id, measured=round(measured, metric.digits), run=run)


def _same_runs_but(v: Verdict, specs: dict[str, tuple[str, RunSpec]], differs: str) -> bool:
    """Two runs that differ only in `differs`: the same workload, seed and every other setting."""
    (_, (a_key, a)), (_, (b_key, b)) = specs.items()
    if a.workload != b.workload or a.seed != b.seed or a.change or b.change:
        return v.add(False, "other_workload", a=a_key, b=b_key, wa=a.workload, wb=b.workload)
    ca, cb = a.config(), b.config()
    other = sorted(k for k in ("batcher", "kv_layout", "policy", "num_blocks", "max_num_seqs")
                   if k != differs and getattr(ca, k) != getattr(cb, k))
    if other:
        return v.add(False, "other_settings", a=a_key, b=b_key, names=", ".join(other))
    return v.add(True, "same_workload", a=a_key, b=b_key, workload=a.workload)


def _two_runs(v: Verdict, claims: dict, runs: dict, measured: dict, wanted: tuple[str, dict], seed: int) -> dict:
    """The runs the columns name (`wanted`: a setting, and column -> the value it must have there), checked to be
    the student's, of the student's own workload seed, measured, of the right variant, and otherwise alike.
    Returns column -> (run name, spec) for those that are."""
    setting, columns = wanted
    picked = {}
    for column, value in columns.items():
        spec = _named_run(v, claims, column, runs, measured)
        if spec is None:
            continue
        name, got = run_name(claims[f"{column}_run"].strip(), runs), getattr(spec.config(), setting)
        if spec.seed != seed:  # another student's requests (a run copied in an import), or an old one
            v.add(False, "not_your_variant", run=name, column=column)
            continue
        if v.add(got == value, "right_variant" if got == value else "wrong_variant", run=name, column=column,
                 wanted=value, got=got):
            picked[column] = (name, spec)
    if len(picked) == 2:
        _same_runs_but(v, picked, setting)
    return picked


def check_batching(claims: dict, runs: dict[str, RunSpec], measured: dict[str, dict], seed: int = 0) -> Verdict:
    """compare-batching: a static and a continuous run of one workload, on the student's seed (runs.worksheet_seed);
    their throughput and mean wait."""
    v = Verdict()
    picked = _two_runs(v, claims, runs, measured, ("batcher", {"fixed": "static", "continuous": "continuous"}),
                       seed)
    for column, (name, spec) in picked.items():
        summary = measured[spec.key]
        _figure(v, claims, f"throughput_{column}", METRICS["throughput"], summary, name)
        _figure(v, claims, f"waiting_{column}", METRICS["wait_mean"], summary, name)
    return v


def check_paging(claims: dict, runs: dict[str, RunSpec], measured: dict[str, dict], seed: int = 0) -> Verdict:
    """paged-attention-purpose: a contiguous and a paged run at the same memory; running at once, KV waste,
    refusals; and the runs must show a difference (at a memory where both layouts fit everything, the
    comparison shows nothing)."""
    v = Verdict()
    picked = _two_runs(v, claims, runs, measured, ("kv_layout", {"contiguous": "contiguous", "paged": "paged"}),
                       seed)
    for column, (name, spec) in picked.items():
        for row in ("running", "kv_waste", "refusals"):
            _figure(v, claims, f"{row}_{column}", METRICS[row], measured[spec.key], name)
    if len(picked) == 2 and v.verified:
        c, p = (measured[picked[k][1].key] for k in ("contiguous", "paged"))
        shows = (METRICS["running"].value(p) > METRICS["running"].value(c)
                 or METRICS["kv_waste"].clearly_worse(METRICS["kv_waste"].value(p), METRICS["kv_waste"].value(c))
                 or METRICS["refusals"].value(c) > METRICS["refusals"].value(p))
        v.add(shows, "shows_difference" if shows else "no_difference")
    return v


# --- hard requests: a change per feature, and the metric it hurts ---------------------------------------------
def effect_specs(claims: dict, seed: int = 0) -> dict[str, RunSpec]:
    """The runs a hard-requests answer needs: "baseline", and "feature_<i>" for each feature whose change is a
    known one, all on the student's seed. The baseline is the workload under continuous batching (the default)."""
    try:
        base = RunSpec((claims.get("workload") or "").strip(), seed=seed)
    except SpecError:
        return {}
    out = {"baseline": base}
    for i in range(1, FEATURES + 1):
        change = (claims.get(f"change_{i}") or "").strip()
        if change in CHANGES:
            out[f"feature_{i}"] = RunSpec(base.workload, seed=seed, change=change)
    return out


def check_effects(claims: dict, measured: dict[str, dict], seed: int = 0) -> Verdict:
    """hard-requests: for each feature, the change made the named metric clearly worse for the named requests,
    against the baseline run; and the three changes are three different mechanisms. `measured` maps the
    names of effect_specs(claims) to their summaries."""
    v = Verdict()
    specs = effect_specs(claims, seed)
    if "baseline" not in specs:
        v.add(False, "no_workload")
        return v
    classes = specs["baseline"].classes()
    seen: dict[str, int] = {}
    for i in range(1, FEATURES + 1):
        change, metric_id, who = ((claims.get(f"{k}_{i}") or "").strip() for k in ("change", "metric", "who"))
        who = who or "all"
        if change not in CHANGES or metric_id not in EFFECT_METRICS:
            v.add(False, "feature_incomplete", feature=i)
            continue
        if change in seen:
            v.add(False, "same_mechanism", feature=i, other=seen[change], change=change)
            continue
        seen[change] = i
        metric = METRICS[metric_id]
        if who != "all" and (who not in classes or not metric.per_class):
            v.add(False, "bad_who", feature=i, who=who, metric=metric_id, classes=", ".join(classes))
            continue
        base, after = (measured.get(name) for name in ("baseline", f"feature_{i}"))
        if base is None or after is None:
            v.add(False, "not_measured", run=f"feature {i}")
            continue
        if after.get("num_rejected", 0) > base.get("num_rejected", 0):
            v.add(False, "rejected_requests", feature=i, change=change, n=after["num_rejected"])
            continue
        before, now = metric.value(base, who), metric.value(after, who)
        if before is None or now is None:
            v.add(False, "metric_absent", feature=i, metric=metric_id, who=who)
            continue
        shown = dict(feature=i, change=change, metric=metric_id, who=who, before=round(before, metric.digits),
                     after=round(now, metric.digits))
        if metric.clearly_worse(before, now):
            v.add(True, "effect_holds", **shown)
        else:
            v.add(False, "effect_reversed" if (now - before) * metric.worse < 0 else "effect_absent", **shown)
    return v


# --- the chat service's goal, as numbers ----------------------------------------------------------------------
GOAL_FIELDS = ("ttft_max", "throughput_mode", "throughput_min", "fairness_mode", "fairness_bound", "policy")
THROUGHPUT_MODES = ("tok_per_step", "pct_of_fcfs")
FAIRNESS_MODES = ("report_slowdown", "jain")


@dataclass(frozen=True)
class Goal:
    ttft_max: float  # chat TTFT p95, steps
    throughput_mode: str
    throughput_min: float  # tokens per step, or percent of FCFS's
    fairness_mode: str
    fairness_bound: float  # the reports' worst slowdown at most this, or Jain's index at least this
    policy: str  # the policy the student runs the goal against

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)

    def terms(self) -> str:
        """The goal itself, as JSON: its numbers and measures, without the policy it is checked against."""
        return json.dumps({k: v for k, v in self.__dict__.items() if k != "policy"}, sort_keys=True)


def parse_goal(claims: dict) -> tuple[Goal | None, list[Finding]]:
    """The goal form's fields as a Goal, or the findings that say which field is wrong."""
    v = Verdict()
    numbers = {}
    for name, low, high in (("ttft_max", 0, 10_000), ("throughput_min", 0, 10_000), ("fairness_bound", 0, 10_000)):
        text = (claims.get(name) or "").strip()
        value = parse_number(text) if text else None
        if value is None or not low < value <= high:
            v.add(False, "goal_number", field=name, text=text)
        numbers[name] = value
    modes = {name: (claims.get(name) or "").strip() for name in ("throughput_mode", "fairness_mode", "policy")}
    for name, allowed in (("throughput_mode", THROUGHPUT_MODES), ("fairness_mode", FAIRNESS_MODES),
                          ("policy", POLICIES)):
        if modes[name] not in allowed:
            v.add(False, "goal_choice", field=name)
    if modes["fairness_mode"] == "jain" and numbers["fairness_bound"] is not None and numbers["fairness_bound"] > 1:
        v.add(False, "jain_above_one", text=claims.get("fairness_bound"))
    if v.findings:
        return None, v.findings
    return Goal(numbers["ttft_max"], modes["throughput_mode"], numbers["throughput_min"], modes["fairness_mode"],
                numbers["fairness_bound"], modes["policy"]), []


def goal_specs(policies=POLICIES, seed: int = 0) -> dict[str, RunSpec]:
    """The goal's runs: its workload on the student's seed under each policy (the student's pick, FCFS for "% of
    FCFS", and the rest to see whether the goal tells policies apart at all)."""
    return {p: RunSpec(GOAL_WORKLOAD, {"policy": p}, seed) for p in policies}


def goal_parts(goal: Goal, summary: dict, fcfs: dict) -> dict[str, tuple[bool, float | None]]:
    """Each part of the goal on one run: (holds, the measured figure)."""
    ttft = METRICS["ttft_p95"].value(summary, GOAL_CLASSES[0])
    thr = METRICS["throughput"].value(summary)
    if goal.throughput_mode == "pct_of_fcfs":
        base = METRICS["throughput"].value(fcfs)
        thr = 100 * thr / base if thr is not None and base else None
    if goal.fairness_mode == "report_slowdown":
        fair = METRICS["slowdown_max"].value(summary, GOAL_CLASSES[1])
        fair_ok = fair is not None and fair <= goal.fairness_bound
    else:
        fair = METRICS["fairness"].value(summary)
        fair_ok = fair is not None and fair >= goal.fairness_bound
    return {"ttft": (ttft is not None and ttft <= goal.ttft_max, ttft),
            "throughput": (thr is not None and thr >= goal.throughput_min, thr),
            "fairness": (fair_ok, fair)}


def check_goal(claims: dict, measured: dict[str, dict]) -> Verdict:
    """chat-slo-goal: the goal is well formed, the student's policy meets every part of it on the goal's
    workload, and some policy of the lab's does not (a goal every policy meets tells a scheduler nothing).
    `measured` maps policies (goal_specs) to their summaries."""
    v = Verdict()
    goal, problems = parse_goal(claims)
    if goal is None:
        v.findings += problems
        return v
    missing = [p for p in POLICIES if p not in measured]
    if missing:
        v.add(False, "not_measured", run=missing)
        return v
    units = {"ttft": "steps", "throughput": goal.throughput_mode, "fairness": goal.fairness_mode}
    for part, (holds, value) in goal_parts(goal, measured[goal.policy], measured["fcfs"]).items():
        v.add(holds, f"goal_{part}_{'holds' if holds else 'fails'}", policy=goal.policy,
              value=None if value is None else round(value, 2), unit=units[part])
    failing = [p for p in POLICIES if not all(ok for ok, _ in goal_parts(goal, measured[p], measured["fcfs"]).values())]
    v.add(bool(failing), "goal_separates" if failing else "goal_too_loose", policies=failing)
    return v
