"""Credential services: where tools' credentials are kept, per app and user.

``SessionStoreCredentialService`` (credentials kept in a SQL session store) is imported
when first asked for: it needs SQLAlchemy, and the in-memory service does not.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cairn.auth.credential_service._stored_form import EncryptionKey, new_encryption_key
from cairn.auth.credential_service.base_credential_service import (
    BaseCredentialService,
    CallbackContextLike,
)
from cairn.auth.credential_service.in_memory_credential_service import InMemoryCredentialService
from cairn.auth.credential_service.session_state_credential_service import (
    SessionStateCredentialService,
)

if TYPE_CHECKING:
    from cairn.auth.credential_service.session_store_credential_service import (
        SessionStoreCredentialService,
    )

_LAZY = {
    "SessionStoreCredentialService": f"{__name__}.session_store_credential_service",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "BaseCredentialService",
    "CallbackContextLike",
    "EncryptionKey",
    "InMemoryCredentialService",
    "SessionStateCredentialService",
    "SessionStoreCredentialService",
    "new_encryption_key",
]
