"""The serving core, in the order a step reads it.

    llm_engine    the step loop: schedule -> run the model -> postprocess -> StepSnapshot
    scheduler     static and continuous batchers: who runs this step, with how many tokens
    wait          why each request still waits after a step (the scheduler's decision, with its figures)
    policy        queue orders: fcfs, sjf, priority with aging, edf
    allocator     BlockPool, and KVAllocator: the books both layouts keep (pools, holders, swap, allocate_slots)
    block_manager the paged layout: blocks on demand, prefix caching, copy-on-write
    contiguous    the reserve-ahead layout paging replaced (first-fit runs)
    request       a request's state machine and its time stamps
    runner        packs a step into flat tensors (slot_mapping, block tables), runs the model, samples
    model         Llama-style decoder with Hugging Face weight names
    sampler       greedy / temperature / top-k / top-p, per-request seeds
    snapshot      the immutable, JSON-ready record of one step
"""
