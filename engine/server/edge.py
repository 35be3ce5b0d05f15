"""What every request passes before a route: header size, content type, body size, JSON; and every refusal,
ours or Starlette's (404, 405) or a bug's (500), in OpenAI's error shape with a JSON body.

Content-Type must be application/json: a web page may POST text/plain or a form to 127.0.0.1 without a CORS
preflight, so accepting those would let any page a student opens make their local server work.
"""
from __future__ import annotations

import logging
import traceback

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from engine.json_input import MAX_JSON_DEPTH, JSONInputError, loads
from engine.server.protocol import APIError

MAX_BODY_BYTES = 1 << 20
MAX_HEADER_BYTES = 32 * 1024  # all request headers together; h11's own limit is 16 KiB, httptools has none
HTTP_TYPES = {404: "NotFoundError", 405: "MethodNotAllowed", 413: "RequestEntityTooLarge",
              415: "UnsupportedMediaType", 431: "RequestHeaderFieldsTooLarge"}
log = logging.getLogger("engine.server")


def error_response(e: APIError) -> JSONResponse:
    return JSONResponse(e.body(), status_code=e.status, headers=e.headers)


class HeaderLimit:
    """ASGI middleware: a request whose headers are over MAX_HEADER_BYTES gets 431 before any route runs."""

    def __init__(self, app, max_bytes: int = MAX_HEADER_BYTES):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            size = sum(len(k) + len(v) + 4 for k, v in scope["headers"])
            if size > self.max_bytes:
                response = error_response(APIError(431, f"the request headers are {size} bytes; this server "
                                                        f"takes at most {self.max_bytes}", HTTP_TYPES[431]))
                return await response(scope, receive, send)
        await self.app(scope, receive, send)


def install(app: FastAPI) -> None:
    app.add_middleware(HeaderLimit)

    @app.exception_handler(APIError)
    async def api_error(request, e: APIError):
        return error_response(e)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request, e: StarletteHTTPException):
        return error_response(APIError(e.status_code, str(e.detail), HTTP_TYPES.get(e.status_code, "BadRequestError"),
                                       headers=getattr(e, "headers", None)))

    @app.exception_handler(Exception)
    async def server_error(request, e: Exception):  # a bug: logged, and still an answer in the API's shape
        log.error("unhandled error on %s: %s", request.url.path, "".join(traceback.format_exception(e)))
        return error_response(APIError(500, f"internal error ({type(e).__name__}); see the server log",
                                       "InternalServerError"))


async def read_json(request: Request, max_body_bytes: int):
    """The request's JSON body, or an APIError: 415 unless it is declared application/json, 413 over the limit,
    400 when it is not JSON (nested beyond MAX_JSON_DEPTH, an integer beyond Python's limit, NaN, a lone
    surrogate, bytes that are not UTF-8)."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise APIError(415, f"Content-Type must be application/json (got {media_type or 'none'!r})",
                       HTTP_TYPES[415], param="Content-Type")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_body_bytes:
        raise APIError(413, f"the request body is {declared} bytes; this server takes at most {max_body_bytes}",
                       HTTP_TYPES[413])
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > max_body_bytes:
                raise APIError(413, f"the request body is over {max_body_bytes} bytes; this server takes at most "
                                    f"{max_body_bytes}", HTTP_TYPES[413])
    except ClientDisconnect:  # an everyday event on a busy room's server: one line, not a traceback
        log.info("a client disconnected before sending its whole body to %s (%d of %s bytes)", request.url.path,
                 len(body), declared or "?")
        raise APIError(400, "the client disconnected before its body was complete") from None
    try:
        return loads(bytes(body))
    except JSONInputError as e:
        where = f" at column {e.column}" if e.column else ""
        hint = f" (JSON nested deeper than {MAX_JSON_DEPTH} is refused)" if "recursion" in e.detail else ""
        raise APIError(400, f"the request body is not valid JSON{where}: {e.detail}{hint}") from None
