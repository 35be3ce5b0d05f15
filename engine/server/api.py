"""The OpenAI-compatible HTTP API: /v1/completions, /v1/chat/completions, /v1/models, /health, /metrics.

Errors follow OpenAI's shape ({"error": {"message", "type", "param", "code"}}) with vLLM's statuses.
"""
from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST

from engine.core.llm_engine import encode
from engine.server.async_engine import AsyncEngine, EngineDead, Overloaded
from engine.server.protocol import APIError, ChatCompletionRequest, CompletionRequest, parse

MAX_BODY_BYTES = 1 << 20


class Generation:
    """One request's text as it grows: incremental detokenization and stop strings."""

    def __init__(self, tokenizer, stop: list[str]):
        self.tokenizer, self.stop = tokenizer, stop
        self.token_ids: list[int] = []
        self.text = ""  # handed to the client so far
        self.finish_reason: str | None = None
        self.num_prompt_tokens = 0

    def add(self, token_ids: list[int], final: bool) -> str:
        """The next piece of text to send (a piece that ends inside a UTF-8 character waits)."""
        self.token_ids += token_ids
        full = self.tokenizer.decode(self.token_ids)
        for s in self.stop:
            at = full.find(s, max(0, len(self.text) - len(s)))
            if at >= 0:
                full, self.finish_reason = full[:at], "stop"
                final = True
        if not final and full.endswith("\ufffd"):
            return ""
        piece, self.text = full[len(self.text):], full
        return piece

    def usage(self) -> dict:
        n = len(self.token_ids)
        return {"prompt_tokens": self.num_prompt_tokens, "completion_tokens": n,
                "total_tokens": self.num_prompt_tokens + n}


@dataclass
class Reply:
    """One completion being answered: its id, the engine's stream of deltas (the first already read), the text so
    far, and whether it is a chat completion."""
    id: str
    stream: object
    deltas: AsyncIterator
    first: object
    gen: Generation
    chat: bool


def build_app(engine: AsyncEngine, served_model_name: str, max_body_bytes: int = MAX_BODY_BYTES) -> FastAPI:
    tokenizer = engine.info.tokenizer
    max_model_len = engine.info.max_model_len

    @asynccontextmanager
    async def lifespan(app):
        engine.start()
        yield
        engine.stop()

    app = FastAPI(title="Serving Lab engine", lifespan=lifespan)
    app.state.engine = engine

    @app.exception_handler(APIError)
    async def api_error(request, e: APIError):
        return JSONResponse(e.body(), status_code=e.status, headers=e.headers)

    async def read_json(request: Request):
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > max_body_bytes:
            raise APIError(413, f"the request body is {declared} bytes; this server takes at most {max_body_bytes}",
                           "RequestEntityTooLarge")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > max_body_bytes:
                raise APIError(413, f"the request body is over {max_body_bytes} bytes", "RequestEntityTooLarge")
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise APIError(400, f"the request body is not valid JSON: {e}") from e

    def check_model(name: str | None) -> None:
        if name is not None and name != served_model_name:
            raise APIError(404, f"The model `{name}` does not exist. This server serves `{served_model_name}`.",
                           "NotFoundError", "model")

    def prompt_ids(prompt) -> list[int]:
        if isinstance(prompt, list) and prompt and isinstance(prompt[0], str):
            if len(prompt) != 1:
                raise APIError(400, f"send one prompt per request (got a list of {len(prompt)})", param="prompt")
            prompt = prompt[0]
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
        if max_tokens is None:
            max_tokens = max(1, max_model_len - len(ids))
        if max_tokens < 1:
            raise APIError(400, f"max_tokens must be at least 1 (got {max_tokens})", param="max_tokens")
        params = req.sampling_params(max_tokens)
        try:
            stream = engine.submit(ids, params, req.priority)
        except Overloaded as e:
            raise APIError(503, str(e), "ServiceUnavailableError", headers={"Retry-After": "1"}) from e
        except EngineDead as e:
            raise APIError(503, str(e), "ServiceUnavailableError") from e
        gen = Generation(tokenizer, req.stop_strings)
        gen.num_prompt_tokens = len(ids)
        deltas = stream.__aiter__()
        try:  # the first delta says whether the engine took the request: errors before any byte is sent
            first = await anext(deltas)
        except BaseException:
            engine.abort(stream.request_id)
            raise
        if first.error:
            raise APIError(400, f"request refused: {first.error}",
                           param="max_tokens" if "max_tokens" in first.error else None)
        reply = Reply(("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex, stream, deltas, first, gen, chat)
        if req.stream:
            return StreamingResponse(sse(reply, req), media_type="text/event-stream")
        return await collect(request, reply)

    async def collect(request, reply: Reply):
        stream, deltas, first, gen, rid, chat = (reply.stream, reply.deltas, reply.first, reply.gen, reply.id,
                                                 reply.chat)
        watcher = asyncio.create_task(watch_disconnect(request, stream.request_id))
        try:
            delta = first
            while True:
                gen.add(delta.token_ids, bool(delta.finish_reason))
                if delta.error:
                    raise APIError(500, delta.error, "InternalServerError")
                if delta.finish_reason or gen.finish_reason:
                    break
                delta = await anext(deltas)
        finally:
            watcher.cancel()
        if gen.finish_reason:  # a stop string ended it before the engine did
            engine.abort(stream.request_id)
        reason = gen.finish_reason or delta.finish_reason
        choice = ({"index": 0, "message": {"role": "assistant", "content": gen.text}, "logprobs": None,
                   "finish_reason": reason} if chat else
                  {"index": 0, "text": gen.text, "logprobs": None, "finish_reason": reason})
        return {"id": rid, "object": "chat.completion" if chat else "text_completion", "created": int(time.time()),
                "model": served_model_name, "choices": [choice], "usage": gen.usage()}

    async def watch_disconnect(request: Request, request_id: str):
        while not await request.is_disconnected():
            await asyncio.sleep(0.1)
        engine.abort(request_id)

    async def sse(reply: Reply, req):
        stream, deltas, first, gen, rid, chat = (reply.stream, reply.deltas, reply.first, reply.gen, reply.id,
                                                 reply.chat)
        created, finished = int(time.time()), False
        obj = "chat.completion.chunk" if chat else "text_completion"

        def chunk(piece: str | None, reason: str | None, role: bool = False) -> str:
            if chat:
                delta = ({"role": "assistant", "content": ""} if role
                         else {"content": piece} if piece is not None else {})
                choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
            else:
                choice = {"index": 0, "text": piece or "", "logprobs": None, "finish_reason": reason}
            body = {"id": rid, "object": obj, "created": created, "model": served_model_name, "choices": [choice]}
            return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

        try:
            if chat:
                yield chunk(None, None, role=True)
            delta = first
            while True:
                if delta.error:
                    yield f"data: {json.dumps(APIError(500, delta.error, 'InternalServerError').body())}\n\n"
                    break
                reason = delta.finish_reason
                for i, token in enumerate(delta.token_ids):  # one chunk per token, as vLLM streams
                    last = i == len(delta.token_ids) - 1
                    piece = gen.add([token], bool(reason) and last)
                    if gen.finish_reason:
                        reason = gen.finish_reason
                        break
                    yield chunk(piece, reason if last else None)
                if reason and not delta.token_ids:  # finished with nothing new (aborted, say)
                    yield chunk("", reason)
                if gen.finish_reason:
                    yield chunk("", gen.finish_reason)
                    engine.abort(stream.request_id)
                if reason or gen.finish_reason:
                    finished = True
                    break
                delta = await anext(deltas)
            if req.include_usage:
                usage = {"id": rid, "object": obj, "created": created, "model": served_model_name, "choices": [],
                         "usage": gen.usage()}
                yield f"data: {json.dumps(usage)}\n\n"
            yield "data: [DONE]\n\n"
        finally:  # the client went away (or we are done): an unfinished request is aborted, its blocks freed
            if not finished:
                engine.abort(stream.request_id)

    @app.post("/v1/completions")
    async def completions(request: Request):
        req = parse(CompletionRequest, await read_json(request))
        check_model(req.model)
        return await generate(request, req, prompt_ids(req.prompt), req.max_tokens, chat=False)

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request):
        req = parse(ChatCompletionRequest, await read_json(request))
        check_model(req.model)
        messages = [{"role": m.role, "content": m.text()} for m in req.messages]
        ids = prompt_ids(tokenizer.apply_chat_template(messages, add_generation_prompt=True))
        return await generate(request, req, ids, req.max_completion_tokens or req.max_tokens, chat=True)

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": served_model_name, "object": "model", "created": int(time.time()),
                                            "owned_by": "serving-lab", "root": engine.info.source,
                                            "max_model_len": max_model_len}]}

    @app.get("/health")
    async def health():
        return Response(status_code=200 if engine.alive else 503)

    @app.get("/metrics")
    async def metrics():
        return Response(engine.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

    return app
