"""RunRecorder: rebuild a run's requests from its step snapshots alone, frame by frame.

The UI records every snapshot so that play, step back, scrub and replay cost no compute, and a
saved trace replays on a laptop with no model loaded. From the snapshots the recorder rebuilds
each request's stamps (arrival, first token, every token, finish), so the same metric code
(`metrics.summarize`) serves live runs and replays, and `frame_metrics(i)` can say what the
numbers were at any step of the run.
"""
from __future__ import annotations

from engine.lab.columns import SnapshotColumns
from engine.lab.metrics import distribution, ideal_steps, jain_index, slo_met, summarize
from engine.core.request import FinishReason, Request, RequestStatus
from engine.sampling_params import SamplingParams
from engine.core.snapshot import StepSnapshot
from engine.lab.trace import TraceRequest


LANDMARKS = ("hole", "refusal", "preemption")  # what a lecture jumps to: the first step each happened in


def _happened(kind: str, snap: StepSnapshot) -> bool:
    """hole: a slot that ran nothing in the step while a request waited at the door (a slot a request left at the
    step's end is refilled by continuous batching in the next one: that is no hole); refusal: a request held back
    for memory (too few free blocks, or no run long enough) or turned away; preemption: a running request
    preempted."""
    if kind == "hole":
        return bool(snap.waiting) and len({b.slot for b in snap.batch if b.slot >= 0}) < len(snap.slots)
    if kind == "refusal":
        return bool(snap.rejected) or any(w.code in ("memory", "fragmentation") for w in snap.waits.values())
    return bool(snap.preempted)


class RunRecorder:
    def __init__(self, trace_requests: list[TraceRequest], max_num_seqs: int, max_num_batched_tokens: int):
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.snapshots = SnapshotColumns()  # a list of StepSnapshot, stored compactly
        self.requests: dict[str, Request] = {
            r.request_id: Request(r.request_id, list(r.prompt_token_ids), r.sampling_params, r.arrival_step,
                                  r.request_class, r.priority, r.slo, r.prompt) for r in trace_requests}
        self._tokens: list[int] = []  # cumulative tokens emitted, per frame
        self._busy: list[int] = []  # cumulative busy slot-steps
        self._seconds: list[float] = []  # cumulative step time
        self._preempted: list[int] = []
        self.firsts: dict[str, int] = {}  # LANDMARKS kind -> the frame (snapshot index) it first happened in

    def add(self, snap: StepSnapshot) -> None:
        step, start, end = snap.step, snap.time_s - snap.step_time_s, snap.time_s
        for rid, view in snap.requests.items():
            r = self.requests.get(rid) or self._from_view(view)
            r.num_preemptions, r.num_cached_tokens = view.num_preemptions, view.num_cached_tokens
            r.num_recomputed_tokens = view.num_recomputed_tokens
        for rid in [*snap.arrived, *snap.rejected]:
            self.requests[rid].arrival_time = start
        for rid in snap.admitted:
            r = self.requests[rid]
            if r.first_scheduled_step is None:
                r.first_scheduled_step, r.first_scheduled_time = step, start
        for rid, token in snap.emitted.items():
            self.requests[rid].append_token(token, step, end)
        for rid in [*snap.finished, *snap.rejected, *snap.aborted]:
            r, view = self.requests[rid], snap.requests[rid]
            r.status, r.finish_reason = RequestStatus.FINISHED, FinishReason(view.finish_reason)
            r.finish_step, r.finish_time = step, end
            r.error = snap.rejected.get(rid, r.error)
            coded = snap.rejection_codes.get(rid)
            if coded:
                r.error_code, r.error_params = coded.get("code"), dict(coded.get("params") or {})
        prev = len(self.snapshots) - 1
        self._tokens.append((self._tokens[prev] if prev >= 0 else 0) + len(snap.emitted))
        self._busy.append((self._busy[prev] if prev >= 0 else 0) + sum(1 for s in snap.slots if s))
        self._seconds.append((self._seconds[prev] if prev >= 0 else 0.0) + snap.step_time_s)
        self._preempted.append((self._preempted[prev] if prev >= 0 else 0) + len(snap.preempted))
        for kind in LANDMARKS:
            if kind not in self.firsts and _happened(kind, snap):
                self.firsts[kind] = prev + 1
        self.snapshots.append(snap)

    def _from_view(self, view) -> Request:
        """A request the trace did not list (snapshots-only trace): rebuild its shape from a view."""
        r = Request(view.request_id, [0] * view.num_prompt_tokens, SamplingParams(max_tokens=max(1, view.max_tokens)),
                    view.arrival_step, view.request_class, view.priority)
        self.requests[view.request_id] = r
        return r

    def summary(self) -> dict:
        snapshots = list(self.snapshots)  # rebuilt once: summarize passes over them a dozen times
        return summarize(list(self.requests.values()), snapshots, self.max_num_seqs, self.max_num_batched_tokens)

    def frame_metrics(self, i: int) -> dict:
        """The live panel at frame i: only what had happened by then, and every request that had arrived.
        One that has not had its first token (or not finished) counts with its time so far, a lower bound:
        `ttft_censored` (per class) and `unfinished` say how many figures are such bounds."""
        snap = self.snapshots[i]
        step, seconds = snap.step, self._seconds[i]
        by_class: dict[str, dict] = {}
        slowdowns, unfinished = [], 0
        for r in self.requests.values():
            if r.arrival_step > step:
                continue
            finished = r.finish_step is not None and r.finish_step <= step
            started = r.first_token_step is not None and r.first_token_step <= step
            if finished and not started:  # refused or aborted before a token: no latency, as in the run's summary
                continue
            d = by_class.setdefault(r.request_class, {"ttft_steps": [], "ttft_s": [], "slo": [], "censored": 0})
            if started:
                d["ttft_steps"].append(r.first_token_step - r.arrival_step + 1)
                if r.arrival_time is not None:
                    d["ttft_s"].append(r.first_token_time - r.arrival_time)
            else:  # its first token comes at the next step at the earliest
                d["censored"] += 1
                d["ttft_steps"].append(step + 1 - r.arrival_step + 1)
                if r.arrival_time is not None:
                    d["ttft_s"].append(snap.time_s - r.arrival_time)
            alone = max(1, ideal_steps(r.num_prompt_tokens, r.num_output_tokens, self.max_num_batched_tokens))
            if finished:
                met = slo_met(r)
                if met is not None:
                    d["slo"].append(met)
                slowdowns.append((r.finish_step - r.arrival_step + 1) / alone)
            else:
                unfinished += 1
                slowdowns.append((step + 1 - r.arrival_step + 1) / alone)
        classes = {}
        for cls, d in sorted(by_class.items()):
            steps, secs = distribution(d["ttft_steps"]), distribution(d["ttft_s"])
            classes[cls] = {"ttft_p50_steps": steps["p50"], "ttft_p95_steps": steps["p95"],
                            "ttft_p50_ms": _ms(secs["p50"]), "ttft_p95_ms": _ms(secs["p95"]),
                            "slo_attainment": sum(d["slo"]) / len(d["slo"]) if d["slo"] else None,
                            "num_first_tokens": len(d["ttft_steps"]) - d["censored"], "ttft_censored": d["censored"]}
        return {
            "step": step, "frames": len(self.snapshots), "seconds": seconds,
            "tokens": self._tokens[i], "tok_per_s": self._tokens[i] / seconds if seconds else None,
            "tok_per_step": self._tokens[i] / (i + 1),
            "queue": len(snap.waiting), "running": sum(1 for s in snap.slots if s),
            "slot_util_now": sum(1 for s in snap.slots if s) / len(snap.slots),
            "slot_util_mean": self._busy[i] / ((i + 1) * len(snap.slots)),
            "kv_util_now": snap.num_used_blocks / snap.num_blocks,
            "preemptions": self._preempted[i], "fairness_jain": jain_index(slowdowns), "unfinished": unfinished,
            "ttft_censored": sum(c["ttft_censored"] for c in classes.values()),
            "finished": sum(1 for r in self.requests.values() if r.finish_step is not None and r.finish_step <= step),
            "classes": classes,
        }


def _ms(seconds):
    return None if seconds is None else seconds * 1000
