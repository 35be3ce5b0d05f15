"""Wait: why a request is still waiting after a step, as the scheduler decided it."""
from __future__ import annotations

from typing import NamedTuple


class Wait(NamedTuple):
    """Why a request is still waiting after a step, decided where the scheduler held it back: `code` (the strings'
    `wait.<code>`) and the figures behind it (None where a code has none):
        slots          have = requests running, need = max_num_seqs
        budget         have = tokens left in the step's budget, need = tokens it needs to start
        memory         have = free blocks, need = blocks it needs
        fragmentation  have = free blocks, need = blocks it needs in one unbroken run (contiguous layout)
        queue          behind = the request ahead of it that could not start (head-of-line: nobody passes it)
        preempting     have = requests preempted this step: memory ran short, so nobody is admitted
        preempted      behind = the request that needed its blocks (it may be itself); evicted: the urgent arrival
        evicted        that a preemptive policy let in (priority, edf; not in vLLM v1)
        batch_running  have = requests in the static batch: nobody joins until it has finished
        batch_forming  have = requests waiting, need = max_num_seqs: the static batch waits to fill up
    A request the continuous batcher tried to admit and could not (slots, budget, memory, fragmentation) also
    carries what would have let it in at that admission check (`asked`), and so does the first request a static batch
    could not fit: the smallest raise of one knob, the others held, as `more_slots` (max_num_seqs), `more_blocks`
    (num_blocks) and `more_budget` (tokens left of max_num_batched_tokens); None where raising that knob alone would
    not (another limit binds too). A lab addition: vLLM keeps no such record."""
    code: str
    have: int | None = None
    need: int | None = None
    behind: str | None = None
    more_slots: int | None = None
    more_blocks: int | None = None
    more_budget: int | None = None
    asked: bool = False  # the more_* figures were worked out (all None: no single knob would have let it in)

    @property
    def lets_in(self) -> dict[str, int]:
        """The knobs that alone would have let it in, with how much more of each (empty: none alone would)."""
        return {k: v for k, v in (("slots", self.more_slots), ("blocks", self.more_blocks),
                                  ("budget", self.more_budget)) if v is not None}


CODES = ("slots", "budget", "memory", "fragmentation", "queue", "preempting", "preempted", "evicted", "batch_running",
         "batch_forming")
HEAD_CODES = CODES[:4]  # a request that was tried and could not start
