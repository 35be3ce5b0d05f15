"""The server fuzzed from its own OpenAPI schema (tests/fuzz_support.py): valid and invalid bodies for every
operation against a real server this test starts. No answer may be a 5xx, take longer than the timeout (a hang),
carry a status or a content type the schema does not list, break the response schema, or accept a body the
schema rejects; afterwards nothing is left running. bench/fuzz_server.py runs the same for longer."""
import httpx
import pytest

from engine.server.cli import make_app
from engine.server.metric_reader import read_metrics
from engine.server.thread import ServerThread

pytestmark = pytest.mark.server

MAX_EXAMPLES = 60  # per operation and mode (valid, invalid): under a minute here


def fuzz_app(loaded):
    """Short contexts keep every generated request quick: max_tokens is bounded by max_model_len."""
    return make_app("tiny", loaded=loaded, max_num_seqs=8, block_size=16, max_model_len=64, max_body_bytes=1 << 16)


def test_no_generated_request_gets_a_5xx_a_hang_or_an_answer_outside_the_schema(tiny):
    from fuzz_support import fuzz  # schemathesis: imported by the test that runs it, not by every collection

    app = fuzz_app(tiny)
    engine = app.state.engine
    with ServerThread(app) as url:
        statuses = fuzz(url, MAX_EXAMPLES)
        print(f"\nfuzzed {sum(statuses.values())} requests: {dict(sorted(statuses.items()))}")
        assert statuses[200] and sum(n for s, n in statuses.items() if 400 <= s < 500)  # both kinds reached
        assert httpx.get(url + "/health").status_code == 200
        sample = read_metrics(httpx.get(url + "/metrics").text)
        assert (sample.running, sample.waiting, sample.kv_usage) == (0, 0, 0)
        assert not engine.in_flight and engine.stats.invariant_error is None
