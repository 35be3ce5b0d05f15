"""Models by name or path: the shipped tiny model, SmolLM2 from its GGUF file, a seeded random model.

    loader        load_model(name | path) -> LoadedModel (model + tokenizer)
    tokenizer     the byte-level tokenizer of tiny and random-small
    gguf_loader   GGUF metadata and tensors -> ModelConfig and weights
    bpe_tokenizer a byte-level BPE tokenizer built from the GGUF vocabulary
"""
