"""Credential services: where tools' credentials are kept, per app and user."""

from cairn.auth.credential_service._stored_form import EncryptionKey, new_encryption_key
from cairn.auth.credential_service.base_credential_service import (
    BaseCredentialService,
    CallbackContextLike,
)
from cairn.auth.credential_service.in_memory_credential_service import InMemoryCredentialService
from cairn.auth.credential_service.session_state_credential_service import (
    SessionStateCredentialService,
)
from cairn.auth.credential_service.session_store_credential_service import (
    SessionStoreCredentialService,
)

__all__ = [
    "BaseCredentialService",
    "CallbackContextLike",
    "EncryptionKey",
    "InMemoryCredentialService",
    "SessionStateCredentialService",
    "SessionStoreCredentialService",
    "new_encryption_key",
]
