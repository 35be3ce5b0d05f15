"""The policy key from the command line: `bench --policy-key` and `serve --policy-key`, without the UI."""
import json

import httpx
import pytest

from engine.__main__ import build_parser, engine_kwargs, main
from engine.server.cli import engine_config_kwargs, make_app
from engine.server.thread import ServerThread

BENCH = ["bench", "--model", "random-small", "--workload", "chat-and-reports", "--scale", "0.15",
         "--num-blocks", "40", "--max-num-seqs", "6", "--json"]


def bench(capsys, *flags) -> dict:
    assert main([*BENCH, *flags]) == 0
    return json.loads(capsys.readouterr().out)


def test_bench_runs_a_key_and_a_key_equal_to_sjf_measures_what_sjf_does(capsys):
    sjf = bench(capsys, "--policy", "sjf")
    key = bench(capsys, "--policy-key", "num_prompt_tokens + max_tokens")
    assert key["engine_config"]["policy_key"] == "num_prompt_tokens + max_tokens"
    for figure in ("steps", "preemptions", "throughput_tok_per_step", "fairness_jain"):
        assert key[figure] == sjf[figure], figure
    assert {c: d["ttft_steps"] for c, d in key["by_class"].items()} == \
           {c: d["ttft_steps"] for c, d in sjf["by_class"].items()}
    mine = bench(capsys, "--policy-key", "waited - 0.1 * max_tokens", "--policy-victim-key", "tokens_left")
    assert mine["engine_config"]["policy_victim_key"] == "tokens_left"
    assert mine["num_finished"] == mine["num_requests"]


def test_bench_refuses_a_bad_key_with_its_place_and_no_traceback(capsys):
    assert main([*BENCH, "--policy-key", "waited - 0.1 * max_tok"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: line 1, column 16: `max_tok` is not a field") and "Traceback" not in err


def test_serve_takes_the_policy_key_flags():
    args = build_parser().parse_args(["serve", "--policy-key", "waited", "--policy-victim-key=-waited",
                                      "--policy-key-preemptive"])
    kwargs = engine_config_kwargs(args, engine_kwargs)
    assert (kwargs["policy_key"], kwargs["policy_victim_key"], kwargs["policy_key_preemptive"]) == \
           ("waited", "-waited", True)


@pytest.mark.server
def test_a_server_whose_key_fails_answers_with_why_and_keeps_serving(tiny):
    """The key divides by zero once a request holds 3 tokens: that request ends with the key's message; a
    shorter one sent afterwards is served."""
    app = make_app("tiny", loaded=tiny, max_num_seqs=4, policy_key="100 / (num_output_tokens - 3)")
    with ServerThread(app) as url:
        body = {"model": "tiny", "prompt": "It is a truth", "temperature": 0, "ignore_eos": True}
        failed = httpx.post(url + "/v1/completions", json={**body, "max_tokens": 8}, timeout=60)
        assert failed.status_code >= 500 and "divides by zero" in failed.text and "num_output_tokens=3" in failed.text
        served = httpx.post(url + "/v1/completions", json={**body, "max_tokens": 2}, timeout=60)
        assert served.status_code == 200 and served.json()["usage"]["completion_tokens"] == 2


def test_serve_refuses_a_bad_key_before_starting_the_engine(tiny):
    from engine.policy_key import PolicyKeyError

    with pytest.raises(PolicyKeyError) as refused:
        make_app("tiny", loaded=tiny, policy_key="__import__('os')")
    assert refused.value.code == "policy_key.call"
