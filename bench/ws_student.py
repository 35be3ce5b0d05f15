"""A student's session over Streamlit's own websocket, as a browser holds one, drawing nothing.

The classroom benchmark (bench/classroom_load.py) uses it to put forty real sessions on one
`python -m ui.serve` server without forty browsers on the same two cores: each student connects to
`/_stcore/stream`, asks for a page, clicks buttons by their label (a widget trigger, as a browser
sends), keeps the fragment timers the server asks for (`auto_rerun`, as the browser's player does) and
notes when the page's frame counter shows a frame, and fetches the frame files the page names (what a
browser playing a run in itself fetches, ui/playback/frame_files.py). The server does for it exactly what it does
for a browser; only the drawing is left out.
"""
from __future__ import annotations

import asyncio
import re
import time

import httpx
import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

FRAME = re.compile(r'class="lab-frame-value">(\d+) / (\d+)')
ANIMATED = 'data-anim="'  # a view that animates itself in the browser (ui/playback/client_player.py)
FRAME_FILE = re.compile(r'/component/[^"\\]+?\.json\.gz')  # its frames' file, in a view or a chart's arguments


class Student:
    """`cookies`: sent with the websocket and every fetch (a balancer's sticky-session cookie pins the student to a
    replica). `watch`: name -> a pattern; `seen[name]` is when a markdown element matching it was first drawn."""

    def __init__(self, url: str, page: str, query: str = "lang=en", cookies: dict[str, str] | None = None,
                 watch: dict[str, re.Pattern] | None = None):
        self.ws_url = url.replace("http", "ws", 1) + "/_stcore/stream"
        self.cookie = "; ".join(f"{k}={v}" for k, v in (cookies or {}).items())
        self.http = httpx.AsyncClient(base_url=url, timeout=120, headers={"Cookie": self.cookie} if cookies else None)
        self.watch, self.seen = watch or {}, {}
        self.inputs: dict[str, str] = {}  # text input label -> widget id, as last drawn
        # what this student typed (widget id -> text), sent with every rerun as a browser sends its widgets' values:
        # a rerun the server merges with a pending one takes the later one's values
        self.typed: dict[str, str] = {}
        self.fragment_of: dict[str, str] = {}  # widget id -> the fragment that drew it (a form in a fragment)
        self.fetched: dict[str, int] = {}  # frame file URL -> bytes received (fetched once, as a browser keeps it)
        self._fetches: set[asyncio.Task] = set()
        self.page, self.query = page, query
        self.buttons: dict[str, str] = {}  # label -> widget id, as last drawn
        self.selects: dict[str, str] = {}  # select box label -> widget id
        self.frames: list[tuple[float, int]] = []  # (when, frame) for every frame counter the server drew
        self.animated_at: float | None = None  # when a view that plays in the browser arrived
        self.computing = True  # the last frame counter drawn said its runs were still being computed ("…")
        self.errors: list[str] = []
        self.page_runs = self.fragment_runs = 0  # script runs the server finished for this student
        self._cached: dict[str, ForwardMsg] = {}
        self._timers: dict[str, asyncio.Task] = {}  # fragment id -> its auto-rerun loop
        self._defined: set[str] = set()  # fragments that asked for a timer in the script run under way
        self._finished = asyncio.Event()
        self._page_hash = ""
        self._ws = None
        self._reader: asyncio.Task | None = None

    async def open(self) -> None:
        self._ws = await websockets.connect(self.ws_url, subprotocols=["streamlit"], max_size=None,
                                            additional_headers={"Cookie": self.cookie} if self.cookie else None)
        self._reader = asyncio.create_task(self._read())
        await self.rerun()
        await self.idle()

    async def close(self) -> None:
        for task in self._timers.values():
            task.cancel()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
        for task in self._fetches:
            task.cancel()
        await self.http.aclose()

    async def rerun(self, trigger: str | None = None, fragment_id: str | None = None,
                    choice: tuple[str, str] | None = None) -> None:
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string, state.page_name = self.query, self.page
        # the page's hash, once known, as the browser sends it: a rerun the server starts itself (st.rerun)
        # reuses the last one asked for, and without it would draw the default page
        state.page_script_hash = self._page_hash
        self._typed(state)
        if trigger is not None:
            widget = state.widget_states.widgets.add()
            widget.id, widget.trigger_value = trigger, True
        if choice is not None:  # (widget id, the option's label), as a browser sends a select box's pick
            widget = state.widget_states.widgets.add()
            widget.id, widget.string_value = choice
        if fragment_id is not None:
            state.fragment_id, state.is_auto_rerun = fragment_id, True
        else:
            self._finished.clear()
        await self._ws.send(msg.SerializeToString())

    async def click(self, label: str, timeout: float = 120.0) -> None:
        """Press the button drawn with this label (waiting for it to be drawn)."""
        deadline = time.monotonic() + timeout
        while label not in self.buttons:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no button {label!r} on {self.page}")
            await asyncio.sleep(0.05)
        await self.rerun(trigger=self.buttons[label])

    async def submit(self, button: str, fields: dict[str, str], timeout: float = 120.0) -> None:
        """Fill the text inputs `fields` (label -> text) and press the form's submit button `button`, as a browser
        sends a form: the values and the trigger in one rerun (of the fragment the form is in, if any)."""
        deadline = time.monotonic() + timeout
        while button not in self.buttons or any(label not in self.inputs for label in fields):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no form with {button!r} and {list(fields)} on {self.page}")
            await asyncio.sleep(0.05)
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string, state.page_name, state.page_script_hash = self.query, self.page, self._page_hash
        self.typed.update({self.inputs[label]: text for label, text in fields.items()})
        self._typed(state)
        widget = state.widget_states.widgets.add()
        widget.id, widget.trigger_value = self.buttons[button], True
        fragment = self.fragment_of.get(widget.id, "")
        if fragment:
            state.fragment_id = fragment
        else:
            self._finished.clear()
        await self._ws.send(msg.SerializeToString())

    def _typed(self, state) -> None:
        for widget_id, text in self.typed.items():
            widget = state.widget_states.widgets.add()
            widget.id, widget.string_value = widget_id, text

    async def choose(self, label: str, option: str, timeout: float = 120.0) -> None:
        """Pick `option` (as displayed) in the select box with this label."""
        deadline = time.monotonic() + timeout
        while label not in self.selects:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no select box {label!r} on {self.page}")
            await asyncio.sleep(0.05)
        await self.rerun(choice=(self.selects[label], option))

    async def idle(self, timeout: float = 300.0) -> None:
        """Until the script run asked for last has finished."""
        await asyncio.wait_for(self._finished.wait(), timeout)

    async def _read(self) -> None:
        try:
            async for data in self._ws:
                msg = ForwardMsg()
                msg.ParseFromString(data)
                self._handle(msg)
        except (websockets.ConnectionClosed, asyncio.CancelledError):
            pass

    def _handle(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":  # the server sent this message before and takes it to be cached
            msg = self._cached.get(msg.ref_hash, msg)
            kind = msg.WhichOneof("type")
        elif msg.metadata.cacheable and msg.hash:
            self._cached[msg.hash] = msg
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg.delta.new_element, msg.delta.fragment_id)
        elif kind == "auto_rerun":
            fid = msg.auto_rerun.fragment_id
            if fid in self._timers:
                self._timers[fid].cancel()
            self._timers[fid] = asyncio.create_task(self._every(msg.auto_rerun.interval, fid))
            self._defined.add(fid)
        elif kind == "stop_auto_rerun":
            for fid in msg.stop_auto_rerun.fragment_ids:
                task = self._timers.pop(fid, None)
                if task:
                    task.cancel()
        elif kind == "script_finished":
            if msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                # a whole run: the fragments it did not define again lose their timers, as in the browser
                for fid in set(self._timers) - self._defined:
                    self._timers.pop(fid).cancel()
            if msg.script_finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
                self.fragment_runs += 1
            else:  # (a run ended early by st.rerun() is followed by the run it asked for)
                self.page_runs += msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
                self._finished.set()
        elif kind == "new_session":  # a script run starts (a whole one or a fragment's)
            self._defined = set()
        elif kind == "navigation":  # st.navigation says which page it drew
            self._page_hash = msg.navigation.page_script_hash

    def _element(self, el, fragment_id: str = "") -> None:
        which = el.WhichOneof("type")
        if which in ("html", "component_instance"):
            for url in FRAME_FILE.findall(el.html.body if which == "html" else el.component_instance.json_args):
                if url not in self.fetched:
                    self.fetched[url] = 0
                    task = asyncio.create_task(self._fetch(url))
                    self._fetches.add(task)
                    task.add_done_callback(self._fetches.discard)
        if which == "button":
            self.buttons[el.button.label] = el.button.id
            self.fragment_of[el.button.id] = fragment_id
        elif which == "text_input":
            self.inputs[el.text_input.label] = el.text_input.id
        elif which == "markdown":
            for name, pattern in self.watch.items():
                if name not in self.seen and pattern.search(el.markdown.body):
                    self.seen[name] = time.monotonic()
        elif which == "selectbox":
            self.selects[el.selectbox.label] = el.selectbox.id
        elif which == "html":
            body = el.html.body
            found = FRAME.search(body)
            if found:
                self.frames.append((time.monotonic(), int(found.group(1))))
                self.computing = found.group(0) + " …" in body
            if ANIMATED in body and self.animated_at is None:
                self.animated_at = time.monotonic()
        elif which == "exception":
            self.errors.append(el.exception.message)

    async def _fetch(self, url: str) -> None:
        for attempt in range(3):  # a kept-alive connection the server has just closed fails once (a browser retries)
            try:
                response = await self.http.get(url)
                response.raise_for_status()
                self.fetched[url] = len(response.content)
                return
            except httpx.HTTPError as e:
                if attempt == 2:
                    self.errors.append(f"{url}: {e!r}")

    async def _every(self, interval: float, fragment_id: str) -> None:
        while True:
            await asyncio.sleep(interval)
            await self.rerun(fragment_id=fragment_id)
