"""Serving Lab's inference engine: a small, real, paged-KV LLM server core."""
from engine.config import ConfigError, EngineConfig, ModelConfig
from engine.llm import LLM, RequestOutput
from engine.llm_engine import LLMEngine
from engine.loader import load_model
from engine.sampling_params import SamplingParams

__all__ = ["LLM", "LLMEngine", "SamplingParams", "EngineConfig", "ModelConfig", "ConfigError", "RequestOutput",
           "load_model"]
