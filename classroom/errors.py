"""The one error the storage layer raises: a code the UI translates (ui/shell/strings.yaml `classroom.error.<code>`)."""
import functools


class StorageError(Exception):
    """A refused input or an unusable database. `code` picks the message, `params` fill it in.

    Codes: newer_schema, unavailable, replaced, too_long, bad_token, bad_value, unknown_student, unknown_class,
    unknown_poll, poll_closed, nothing_to_mark. `reconnect` is true for an "unavailable" whose connection was
    found dead (the next connection may well work).
    """

    reconnect = False

    def __init__(self, code: str, **params):
        self.code = code
        self.params = params
        detail = ", ".join(f"{k}={v!r}" for k, v in params.items())
        super().__init__(f"{code}({detail})" if detail else code)


def reconnecting(method):
    """An idempotent write (an upsert, an insert that ignores a duplicate, a delete): tried once more when its
    connection died under it. The pool's pre-ping catches a dead connection at checkout; this catches one that
    died between the ping and the commit, where the write may or may not have landed, so only writes that are
    harmless twice are retried."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except StorageError as err:
            if not err.reconnect:
                raise
        return method(self, *args, **kwargs)

    return wrapper
