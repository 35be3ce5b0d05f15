"""Follow a request's predictions, kept in the session: the first try at a request's step is the one that counts,
and only those made while the player had never been past their step count as made before seeing."""
from ui.views.journey import keep_first, tally


def test_the_first_try_at_a_step_counts_and_looking_ahead_makes_practice():
    record: dict = {}
    keep_first(record, "long-2", 5, "decode", False, before_seeing=True)
    keep_first(record, "long-2", 5, "prefill", True, before_seeing=True)  # again, once the answer was shown
    keep_first(record, "long-2", 9, "preempted", True, before_seeing=False)  # the player had been past step 9
    keep_first(record, "chat-1", 5, "waiting", True, before_seeing=True)
    assert record[("long-2", 5)] == ("decode", False, True)
    assert tally(record) == (2, 1)
