"""Traces: a run's requests (and optionally its step snapshots) as JSON Lines.

    {"kind": "header", "version": 1, "model": "tiny", "engine_config": {...}}
    {"kind": "request", "request_id": "r0", "prompt_token_ids": [...], "arrival_step": 0, ...}
    {"kind": "snapshot", "step": 0, ...}

Replaying the requests reproduces a run's step-based figures; the snapshots alone are enough
to replay the animation on a laptop with no model loaded. Reading checks every field and names
the line of the first problem.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Iterable

from engine.json_input import JSONInputError, loads
from engine.lab.columns import SnapshotColumns
from engine.messages import EngineError
from engine.core.request import SLO, Request, ServiceClass
from engine.sampling_params import SamplingParams
from engine.core.snapshot import StepSnapshot

if TYPE_CHECKING:
    from engine.core.llm_engine import LLMEngine

VERSION = 1
MAX_TRACE_BYTES = 64 * 1024 * 1024
MAX_REQUESTS = 20_000
MAX_PROMPT_TOKENS = 1_000_000
MAX_ARRIVAL_STEP = 100_000  # run_requests' step limit: a request arriving later could never run
MAX_INT = 2 ** 31 - 1  # priorities and SLOs beyond it mean nothing
MAX_NAME_CHARS = 256


class TraceError(EngineError):
    """A trace that cannot be used; the message names the line and the problem."""


@dataclass
class TraceRequest:
    request_id: str
    prompt_token_ids: list[int]
    sampling_params: SamplingParams
    arrival_step: int = 0
    request_class: str = "default"
    priority: int = 0
    slo: SLO = field(default_factory=SLO)
    prompt: str | None = None

    def add_to(self, engine: LLMEngine) -> Request:
        """This request, queued in `engine` as it was recorded (its id, arrival, class, priority, SLO)."""
        return engine.add_request(self.prompt_token_ids, self.sampling_params, request_id=self.request_id,
                                  arrival_step=self.arrival_step, priority=self.priority,
                                  service=ServiceClass(self.request_class, self.slo))

    def to_dict(self) -> dict:
        return {"kind": "request", "request_id": self.request_id, "prompt": self.prompt,
                "prompt_token_ids": self.prompt_token_ids, "arrival_step": self.arrival_step,
                "request_class": self.request_class, "priority": self.priority, "slo": asdict(self.slo),
                "sampling_params": asdict(self.sampling_params)}


@dataclass
class Trace:
    header: dict
    requests: list[TraceRequest]
    snapshots: list[StepSnapshot]


def packed(trace: Trace) -> Trace:
    """The same trace with its steps packed into columns (engine.lab.columns): a fraction of the parsed
    snapshots' memory, for a session that keeps an upload."""
    columns = SnapshotColumns(trace.snapshots)
    columns.freeze()
    return Trace(trace.header, trace.requests, columns)


def write_trace(out: IO[str] | str | Path, header: dict, requests: Iterable[TraceRequest],
                snapshots: Iterable[StepSnapshot] = ()) -> None:
    if isinstance(out, (str, Path)):
        with open(out, "w", encoding="utf-8") as f:
            return write_trace(f, header, requests, snapshots)
    out.write(json.dumps({"kind": "header", "version": VERSION, **header}) + "\n")
    for r in requests:
        out.write(json.dumps(r.to_dict()) + "\n")
    for s in snapshots:
        out.write(json.dumps({"kind": "snapshot", **s.to_dict()}) + "\n")


def read_trace(source: str | Path | bytes) -> Trace:
    """Parse and validate a trace from a path or from raw bytes (an upload)."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise TraceError("trace.no_file", path=str(path))
        if path.stat().st_size > MAX_TRACE_BYTES:
            raise TraceError("trace.too_big", mb=path.stat().st_size / 1e6, limit_mib=MAX_TRACE_BYTES // 2**20)
        source = path.read_bytes()
    if len(source) > MAX_TRACE_BYTES:
        raise TraceError("trace.too_big", mb=len(source) / 1e6, limit_mib=MAX_TRACE_BYTES // 2**20)
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TraceError("trace.not_utf8", byte=e.start) from None

    header, requests, snapshots, ids = None, [], [], set()
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:  # bounded: no NaN, no nesting past MAX_JSON_DEPTH, no integer past Python's digit limit
            obj = loads(line)
        except JSONInputError as e:
            raise TraceError("trace.bad_json", line=lineno, column=e.column or 1) from None  # not e.detail: English
        if not isinstance(obj, dict):
            raise TraceError("trace.not_object", line=lineno, type=type(obj).__name__)
        kind = obj.get("kind")
        if kind == "header":
            if header is not None:
                raise TraceError("trace.second_header", line=lineno)
            if obj.get("version") != VERSION:
                raise TraceError("trace.version", line=lineno, version=obj.get("version"), expected=VERSION)
            header = obj
        elif kind == "request":
            req = _parse_request(obj, lineno)
            if req.request_id in ids:
                raise TraceError("trace.duplicate_id", line=lineno, request_id=req.request_id)
            ids.add(req.request_id)
            requests.append(req)
            if len(requests) > MAX_REQUESTS:
                raise TraceError("trace.too_many", line=lineno, limit=MAX_REQUESTS)
        elif kind == "snapshot":
            try:
                snapshots.append(StepSnapshot.from_dict({k: v for k, v in obj.items() if k != "kind"}))
            except (TypeError, KeyError, AttributeError, ValueError, OverflowError, IndexError) as e:
                raise TraceError("trace.bad_snapshot", line=lineno, detail=str(e)) from None
        else:
            raise TraceError("trace.unknown_kind", line=lineno, kind=kind)
    if header is None:
        raise TraceError("trace.no_header")
    if not requests and not snapshots:
        raise TraceError("trace.empty")
    return Trace(header, requests, snapshots)


def _parse_request(obj: dict, lineno: int) -> TraceRequest:
    rid = obj.get("request_id")

    def fail(code, **params):
        raise TraceError(code, line=lineno, request_id=rid, **params)

    if not isinstance(rid, str) or not rid:
        fail("trace.request_id")
    ids = obj.get("prompt_token_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(t, int) and not isinstance(t, bool)
                                                       and 0 <= t <= MAX_INT for t in ids):
        fail("trace.prompt_ids")
    if len(ids) > MAX_PROMPT_TOKENS:
        fail("trace.prompt_too_long", n=len(ids), limit=MAX_PROMPT_TOKENS)
    arrival = obj.get("arrival_step", 0)
    if not isinstance(arrival, int) or isinstance(arrival, bool) or not 0 <= arrival <= MAX_ARRIVAL_STEP:
        fail("trace.arrival_step", limit=MAX_ARRIVAL_STEP)
    priority = obj.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool) or abs(priority) > MAX_INT:
        fail("trace.priority")
    cls = obj.get("request_class", "default")
    if not isinstance(cls, str) or len(cls) > MAX_NAME_CHARS:
        fail("trace.request_class")
    prompt = obj.get("prompt")
    if prompt is not None and not isinstance(prompt, str):
        fail("trace.prompt")
    params, slo = obj.get("sampling_params") or {}, obj.get("slo") or {}
    if not isinstance(params, dict) or not isinstance(slo, dict):
        fail("trace.params_not_objects")
    try:
        params = SamplingParams(**params)  # the bounds every door shares (engine/sampling_params.py)
        slo = SLO(**slo)
    except (TypeError, ValueError) as e:
        fail("trace.request_invalid", detail=e.message if isinstance(e, EngineError) else str(e)[:200])
    for name, value in vars(slo).items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or not 0 <= value <= MAX_INT
                                  or (name.endswith("_steps") and not isinstance(value, int))):
            fail("trace.slo_value", name=name, limit=MAX_INT)
    return TraceRequest(rid, ids, params, arrival, cls, priority, slo, prompt)
