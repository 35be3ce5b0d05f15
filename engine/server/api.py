"""The OpenAI-compatible HTTP API: /v1/completions, /v1/chat/completions, /v1/models, /health, /metrics.

Errors follow OpenAI's shape ({"error": {"message", "type", "param", "code"}}) with vLLM's statuses. As in vLLM's
api_server, the routes live on a module-level `router` and read the engine and its settings from `app.state`,
which `build_app` sets.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST

from engine.core.llm_engine import encode
from engine.server import edge, openapi
from engine.server.async_engine import AsyncEngine, EngineDead, Overloaded
from engine.server.edge import MAX_BODY_BYTES, read_json
from engine.server.generation import Generation
from engine.server.openapi import Health, body_and_errors
from engine.server.protocol import APIError, ChatCompletionRequest, CompletionRequest, parse

RETRY_AFTER = {"Retry-After": "1"}
log = logging.getLogger("engine.server")


@dataclass
class Reply:
    """One completion being answered: its id, the engine's stream of deltas (the first already read), the text so
    far, whether it is a chat completion, and the model name it is answered under."""
    id: str
    stream: object
    deltas: AsyncIterator
    first: object
    gen: Generation
    chat: bool
    model: str


router = APIRouter()  # the routes below; build_app includes it


def delta_error(delta) -> APIError:
    """A stream that ended with an error, as the API's error: refused 400, failed 500, the core gone 503."""
    if delta.status == 503:
        return APIError(503, delta.error, "ServiceUnavailableError", headers=RETRY_AFTER)
    if delta.status == 500:
        return APIError(500, delta.error, "InternalServerError")
    return APIError(400, f"request refused: {delta.error}", param="max_tokens" if "max_tokens" in delta.error else None)


def check_model(name: str | None, served_model_name: str) -> None:
    if name is not None and name != served_model_name:
        raise APIError(404, f"The model `{name}` does not exist. This server serves `{served_model_name}`.",
                       "NotFoundError", "model")


def prompt_ids(prompt, tokenizer, max_model_len: int) -> list[int]:
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], str):
        prompt = prompt[0]  # the schema allows a list of one
    ids = encode(tokenizer, prompt) if isinstance(prompt, str) else list(prompt)
    if not prompt or not ids:
        raise APIError(400, "the prompt is empty", param="prompt")
    if len(ids) > max_model_len:
        raise APIError(400, f"This model's maximum context length is {max_model_len} tokens. However, your "
                            f"prompt has {len(ids)} tokens: shorten it by {len(ids) - max_model_len}.",
                       param="prompt")
    if any(not 0 <= i < tokenizer.vocab_size for i in ids):
        raise APIError(400, f"token ids must be in [0, {tokenizer.vocab_size})", param="prompt")
    return ids


async def generate(request: Request, req, ids: list[int], max_tokens: int | None, chat: bool):
    """Submit to the engine and answer: the whole completion, or (with `stream`) server-sent events."""
    state = request.app.state
    engine: AsyncEngine = state.engine
    if max_tokens is None:  # OpenAI: no limit but the context
        max_tokens = max(1, state.max_model_len - len(ids))
    elif len(ids) + max_tokens > state.max_model_len:  # as vLLM answers: refused, not clamped
        field = "max_completion_tokens" if getattr(req, "max_completion_tokens", None) is not None else "max_tokens"
        raise APIError(400, f"This model's maximum context length is {state.max_model_len} tokens. However, you "
                            f"requested {len(ids) + max_tokens} tokens ({len(ids)} in the prompt, {max_tokens} in "
                            f"the completion): reduce {field} to at most {state.max_model_len - len(ids)}.",
                       param=field)
    params = req.sampling_params(max_tokens)
    try:
        stream = engine.submit(ids, params, req.priority)
    except (Overloaded, EngineDead) as e:
        raise APIError(503, str(e), "ServiceUnavailableError", headers=RETRY_AFTER) from e
    gen = Generation(state.tokenizer, params.stop, len(ids))
    deltas = stream.__aiter__()
    try:  # the first delta says whether the engine took the request: errors before any byte is sent
        first = await anext(deltas)
    except BaseException:
        engine.abort(stream.request_id)
        raise
    if first.error:
        raise delta_error(first)
    reply = Reply(("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex, stream, deltas, first, gen, chat,
                  state.served_model_name)
    if req.stream:
        return StreamingResponse(sse(engine, reply, req), media_type="text/event-stream")
    return await collect(request, engine, reply)


async def collect(request: Request, engine: AsyncEngine, reply: Reply) -> dict:
    request_id, gen = reply.stream.request_id, reply.gen
    watcher = asyncio.create_task(watch_disconnect(request, engine, request_id))
    try:
        delta = reply.first
        while True:
            if delta.error:
                raise delta_error(delta)
            gen.add(delta.token_ids, bool(delta.finish_reason))
            if delta.finish_reason or gen.finish_reason:
                break
            delta = await anext(reply.deltas)
    except BaseException:  # an error, a stop-string check that failed: this request alone ends
        engine.abort(request_id)
        raise
    finally:
        watcher.cancel()
    if gen.finish_reason:  # a stop string ended it before the engine did
        engine.abort(request_id)
    reason = gen.finish_reason or delta.finish_reason
    choice = ({"index": 0, "message": {"role": "assistant", "content": gen.text}, "logprobs": None,
               "finish_reason": reason} if reply.chat else
              {"index": 0, "text": gen.text, "logprobs": None, "finish_reason": reason})
    return {"id": reply.id, "object": "chat.completion" if reply.chat else "text_completion",
            "created": int(time.time()), "model": reply.model, "choices": [choice], "usage": gen.usage()}


async def watch_disconnect(request: Request, engine: AsyncEngine, request_id: str) -> None:
    while not await request.is_disconnected():
        await asyncio.sleep(0.1)
    engine.abort(request_id)


def sse_chunk(reply: Reply, created: int, piece: str | None, reason: str | None, role: bool = False) -> str:
    """One streamed chunk: the role first (chat), then a token's text, or only a finish reason."""
    if reply.chat:
        delta = {"role": "assistant", "content": ""} if role else {"content": piece} if piece is not None else {}
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
    else:
        choice = {"index": 0, "text": piece or "", "logprobs": None, "finish_reason": reason}
    body = {"id": reply.id, "object": "chat.completion.chunk" if reply.chat else "text_completion",
            "created": created, "model": reply.model, "choices": [choice]}
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


async def sse(engine: AsyncEngine, reply: Reply, req):
    gen, request_id = reply.gen, reply.stream.request_id
    created, finished = int(time.time()), False
    try:
        if reply.chat:
            yield sse_chunk(reply, created, None, None, role=True)
        delta = reply.first
        while True:
            if delta.error:
                yield f"data: {json.dumps(delta_error(delta).body())}\n\n"
                break
            reason = delta.finish_reason
            for i, token in enumerate(delta.token_ids):  # one chunk per token, as vLLM streams
                last = i == len(delta.token_ids) - 1
                piece = gen.add([token], bool(reason) and last)
                if gen.finish_reason:
                    reason = gen.finish_reason
                    break
                yield sse_chunk(reply, created, piece, reason if last else None)
            if reason and not delta.token_ids:  # finished with nothing new (aborted, say)
                yield sse_chunk(reply, created, "", reason)
            if gen.finish_reason:
                yield sse_chunk(reply, created, "", gen.finish_reason)
                engine.abort(request_id)
            if reason or gen.finish_reason:
                finished = True
                break
            delta = await anext(reply.deltas)
        if req.include_usage:
            usage = {"id": reply.id, "object": "chat.completion.chunk" if reply.chat else "text_completion",
                     "created": created, "model": reply.model, "choices": [], "usage": gen.usage()}
            yield f"data: {json.dumps(usage)}\n\n"
        yield "data: [DONE]\n\n"
    except Exception as e:  # headers are sent: the error goes in the stream, and only this stream ends
        log.exception("stream %s failed", reply.id)
        failure = APIError(500, f"internal error ({type(e).__name__}); see the server log", "InternalServerError")
        yield f"data: {json.dumps(failure.body())}\n\n"
    finally:  # the client went away (or we are done): an unfinished request is aborted, its blocks freed
        if not finished:
            engine.abort(request_id)


@router.post("/v1/completions", **body_and_errors(CompletionRequest))
async def completions(request: Request):
    state = request.app.state
    req = parse(CompletionRequest, await read_json(request, state.max_body_bytes))
    check_model(req.model, state.served_model_name)
    return await generate(request, req, prompt_ids(req.prompt, state.tokenizer, state.max_model_len),
                          req.max_tokens, chat=False)


@router.post("/v1/chat/completions", **body_and_errors(ChatCompletionRequest))
async def chat_completions(request: Request):
    state = request.app.state
    req = parse(ChatCompletionRequest, await read_json(request, state.max_body_bytes))
    check_model(req.model, state.served_model_name)
    messages = [{"role": m.role, "content": m.text()} for m in req.messages]
    prompt = state.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    return await generate(request, req, prompt_ids(prompt, state.tokenizer, state.max_model_len), req.output_limit,
                          chat=True)


@router.get("/v1/models")
async def models(request: Request):
    name = request.app.state.served_model_name
    return {"object": "list", "data": [{"id": name, "object": "model", "created": int(time.time()),
                                        "owned_by": "serving-lab", "root": name,
                                        "max_model_len": request.app.state.max_model_len}]}


@router.get("/health", response_model=None, responses={200: {"model": Health}, 503: {"model": Health}})
async def health(request: Request):
    """200 while the core answers; 503 (with what happened) once it has been silent for a second (a missed
    heartbeat) and while it is being restarted."""
    engine: AsyncEngine = request.app.state.engine
    body = engine.core.health()
    if engine.alive and body["status"] == "ok":
        return JSONResponse(body)
    return JSONResponse(body, status_code=503, headers=RETRY_AFTER)


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}},
                                                              "description": "Prometheus text, vLLM's names"}})
async def metrics(request: Request):
    return Response(request.app.state.engine.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)


@asynccontextmanager
async def lifespan(app: FastAPI):
    app.state.engine.start()
    yield
    app.state.engine.stop()


def build_app(engine: AsyncEngine, served_model_name: str, max_body_bytes: int = MAX_BODY_BYTES) -> FastAPI:
    """The app serving `engine` as `served_model_name`: its state, its refusals and schema, the routes above."""
    app = FastAPI(title="Serving Lab engine", lifespan=lifespan)
    app.state.engine = engine
    app.state.served_model_name = served_model_name
    app.state.tokenizer = engine.info.tokenizer
    app.state.max_model_len = engine.info.max_model_len
    app.state.max_body_bytes = max_body_bytes
    edge.install(app)
    openapi.install(app)
    app.include_router(router)
    return app
