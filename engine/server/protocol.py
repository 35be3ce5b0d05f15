"""OpenAI request bodies (the fields users send, plus vLLM's extensions) and OpenAI-style errors.

Every field is bounded here with engine.sampling_params' bounds, so the OpenAPI schema states them (the
fuzzer in tests/test_server_fuzz.py generates from it) and a refusal names the field before the engine
sees anything. SamplingParams checks the same bounds again: one schema, two locks.
"""
from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from engine.messages import ConfigError
from engine.sampling_params import SamplingParams
from engine.sampling_params import MAX_STOP_LEN, MAX_STOP_STRINGS, SEED_MAX, SEED_MIN

MAX_PROMPT_CHARS = 1 << 18  # 256 Ki characters: far beyond any context this engine serves
MAX_PROMPT_TOKEN_IDS = 1 << 16
MAX_MESSAGES = 256
MAX_CONTENT_PARTS = 64
MAX_NAME_CHARS = 256
INT32 = 2 ** 31 - 1


class APIError(Exception):
    def __init__(self, status: int, message: str, type_: str = "BadRequestError", param: str | None = None,
                 headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.headers = status, message, type_, param, headers

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.status}}


class ErrorInfo(BaseModel):
    message: str
    type: str
    param: str | None
    code: int


class ErrorResponse(BaseModel):
    """OpenAI's error shape, as every refusal of this server is sent (documented in the OpenAPI schema)."""
    error: ErrorInfo


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")
    include_usage: StrictBool = False


StopString = Annotated[StrictStr, Field(max_length=MAX_STOP_LEN)]


class _Sampling(BaseModel):
    # clients send fields we do not use (user, logit_bias...); NaN and Infinity are never a value
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)

    model: Annotated[StrictStr, Field(max_length=MAX_NAME_CHARS)] | None = None
    max_tokens: Annotated[StrictInt, Field(ge=1, le=INT32)] | None = None
    temperature: Annotated[float, Field(ge=0)] = 1.0
    top_p: Annotated[float, Field(gt=0, le=1)] = 1.0
    top_k: Annotated[StrictInt, Field(ge=-1, le=INT32)] | None = None  # vLLM: -1 or 0 mean off
    seed: Annotated[StrictInt, Field(ge=SEED_MIN, le=SEED_MAX)] | None = None
    stop: StopString | Annotated[list[StopString], Field(max_length=MAX_STOP_STRINGS)] | None = None
    n: StrictInt = 1
    stream: StrictBool = False
    stream_options: StreamOptions | None = None
    ignore_eos: StrictBool = False
    priority: Annotated[StrictInt, Field(ge=-INT32, le=INT32)] = 0  # vLLM's: lower runs first (priority policy)

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)

    def sampling_params(self, max_tokens: int) -> SamplingParams:
        if self.n != 1:
            raise APIError(400, f"n must be 1 on this server (got {self.n}): send one request per completion",
                           param="n")
        try:
            return SamplingParams(temperature=self.temperature, top_p=self.top_p, top_k=self.top_k or 0,
                                  max_tokens=max_tokens, seed=self.seed, ignore_eos=self.ignore_eos,
                                  stop=self.stop or ())
        except ConfigError as e:  # the same bounds as above: only reached by a value the model let through
            raise APIError(400, str(e), param=(e.code or "").removeprefix("sampling.") or None) from e


class CompletionRequest(_Sampling):
    prompt: (Annotated[StrictStr, Field(max_length=MAX_PROMPT_CHARS)]
             | Annotated[list[Annotated[StrictInt, Field(ge=0, le=INT32)]], Field(max_length=MAX_PROMPT_TOKEN_IDS)]
             | Annotated[list[Annotated[StrictStr, Field(max_length=MAX_PROMPT_CHARS)]], Field(max_length=1)])
    max_tokens: Annotated[StrictInt, Field(ge=1, le=INT32)] | None = 16  # OpenAI's default for completions


class TextPart(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: Literal["text"]
    text: Annotated[StrictStr, Field(max_length=MAX_PROMPT_CHARS)]


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "user", "assistant", "developer", "tool"]
    content: (Annotated[StrictStr, Field(max_length=MAX_PROMPT_CHARS)]
              | Annotated[list[TextPart], Field(max_length=MAX_CONTENT_PARTS)])

    def text(self) -> str:
        return self.content if isinstance(self.content, str) else "".join(p.text for p in self.content)


class ChatCompletionRequest(_Sampling):
    messages: Annotated[list[ChatMessage], Field(min_length=1, max_length=MAX_MESSAGES)]
    # OpenAI's newer name for max_tokens in chat; when both are sent, it wins
    max_completion_tokens: Annotated[StrictInt, Field(ge=1, le=INT32)] | None = None

    @property
    def output_limit(self) -> int | None:
        return self.max_completion_tokens if self.max_completion_tokens is not None else self.max_tokens


_UNION_MEMBER = re.compile(r"^(str|int|float|bool|none)$|[\[\-]")  # "str", "list[int]", "constrained-str"


def field_name(loc: tuple) -> str | None:
    """A pydantic error location as the client's field path ("messages.0.role"), without the union member
    pydantic names in it ("prompt.str")."""
    parts = [str(p) for p in loc if not (isinstance(p, str) and _UNION_MEMBER.search(p))]
    return ".".join(parts) or None


def most_telling(errors: list[dict]) -> dict:
    """Of a union's errors, the one that says most: a bound broken (too long, too big) over "not a string" from
    the alternative the value was never meant for."""
    return min(errors, key=lambda e: (e["type"].endswith("_type"), -len(e["loc"])))


# OpenAI parameters this server does not implement, with the values that ask for nothing: any other value is
# refused by name rather than silently ignored
UNSUPPORTED = {"echo": (None, False), "logprobs": (None, False), "top_logprobs": (None, 0), "best_of": (None, 1),
               "logit_bias": (None, {}), "suffix": (None, "")}


def parse(model: type[BaseModel], data) -> BaseModel:
    """Validate a decoded JSON body; a wrong field becomes a 400 that names it, and so does a parameter this
    server does not implement."""
    if not isinstance(data, dict):
        raise APIError(400, f"the request body must be a JSON object, not {type(data).__name__}")
    for name, neutral in UNSUPPORTED.items():
        value = data.get(name)
        if not any(value == n and type(value) is type(n) for n in neutral):
            shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
            raise APIError(400, f"{name} is not supported by this server (got {shown}): leave it out", param=name)
    try:
        return model.model_validate(data)
    except ValidationError as e:
        first = most_telling(e.errors(include_url=False))
        field = field_name(first["loc"])
        shown = repr(first.get("input"))
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise APIError(400, f"invalid field {field!r}: {first['msg']} (got {shown})", param=field) from e
