"""The server fuzzed from its own OpenAPI schema with schemathesis (on hypothesis): for every operation, bodies
that follow the schema and bodies that break it, each answer checked. Shared by tests/test_server_fuzz.py (a
bounded run in `make test`) and bench/fuzz_server.py (a longer one).

Driven through hypothesis' @given over each operation's strategy, not schemathesis' pytest plugin: the server
is started by a fixture, and the plugin's lazy fixture schema does not run under this project's pytest."""
from __future__ import annotations

from collections import Counter

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (content_type_conformance, negative_data_rejection,
                                               response_schema_conformance, status_code_conformance)

# no 5xx; only statuses and content types the schema lists; JSON that fits its schema; bodies it forbids refused
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          negative_data_rejection]
REFUSED = ["400", "404", "413", "415", "422", "431"]


def fuzz(url: str, max_examples: int, *, seed: int | None = 0, timeout_s: float = 20.0) -> Counter:
    """Fuzz the server at `url`; returns how many answers of each status. A failed check raises (hypothesis
    shrinks the example first), and so does an answer slower than `timeout_s` (a hang)."""
    schema = schemathesis.openapi.from_url(url + "/openapi.json")  # what the running server says of itself
    schema.config.update(base_url=url)
    schema.config.checks.negative_data_rejection.expected_statuses = REFUSED
    statuses: Counter = Counter()
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            @settings(max_examples=max_examples, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck), print_blob=True)
            @given(case=operation.as_strategy(generation_mode=mode))
            def run(case):
                response = case.call(timeout=timeout_s)
                statuses[response.status_code] += 1
                case.validate_response(response, checks=CHECKS)

            if seed is not None:
                run = _seeded(run, seed)
            try:
                run()
            except Unsatisfiable:
                if mode is GenerationMode.POSITIVE:
                    raise
                # nothing to break: a GET without parameters (/health, /metrics, /v1/models)
    return statuses


def _seeded(test, seed: int):
    from hypothesis import seed as hypothesis_seed
    return hypothesis_seed(seed)(test)
