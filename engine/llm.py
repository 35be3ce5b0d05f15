"""The offline API, in vLLM's shape: `LLM(...).generate(prompts, SamplingParams(...))`."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from engine.config import EngineConfig
from engine.core.llm_engine import LLMEngine
from engine.models.loaded import LoadedModel
from engine.models.loader import DEFAULT_MODEL, load_model
from engine.lab.metrics import request_metrics
from engine.core.request import Request
from engine.sampling_params import SamplingParams

ENGINE_FIELDS = {f.name for f in dataclasses.fields(EngineConfig)}


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    text: str
    token_ids: list[int]
    finish_reason: str | None
    error: str | None  # why a request was rejected
    metrics: dict


class LLM:
    """`LLM(model="tiny", batcher="continuous", block_size=16, max_num_seqs=8, ...)`.

    `model` is a name (tiny, smollm2, random-small), a .gguf file, an HF folder, or an already
    loaded model; every other keyword is an EngineConfig field. `snapshots=False`: `on_step` gets each
    step's counters (StepStats), not a picture of the whole cache, as a server runs it.
    """

    def __init__(self, model: str | LoadedModel = DEFAULT_MODEL, snapshots: bool = True, **engine_kwargs):
        unknown = set(engine_kwargs) - ENGINE_FIELDS
        if unknown:
            raise TypeError(f"unknown engine option(s): {', '.join(sorted(unknown))}")
        config = EngineConfig(**engine_kwargs)
        config.validate()
        if isinstance(model, LoadedModel):
            loaded = model
        else:
            loaded = load_model(model, dtype=config.dtype, device=config.device)
        self.engine = LLMEngine(loaded, config, snapshots=snapshots)
        self.tokenizer = loaded.tokenizer

    def generate(self, prompts: str | list[str] | list[list[int]],
                 sampling_params: SamplingParams | list[SamplingParams] | None = None,
                 on_step=None) -> list[RequestOutput]:
        if isinstance(prompts, str) or (prompts and isinstance(prompts[0], int)):
            prompts = [prompts]
        params = (sampling_params if isinstance(sampling_params, list)
                  else [sampling_params or SamplingParams()] * len(prompts))
        requests = [self.engine.add_request(p, sp) for p, sp in zip(prompts, params)]
        self.engine.run_until_done(on_step)
        return [self._output(r) for r in requests]

    def chat(self, messages: list[dict] | list[list[dict]], sampling_params: SamplingParams | None = None,
             on_step=None) -> list[RequestOutput]:
        conversations = [messages] if messages and isinstance(messages[0], dict) else messages
        prompts = [self.tokenizer.apply_chat_template(c, add_generation_prompt=True) for c in conversations]
        return self.generate(prompts, sampling_params, on_step)

    def _output(self, r: Request) -> RequestOutput:
        return RequestOutput(r.request_id, r.prompt, r.prompt_token_ids, self.tokenizer.decode(r.output_token_ids),
                             list(r.output_token_ids), r.finish_reason.value if r.finish_reason else None,
                             r.error, request_metrics(r))

