"""An OpenAI-compatible HTTP server around LLMEngine, and a load client shaped like `vllm bench serve`."""
