"""The server's OpenAPI schema states what it takes and what it answers, refusals included.

The routes read their bodies themselves (edge.read_json: the bounded parser, 415 for another Content-Type),
so FastAPI would document no body; the request models are declared here instead, with every bound, and the
answers as models the fuzzer checks each response against (tests/test_server_fuzz.py).
"""
from __future__ import annotations

from typing import Literal

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from engine.server.protocol import ChatCompletionRequest, CompletionRequest, ErrorResponse

REFUSALS = {400: "A field is wrong or out of bounds (`param` names it), or the body is not JSON",
            404: "Another model than this server's", 413: "The body is over --max-body-bytes",
            415: "Content-Type is not application/json", 431: "The request headers are too large",
            503: "The waiting queue is full, or the engine core is restarting (see Retry-After)"}


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class CompletionChoice(BaseModel):
    index: int
    text: str
    logprobs: None
    finish_reason: Literal["stop", "length", "abort"] | None


class CompletionResponse(BaseModel):
    id: str
    object: Literal["text_completion"]
    created: int
    model: str
    choices: list[CompletionChoice]
    usage: Usage


class AssistantMessage(BaseModel):
    role: Literal["assistant"]
    content: str


class ChatChoice(BaseModel):
    index: int
    message: AssistantMessage
    logprobs: None
    finish_reason: Literal["stop", "length", "abort"] | None


class ChatCompletionResponse(BaseModel):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[ChatChoice]
    usage: Usage


class Health(BaseModel):
    status: Literal["ok", "silent", "restarting", "stopped"]
    restarts: int
    last_failure: str | None
    last_restart_s: float | None
    core_pid: int | None


# one server-sent event: `data:` holds a chunk's JSON, or [DONE]
SSE_EVENT = {"type": "object", "required": ["data"],
             "properties": {"data": {"type": "string"}, "event": {"type": "string"}}}
ANSWERS = {CompletionRequest: CompletionResponse, ChatCompletionRequest: ChatCompletionResponse}
REQUEST_MODELS = (CompletionRequest, ChatCompletionRequest)


def refusals(*statuses: int) -> dict:
    return {status: {"model": ErrorResponse, "description": REFUSALS[status]} for status in statuses}


def body_and_errors(request_model: type[BaseModel]) -> dict:
    """A completion route's keywords: its JSON body, its answer (JSON, or server-sent events), its refusals."""
    answer = ANSWERS[request_model]
    return {
        "openapi_extra": {"requestBody": {"required": True, "content": {"application/json": {
            "schema": {"$ref": f"#/components/schemas/{request_model.__name__}"}}}}},
        "response_model": None,
        "responses": {200: {"model": answer, "description": "The completion; with `stream`, server-sent events",
                            "content": {"text/event-stream": {"schema": SSE_EVENT}}},
                      **refusals(400, 404, 413, 415, 431, 503)},
    }


def install(app: FastAPI) -> None:
    """Add the request models (and the models they refer to) to the schema's components."""
    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for model in REQUEST_MODELS:
                found = model.model_json_schema(ref_template="#/components/schemas/{model}")
                components.update(found.pop("$defs", {}))
                components[model.__name__] = found
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi
