"""OpenAI request bodies (the fields users send, plus vLLM's extensions) and OpenAI-style errors."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from engine import ConfigError, SamplingParams


class APIError(Exception):
    def __init__(self, status: int, message: str, type_: str = "BadRequestError", param: str | None = None,
                 headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.headers = status, message, type_, param, headers

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.status}}


class StreamOptions(BaseModel):
    include_usage: StrictBool = False


class _Sampling(BaseModel):
    model_config = ConfigDict(extra="ignore")  # clients send fields we do not use (user, logit_bias...)

    model: str | None = None
    max_tokens: StrictInt | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: StrictInt = 0  # vLLM: -1 or 0 mean off
    seed: StrictInt | None = None
    stop: str | list[str] | None = None
    n: StrictInt = 1
    stream: StrictBool = False
    stream_options: StreamOptions | None = None
    ignore_eos: StrictBool = False
    priority: StrictInt = 0  # vLLM's extension: lower runs first under --scheduling-policy priority

    @property
    def stop_strings(self) -> list[str]:
        return [self.stop] if isinstance(self.stop, str) else [s for s in (self.stop or []) if s]

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)

    def sampling_params(self, max_tokens: int) -> SamplingParams:
        if self.n != 1:
            raise APIError(400, f"n must be 1 on this server (got {self.n}): send one request per completion",
                           param="n")
        try:
            return SamplingParams(temperature=self.temperature, top_p=self.top_p, top_k=max(self.top_k, 0),
                                  max_tokens=max_tokens, seed=self.seed, ignore_eos=self.ignore_eos)
        except ConfigError as e:
            raise APIError(400, str(e)) from e


class CompletionRequest(_Sampling):
    prompt: str | list[StrictInt] | list[str]
    max_tokens: StrictInt | None = 16  # OpenAI's default for completions


class TextPart(BaseModel):
    type: Literal["text"]
    text: str


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "user", "assistant", "developer", "tool"]
    content: str | list[TextPart]

    def text(self) -> str:
        return self.content if isinstance(self.content, str) else "".join(p.text for p in self.content)


class ChatCompletionRequest(_Sampling):
    messages: list[ChatMessage] = Field(min_length=1)
    max_completion_tokens: StrictInt | None = None


def parse(model: type[BaseModel], data) -> BaseModel:
    """Validate a decoded JSON body; a wrong field becomes a 400 that names it."""
    if not isinstance(data, dict):
        raise APIError(400, f"the request body must be a JSON object, not {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise APIError(400, f"invalid field {field!r}: {first['msg']} (got {first.get('input')!r})"[:500],
                       param=field) from e
