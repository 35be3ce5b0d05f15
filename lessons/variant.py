"""Each student's own variant of an exercise: a seed drawn from the student's token and the item, so two students
get different numbers while one student gets the same ones on every visit (and the class, in a lecture, one run)."""
from __future__ import annotations

import hashlib

CLASS_VARIANT = ""  # the token of the room's shared variant (a lecture moment, a live poll)


def variant_seed(token: str, item_id: str) -> int:
    """A 31-bit seed for `item_id` in the variant of the student holding `token` (CLASS_VARIANT: the room's)."""
    digest = hashlib.sha256(f"{token}\x00{item_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
