"""The HTTP/1.1 protocol the API is served with (`engine serve` and ServerThread): uvicorn's httptools protocol,
which answers pipelined requests in order, with a lost connection told to every request it holds."""
from __future__ import annotations

import asyncio

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # no httptools (requirements.txt pins it): h11 parses one request at a time, so its `cycle`
    HTTP_PROTOCOL: type[asyncio.Protocol] | str = "h11"  # is always the one being answered and needs no help
else:
    class PipelinedHttpToolsProtocol(HttpToolsProtocol):
        """uvicorn's httptools protocol, whose lost connection (a client gone, or one that shut its side after
        writing pipelined requests) reaches the request being answered, not only the last one parsed."""

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.open_cycles: list = []  # this connection's requests not yet answered, oldest first

        def on_headers_complete(self) -> None:
            before = self.cycle
            super().on_headers_complete()
            if self.cycle is not before:
                self.open_cycles = [c for c in self.open_cycles if not c.response_complete] + [self.cycle]

        def connection_lost(self, exc: Exception | None) -> None:
            # uvicorn marks only `self.cycle` disconnected: with requests pipelined behind it, that is the last
            # one queued, so the one being answered would generate for nobody to the end, then write to the
            # closed transport (uvloop raises: an 'unhandled error' traceback and a 500 for nobody). Marked here,
            # its receive() says http.disconnect, the route aborts it in the engine, and its send() is a no-op.
            for cycle in self.open_cycles:
                if not cycle.response_complete:
                    cycle.disconnected = True
                    cycle.message_event.set()
            self.pipeline.clear()  # never started: nobody to answer
            super().connection_lost(exc)

    HTTP_PROTOCOL = PipelinedHttpToolsProtocol
