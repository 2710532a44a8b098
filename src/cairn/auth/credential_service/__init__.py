"""Credential services: where tools' credentials are kept, per app and user.

``SessionStoreCredentialService`` (credentials kept in a SQL session store) is imported
when first asked for: it needs SQLAlchemy, and the in-memory service does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.auth.credential_service._stored_form import EncryptionKey, new_encryption_key
from cairn.auth.credential_service.base_credential_service import (
    BaseCredentialService,
    CallbackContextLike,
)
from cairn.auth.credential_service.in_memory_credential_service import InMemoryCredentialService
from cairn.auth.credential_service.session_state_credential_service import (
    SessionStateCredentialService,
)
from cairn.lazy_names import lazy_names

if TYPE_CHECKING:
    from cairn.auth.credential_service.session_store_credential_service import (
        SessionStoreCredentialService,
    )

_LAZY = {
    "SessionStoreCredentialService": f"{__name__}.session_store_credential_service",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "BaseCredentialService",
    "CallbackContextLike",
    "EncryptionKey",
    "InMemoryCredentialService",
    "SessionStateCredentialService",
    "SessionStoreCredentialService",
    "new_encryption_key",
]
