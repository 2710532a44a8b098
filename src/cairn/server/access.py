"""What a principal may touch: its own user's sessions, artifacts and memory in the apps it
is allowed; every user (``*``) and ``app:`` state only as an admin."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from cairn.server.errors import InvalidRequestError, PermissionDeniedError
from cairn.sessions.state import State

EVERY_USER = "*"
"""The user id that means every user in a listing path (``.../users/*/sessions``)."""


@dataclasses.dataclass(frozen=True)
class Principal:
    """Who a request acts for: ``user_id`` (None: no user of its own), the ``apps`` it may use
    (None: every app), and ``admin`` (may act for any user, list every user, write ``app:``
    state)."""

    user_id: str | None = None
    apps: frozenset[str] | None = None
    admin: bool = False

    def __post_init__(self) -> None:
        if self.apps is not None and not isinstance(self.apps, frozenset):
            object.__setattr__(self, "apps", frozenset(self.apps))


ANYONE = Principal(admin=True)
"""Every request's principal when the server checks no credentials or only the shared API
key: user ids are then whatever the caller sends, not authenticated."""


def _who(principal: Principal) -> str:
    return f"user {principal.user_id!r}" if principal.user_id is not None else "no user"


def check_app(principal: Principal, app_name: str) -> None:
    """``PermissionDeniedError`` unless the principal may use ``app_name``."""
    if principal.apps is None or app_name in principal.apps:
        return
    allowed = ", ".join(repr(a) for a in sorted(principal.apps)) or "none"
    raise PermissionDeniedError(
        f"the credentials ({_who(principal)}) do not allow app {app_name!r}; they allow: "
        f"{allowed}. Use credentials that list the app, or GET /list-apps for yours."
    )


def check_user(principal: Principal, user_id: str) -> None:
    """``PermissionDeniedError`` unless the principal may act for ``user_id`` (``*``: admins)."""
    if principal.admin:
        return
    if user_id == EVERY_USER:
        raise PermissionDeniedError(
            f"user {EVERY_USER!r} means every user, which only an admin may list; the "
            f"credentials are for {_who(principal)}. List your own with .../users/"
            f"{principal.user_id or '<your user id>'}/sessions."
        )
    if principal.user_id != user_id:
        raise PermissionDeniedError(
            f"the credentials are for {_who(principal)}, and a request may touch only its "
            f"own user's sessions, artifacts and memory, not those of user {user_id!r}. Use "
            f"{principal.user_id!r} as the user id, or an admin's credentials."
        )


def check_path(principal: Principal, params: Mapping[str, Any]) -> None:
    """The checks for a route's ``app_name`` and ``user_id`` path parameters, if it has them."""
    if "app_name" in params:
        check_app(principal, str(params["app_name"]))
    if "user_id" in params:
        check_user(principal, str(params["user_id"]))


def check_state_writes(principal: Principal, *deltas: Mapping[str, Any] | None) -> None:
    """``PermissionDeniedError`` naming the ``app:`` keys a non-admin's request would write:
    app state is shared by every user of the app."""
    if principal.admin:
        return
    keys = sorted({k for d in deltas if d for k in d if k.startswith(State.APP_PREFIX)})
    if keys:
        raise PermissionDeniedError(
            f"only an admin may write app state ({State.APP_PREFIX} keys are shared by every "
            f"user of the app); the request writes {', '.join(repr(k) for k in keys)}. "
            f"Leave them out, or use user: or session keys."
        )


def check_new_user_id(user_id: str) -> None:
    """``InvalidRequestError`` for ``*``, which would collide with the every-user wildcard."""
    if user_id == EVERY_USER:
        raise InvalidRequestError(
            f"{EVERY_USER!r} cannot be a user id: in a path it means every user "
            f"(GET /cairn/apps/{{app}}/users/{EVERY_USER}/sessions). Choose another user id."
        )


def visible_apps(principal: Principal, names: Iterable[str]) -> list[str]:
    """The apps of ``names`` the principal may use, in order."""
    return [n for n in names if principal.apps is None or n in principal.apps]


def may_read(principal: Principal, app_name: str, user_id: str) -> bool:
    """Whether the principal may read what ``app_name``'s user ``user_id`` owns (for routes
    whose path names neither, as ADK's ``/debug/trace/...``)."""
    allowed_app = principal.apps is None or app_name in principal.apps
    return allowed_app and (principal.admin or principal.user_id == user_id)
