import os

import pytest
import torch

os.environ.setdefault("SERVING_LAB_TEST", "1")
torch.set_num_threads(1)  # tiny ops: threads cost more than they give, and CI has 2 cores


@pytest.fixture(scope="session")
def random_small():
    from engine.loader import load_model
    return load_model("random-small")


def dense_greedy(model, prompt_ids: list[int], max_tokens: int, eos_ids=()) -> list[int]:
    """The oracle: no cache at all, recompute the whole sequence for every new token."""
    ids = list(prompt_ids)
    out = []
    with torch.inference_mode():
        for _ in range(max_tokens):
            logits = model.forward_dense(torch.tensor([ids]))[0, -1]
            token = int(logits.argmax())
            out.append(token)
            ids.append(token)
            if token in eos_ids:
                break
    return out
