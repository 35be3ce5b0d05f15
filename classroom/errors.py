"""The one error the storage layer raises: a code the UI translates (ui/shell/strings.yaml `classroom.error.<code>`)."""


class StorageError(Exception):
    """A refused input or an unusable database. `code` picks the message, `params` fill it in.

    Codes: newer_schema, unavailable, too_long, bad_token, bad_value, unknown_student, unknown_class,
    unknown_poll, poll_closed, nothing_to_mark.
    """

    def __init__(self, code: str, **params):
        self.code = code
        self.params = params
        detail = ", ".join(f"{k}={v!r}" for k, v in params.items())
        super().__init__(f"{code}({detail})" if detail else code)
