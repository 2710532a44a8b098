"""The one rule for app names, user ids and session ids, kept by every store and the server.

An id is a non-empty ``str`` of at most ``MAX_ID_LENGTH`` characters with no
control character (U+0000-U+001F, U+007F-U+009F) and no lone surrogate (so it
is valid UTF-8). Every database can store and compare such ids; anything else
is refused with ``InvalidIdError`` naming the id, before a store is touched.
"""

from __future__ import annotations

import re

from cairn.errors import InvalidIdError

MAX_ID_LENGTH = 128
"""Longest app name, user id or session id, in characters."""

CREDENTIAL_KEY_LENGTH = 255
"""Longest credential key, in characters (the stores' column and the credential services)."""

_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


_KNOWN_VALID_MAX = 4096
_known_valid: set[str] = set()
"""Strings that passed ``check_id`` lately (at most ``_KNOWN_VALID_MAX``): whether a ``str``
is a valid id depends on its characters only, and a store checks the same few ids many
times per call of its user (``create_session``, the lease, every ``append_event``)."""


def check_id(which: str, value: object) -> None:
    """Raise ``InvalidIdError`` unless ``value`` is a valid id; ``which`` names it ("user id")."""
    if type(value) is str and value in _known_valid:
        return  # equal to a string that passed (a subclass of str is always checked)
    if not isinstance(value, str):
        raise InvalidIdError(which=which, value=value, reason=f"it is {type(value).__name__}")
    if not value:
        raise InvalidIdError(which=which, value=value, reason="it is empty")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidIdError(which=which, value=value, reason=f"it is {len(value)} characters")
    if not (value.isascii() and value.isprintable()):  # else no control character in it
        found = _FORBIDDEN.search(value)
        if found is not None:
            char = found.group()
            kind = "a lone surrogate" if "\ud800" <= char <= "\udfff" else "a control character"
            raise InvalidIdError(
                which=which, value=value, reason=f"it contains {kind} (U+{ord(char):04X})"
            )
    if type(value) is str:
        if len(_known_valid) >= _KNOWN_VALID_MAX:
            _known_valid.clear()
        _known_valid.add(value)


_NOT_GIVEN = object()


def check_ids(
    app_name: object, user_id: object = _NOT_GIVEN, session_id: object = _NOT_GIVEN
) -> None:
    """Check the app name and, when passed, the user id and session id."""
    known = _known_valid
    # Ids that passed before are known without a call each (see ``check_id``).
    if type(app_name) is not str or app_name not in known:
        check_id("app name", app_name)
    if user_id is not _NOT_GIVEN and (type(user_id) is not str or user_id not in known):
        check_id("user id", user_id)
    if session_id is not _NOT_GIVEN and (type(session_id) is not str or session_id not in known):
        check_id("session id", session_id)


def check_owner(app_name: object, user_id: object | None) -> None:
    """Check the app name and the user id, unless it is None (a listing of the whole app)."""
    if user_id is None:
        check_ids(app_name)
    else:
        check_ids(app_name, user_id)
