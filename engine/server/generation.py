"""One request's text as it grows on the API server: incremental detokenization and stop strings.

Stop strings are checked where the text grew, not over the whole text: after each token only the window
that could hold a new match (the longest stop string, minus one, before the new characters) is searched.
With SamplingParams' bounds (32 strings of 256 characters) that is a few microseconds a token on the event
loop, whatever the length of the text (bench/stop_strings.py measures it).
"""
from __future__ import annotations


class Generation:
    def __init__(self, tokenizer, stop: tuple[str, ...] | list[str], num_prompt_tokens: int = 0):
        self.tokenizer, self.stop = tokenizer, tuple(s for s in stop if s)
        self.longest_stop = max((len(s) for s in self.stop), default=0)
        self.token_ids: list[int] = []
        self.text = ""  # handed to the client so far
        self.prefix_offset = self.read_offset = 0  # token_ids[prefix:read] decode to the last piece sent
        self.checked = 0  # characters of the decoded text already searched for stop strings
        self.finish_reason: str | None = None
        self.num_prompt_tokens = num_prompt_tokens

    def add(self, token_ids: list[int], final: bool) -> str:
        """The next piece of text to send (a piece that ends inside a UTF-8 character waits)."""
        self.token_ids += token_ids
        # only the tokens since the last piece are decoded, with the piece before them as context (vLLM's
        # incremental detokenization): decoding the whole text each token made a long answer quadratic
        before = self.tokenizer.decode(self.token_ids[self.prefix_offset:self.read_offset])
        after = self.tokenizer.decode(self.token_ids[self.prefix_offset:])
        full = self.text + after[len(before):]
        if self.stop:
            full, stopped = self._cut_at_stop(full)
            final = final or stopped
        if not final and full.endswith("\ufffd"):
            return ""
        piece, self.text = full[len(self.text):], full
        self.prefix_offset, self.read_offset = self.read_offset, len(self.token_ids)
        return piece

    def _cut_at_stop(self, full: str) -> tuple[str, bool]:
        """`full` up to the earliest stop string that ends in the unchecked part, and whether one did."""
        start = max(0, self.checked - self.longest_stop + 1)
        window = full[start:]
        at = min((i for i in (window.find(s) for s in self.stop) if i >= 0), default=-1)
        # a trailing U+FFFD may still become another character: that tail is searched again next time
        self.checked = len(full.rstrip("\ufffd"))
        if at < 0:
            return full, False
        self.finish_reason = "stop"
        return full[:start + at], True

    def usage(self) -> dict:
        n = len(self.token_ids)
        return {"prompt_tokens": self.num_prompt_tokens, "completion_tokens": n,
                "total_tokens": self.num_prompt_tokens + n}
