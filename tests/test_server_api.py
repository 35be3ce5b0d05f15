"""python -m engine serve's API over real HTTP: the official openai client, continuous batching,
aborts on disconnect, concurrency without leaks, and an OpenAI-style error for every bad input."""
import asyncio
import json
import logging
import socket
import threading
import time

import httpx
import pytest

from tests import aio_support
from engine.server.cli import make_app
from engine.server.metric_reader import read_metrics
from engine.server.thread import ServerThread

pytestmark = pytest.mark.server

NUM_BLOCKS = 24  # 384 token slots: short requests fit, max_tokens 500 never can


@pytest.fixture(scope="module")
def served(tiny):
    app = make_app("tiny", loaded=tiny, max_num_seqs=8, block_size=16, num_blocks=NUM_BLOCKS, max_body_bytes=4096)
    with ServerThread(app) as url:
        yield url, app.state.engine  # the API side; the engine steps in its own process and reports `stats`


def wait_until(cond, timeout=10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def idle(engine) -> bool:
    """No request in flight, every block free, and the core's block accounting balanced when it fell idle."""
    s = engine.stats
    return (not engine.in_flight and s.num_free_blocks == NUM_BLOCKS and not s.running and not s.waiting
            and not s.num_requests and s.invariant_error is None)


def test_the_openai_client_gets_completions_and_chat_streaming_and_not(served):
    from openai import OpenAI

    url, engine = served
    client = OpenAI(base_url=url + "/v1", api_key="none", max_retries=0)
    assert [m.id for m in client.models.list().data] == ["tiny"]

    c = client.completions.create(model="tiny", prompt="It is a truth", max_tokens=12, temperature=0,
                                  extra_body={"ignore_eos": True})
    assert c.choices[0].finish_reason == "length" and c.usage.completion_tokens == 12
    assert c.usage.prompt_tokens == len("It is a truth") + 1  # bytes + BOS
    chunks = list(client.completions.create(model="tiny", prompt="It is a truth", max_tokens=12, temperature=0,
                                            stream=True, stream_options={"include_usage": True},
                                            extra_body={"ignore_eos": True}))
    assert "".join(ch.choices[0].text for ch in chunks if ch.choices) == c.choices[0].text  # greedy: same text
    assert chunks[-1].usage.completion_tokens == 12 and not chunks[-1].choices

    messages = [{"role": "user", "content": "Good morning"}]
    chat = client.chat.completions.create(model="tiny", messages=messages, max_tokens=8, temperature=0)
    assert chat.choices[0].message.role == "assistant" and chat.usage.completion_tokens >= 1
    parts = list(client.chat.completions.create(model="tiny", messages=messages, max_tokens=8, temperature=0,
                                                stream=True))
    assert "".join(p.choices[0].delta.content or "" for p in parts) == chat.choices[0].message.content
    assert parts[-1].choices[0].finish_reason == chat.choices[0].finish_reason
    assert wait_until(lambda: idle(engine))


def test_a_short_request_sent_during_a_long_one_finishes_first(served):
    url, engine = served
    done = {}

    def long_request():
        with httpx.stream("POST", url + "/v1/completions", timeout=60,
                          json={"prompt": "Once", "max_tokens": 300, "ignore_eos": True, "stream": True}) as r:
            for line in r.iter_lines():
                if line.startswith("data:") and "started" not in done:
                    done["started"] = time.monotonic()
        done["long"] = time.monotonic()

    t = threading.Thread(target=long_request)
    t.start()
    assert wait_until(lambda: "started" in done)
    r = httpx.post(url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 5, "ignore_eos": True}, timeout=60)
    done["short"] = time.monotonic()
    t.join(60)
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 5
    assert done["short"] < done["long"], "the short request waited for the long one: no continuous batching"
    assert wait_until(lambda: idle(engine))


def test_a_client_disconnect_aborts_the_request_and_frees_its_blocks(served):
    url, engine = served
    with httpx.stream("POST", url + "/v1/completions", timeout=60,
                      json={"prompt": "Once upon a time", "max_tokens": 300, "ignore_eos": True, "stream": True}) as r:
        lines = r.iter_lines()
        while not next(lines).startswith("data:"):
            pass
        assert wait_until(lambda: engine.stats.num_free_blocks < NUM_BLOCKS)  # it holds blocks while it runs
    # closed after one token of 300: the abort must free everything long before it could have finished
    assert wait_until(lambda: idle(engine), timeout=2.0)
    assert 'finished_reason="abort"' in httpx.get(url + "/metrics").text


def test_a_non_streaming_client_that_gives_up_has_its_request_aborted(served):
    url, engine = served
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(url + "/v1/completions", timeout=0.3,
                   json={"prompt": "Once upon a time", "max_tokens": 300, "ignore_eos": True})
    assert wait_until(lambda: idle(engine), timeout=0.5)  # 300 tokens take longer than that


def test_32_concurrent_streaming_clients_are_all_answered_and_leak_no_blocks(served):
    url, engine = served

    async def one(client, i):
        body = {"prompt": f"Request {i}: it was", "max_tokens": 8 + i % 9, "ignore_eos": True, "stream": True,
                "stream_options": {"include_usage": True}}
        tokens, usage = 0, None
        async with client.stream("POST", url + "/v1/completions", json=body) as r:
            assert r.status_code == 200
            async for line in r.aiter_lines():
                if line.startswith("data:") and line != "data: [DONE]":
                    chunk = json.loads(line[5:])
                    tokens += bool(chunk["choices"])
                    usage = chunk.get("usage") or usage
        return tokens, usage["completion_tokens"], body["max_tokens"]

    async def main():
        async with httpx.AsyncClient(timeout=120) as client:
            return await asyncio.gather(*(one(client, i) for i in range(32)))

    results = aio_support.run(main())
    assert all(streamed == counted == wanted for streamed, counted, wanted in results)
    assert wait_until(lambda: idle(engine))  # idle() includes the block accounting check


def test_metrics_carry_vllm_names_with_the_model_name_label(served):
    url, _ = served
    httpx.post(url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 3}, timeout=60)
    text = httpx.get(url + "/metrics").text
    for name in ("vllm:num_requests_running{", "vllm:num_requests_waiting{", "vllm:kv_cache_usage_perc{",
                 "vllm:num_preemptions_total{", "vllm:prompt_tokens_total{", "vllm:generation_tokens_total{",
                 "vllm:request_success_total{", "vllm:prefix_cache_queries_total{", "vllm:prefix_cache_hits_total{",
                 "vllm:time_to_first_token_seconds_bucket{", "vllm:inter_token_latency_seconds_bucket{",
                 "vllm:e2e_request_latency_seconds_bucket{", "vllm:request_queue_time_seconds_bucket{",
                 "vllm:iteration_tokens_total_bucket{"):
        assert name in text, name
    assert 'model_name="tiny"' in text
    sample = read_metrics(text)
    assert sample.kind == "vllm" and sample.running == 0 and sample.generation_tokens >= 3


BAD = [
    ("malformed JSON", b'{"prompt": "x", ', 400, "not valid JSON"),
    ("not an object", b'["x"]', 400, "must be a JSON object"),
    ("unknown model", {"model": "gpt-9", "prompt": "x"}, 404, "`gpt-9` does not exist"),
    ("prompt too long", {"prompt": "x" * 600}, 400, "maximum context length is 512"),
    ("max_tokens never fits the cache", {"prompt": "x", "max_tokens": 500}, 400, f"whole cache has {NUM_BLOCKS}"),
    ("max_tokens of the wrong type", {"prompt": "x", "max_tokens": "lots"}, 400, "'max_tokens'"),
    ("temperature of the wrong type", {"prompt": "x", "temperature": "hot"}, 400, "'temperature'"),
    ("negative temperature", {"prompt": "x", "temperature": -1}, 400, "'temperature': Input should be greater"),
    ("zero max_tokens", {"prompt": "x", "max_tokens": 0}, 400, "'max_tokens': Input should be greater"),
    ("missing prompt", {"max_tokens": 3}, 400, "'prompt'"),
    ("n other than 1", {"prompt": "x", "n": 2}, 400, "n must be 1"),
    ("oversized body", {"prompt": "x" * 5000}, 413, "at most 4096"),
    ("empty prompt", {"prompt": ""}, 400, "the prompt is empty"),
    ("max_tokens past the context", {"prompt": "x", "max_tokens": 600}, 400, "reduce max_tokens to at most"),
    ("echo asked for", {"prompt": "x", "echo": True}, 400, "echo is not supported"),
    ("logprobs asked for", {"prompt": "x", "logprobs": 2}, 400, "logprobs is not supported"),
    ("best_of asked for", {"prompt": "x", "best_of": 3}, 400, "best_of is not supported"),
    ("logit_bias asked for", {"prompt": "x", "logit_bias": {"50": 100}}, 400, "logit_bias is not supported"),
]


def test_a_client_that_disconnects_mid_body_is_one_log_line_not_a_traceback(served, caplog):
    url, engine = served
    host, port = url.removeprefix("http://").split(":")
    with caplog.at_level(logging.INFO, logger="engine.server"):
        with socket.create_connection((host, int(port))) as s:
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 1000\r\n\r\n{\"prompt\": ")
            time.sleep(0.3)
        assert wait_until(lambda: any("disconnected before" in r.getMessage() for r in caplog.records))
    said = [r for r in caplog.records if r.name == "engine.server"]
    assert len(said) == 1 and said[0].levelno == logging.INFO and "Traceback" not in caplog.text
    assert httpx.get(url + "/health").status_code == 200 and wait_until(lambda: idle(engine))


def raw_request(method: str, path: str, body: dict | None = None, close: bool = False) -> bytes:
    """One HTTP/1.1 request as bytes; `close` asks the server to close the connection after answering it."""
    data = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\n" + ("Connection: close\r\n" if close else "")
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    return head.encode() + b"\r\n" + data


def pipelined(url: str, *requests: bytes, half_close: bool = False, timeout: float = 60) -> bytes:
    """Everything the server sends on one connection after `requests` are written in one send, read until it
    closes the connection; `half_close` shuts the client's side after writing, as `printf ... | nc -N` does."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(b"".join(requests))
        if half_close:
            s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(65536):  # a server that stops answering fails here on the timeout
            data += chunk
    return data


def responses(data: bytes) -> list[tuple[int, dict, bytes]]:
    """The (status, headers, body) of each HTTP/1.1 response in `data`, in order; a truncated one is an error."""
    out = []
    while data:
        head, sep, data = data.partition(b"\r\n\r\n")
        assert sep, f"headers cut off: {head[:200]!r}"
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = dict((k.strip().lower(), v.strip()) for k, v in (line.split(":", 1) for line in lines))
        if "content-length" in headers:
            size = int(headers["content-length"])
            assert len(data) >= size, "body cut off"
            body, data = data[:size], data[size:]
        else:  # chunked: size line, chunk, CRLF ... until the empty chunk
            body = b""
            while True:
                size_line, sep, data = data.partition(b"\r\n")
                assert sep, "chunked body cut off"
                size = int(size_line, 16)
                body, data = body + data[:size], data[size + 2:]
                if size == 0:
                    break
        out.append((int(status_line.split()[1]), headers, body))
    return out


def ask(prompt: str, max_tokens: int, stream: bool = False, close: bool = False) -> bytes:
    return raw_request("POST", "/v1/completions", {"prompt": prompt, "max_tokens": max_tokens, "ignore_eos": True,
                                                   "stream": stream}, close)


def aborts(url: str) -> float:
    """How many requests the server has counted as finished by an abort."""
    text = httpx.get(url + "/metrics").text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("vllm:request_success_total{") and 'finished_reason="abort"' in line)


def completion(body: bytes, tokens: int) -> bool:
    answer = json.loads(body)
    return answer["object"] == "text_completion" and answer["usage"]["completion_tokens"] == tokens


def test_pipelined_requests_are_answered_in_order_on_one_connection(served):
    """Two completions and a GET in one send (issue 34): three responses, in order, each its request's."""
    url, engine = served
    data = pipelined(url, ask("One", 2), ask("Two", 3), raw_request("GET", "/health", close=True))
    (s1, _, b1), (s2, _, b2), (s3, _, b3) = responses(data)
    assert (s1, s2, s3) == (200, 200, 200)
    assert completion(b1, 2) and completion(b2, 3) and json.loads(b3)["status"] == "ok"
    assert wait_until(lambda: idle(engine))


def test_a_request_pipelined_behind_a_stream_is_answered_after_it(served):
    url, engine = served
    data = pipelined(url, ask("One", 2, stream=True), ask("Two", 3, close=True))
    (s1, h1, b1), (s2, _, b2) = responses(data)
    assert (s1, s2) == (200, 200) and h1["content-type"].startswith("text/event-stream")
    events = [line[6:] for line in b1.decode().split("\n\n") if line.startswith("data: ")]
    assert len(events) == 3 and events[-1] == "[DONE]"  # two tokens, then the end
    assert completion(b2, 3)
    assert wait_until(lambda: idle(engine))


def test_a_client_that_shuts_its_side_after_pipelining_has_the_running_request_aborted(served, caplog):
    """A read EOF is a client gone (what aborts a non-streaming request whose client gave up), so requests queued
    behind the running one go unanswered; the running one is aborted too, not generated for nobody and then
    written to a closed connection (a traceback)."""
    url, engine = served
    aborted = aborts(url)
    with caplog.at_level(logging.INFO, logger="engine.server"):
        data = pipelined(url, ask("Once upon a time", 300), raw_request("GET", "/health"), half_close=True)
        assert wait_until(lambda: idle(engine))
    assert aborts(url) == aborted + 1  # ended by the abort, not by running its 300 tokens out
    assert all(status == 200 for status, _, _ in responses(data))  # nothing, or whole answers
    assert not [r for r in caplog.records if r.name == "engine.server"] and "Traceback" not in caplog.text
    assert httpx.get(url + "/health").status_code == 200


def test_unsupported_parameters_at_their_neutral_values_are_accepted(served):
    url, _ = served
    r = httpx.post(url + "/v1/completions", json={"prompt": "x", "max_tokens": 2, "echo": False, "logprobs": None,
                                                  "best_of": 1, "logit_bias": {}})
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] <= 2


@pytest.mark.parametrize("case,body,status,message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_gets_an_openai_error_with_the_right_status(served, case, body, status, message):
    url, engine = served
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    r = httpx.post(url + "/v1/completions", content=content, headers={"content-type": "application/json"})
    assert r.status_code == status
    error = r.json()["error"]
    assert message in error["message"] and error["code"] == status
    if case.endswith("asked for") or case == "max_tokens past the context":
        assert error["param"] == case.split()[0]  # the parameter, by name
    assert httpx.get(url + "/health").status_code == 200  # and the server lives on
    assert wait_until(lambda: idle(engine))


def test_bad_chat_input_names_the_field(served):
    url, _ = served
    r = httpx.post(url + "/v1/chat/completions", json={"messages": [{"role": "wizard", "content": "hi"}]})
    assert r.status_code == 400 and "'messages.0.role'" in r.json()["error"]["message"]
    r = httpx.post(url + "/v1/chat/completions", json={"messages": []})
    assert r.status_code == 400 and "'messages'" in r.json()["error"]["message"]


def test_a_stop_string_ends_the_text_before_it(served):
    url, _ = served
    full = httpx.post(url + "/v1/completions", json={"prompt": "It is", "max_tokens": 40, "temperature": 0,
                                                     "ignore_eos": True}).json()["choices"][0]["text"]
    stop = full[10:12]
    cut = httpx.post(url + "/v1/completions", json={"prompt": "It is", "max_tokens": 40, "temperature": 0,
                                                    "ignore_eos": True, "stop": [stop]}).json()["choices"][0]
    assert cut["text"] == full[:full.find(stop)] and cut["finish_reason"] == "stop"


def test_a_full_waiting_queue_answers_503_with_retry_after(tiny):
    app = make_app("tiny", loaded=tiny, max_num_seqs=1, max_waiting=1)
    engine = app.state.engine
    with ServerThread(app) as url:
        results = {}

        def request(name, max_tokens):
            results[name] = httpx.post(url + "/v1/completions", timeout=60,
                                       json={"prompt": "Once", "max_tokens": max_tokens, "ignore_eos": True})

        running = threading.Thread(target=request, args=("running", 200))
        running.start()
        assert wait_until(lambda: engine.stats is not None and engine.stats.running == 1)
        waiting = threading.Thread(target=request, args=("waiting", 4))
        waiting.start()
        assert wait_until(lambda: engine.stats.waiting == 1)
        r = httpx.post(url + "/v1/completions", json={"prompt": "x", "max_tokens": 4})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert "--max-waiting 1" in r.json()["error"]["message"]
        running.join(60), waiting.join(60)
        assert results["running"].status_code == results["waiting"].status_code == 200


def test_serve_exits_with_a_message_when_the_engine_cannot_start():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "engine", "serve", "--model", "tiny", "--max-model-len", "100000",
                        "--port", "0"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr, r.stderr[-500:]
    assert "512" in r.stderr  # the model's context length, so the user knows what to ask for


def test_the_engine_process_starts_when_the_main_module_is_a_script_that_cannot_run_again(tiny, tmp_path,
                                                                                           monkeypatch):
    """Under Streamlit, __main__ is the lab's app.py; a spawned core must not run it again (it would die)."""
    import sys
    import types

    script = tmp_path / "app_like.py"
    script.write_text("raise SystemExit('this script only runs under its own runner')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    engine = make_app("tiny", loaded=tiny, max_num_seqs=2).state.engine
    try:
        assert engine.alive
    finally:
        engine.stop()
    assert sys.modules["__main__"] is main
