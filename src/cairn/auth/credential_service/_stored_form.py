"""A credential as stored: versioned JSON, optionally Fernet-encrypted.

Plain: ``{"format": "cairn.credential", "version": 1, "credential": {...}}``.
Encrypted: ``{"format": ..., "version": 1, "encryption": "fernet", "ciphertext":
"..."}``, the ciphertext sealing the credential together with its app, user
and key, so a row copied to another user or key is refused, not used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.errors import (
    CredentialDecryptionError,
    CredentialFormatError,
    InvalidEncryptionKeyError,
)

if TYPE_CHECKING:
    from cryptography.fernet import MultiFernet

    from cairn.auth.credential_service.base_credential_service import Owner

FORMAT = "cairn.credential"
VERSION = 1

EncryptionKey = str | bytes | Sequence[str | bytes]
"""One Fernet key, or several (the first encrypts, all decrypt: key rotation)."""


def new_encryption_key() -> str:
    """A fresh random Fernet key for ``encryption_key=``; keep it outside the database."""
    fernet = _fernet_module()
    return str(fernet.Fernet.generate_key().decode("ascii"))


def _fernet_module() -> Any:
    try:
        from cryptography import fernet
    except ImportError as exc:  # pragma: no cover - cryptography comes with google-genai
        raise InvalidEncryptionKeyError(
            "encrypting credentials needs the cryptography package: pip install 'cairn[encryption]'"
        ) from exc
    return fernet


class StoredForm:
    """Turns credentials into stored text and back, encrypting if given a key."""

    def __init__(self, encryption_key: EncryptionKey | None) -> None:
        self._fernet: MultiFernet | None = None
        self._invalid_token: type[Exception] = Exception
        if encryption_key is None:
            return
        module = _fernet_module()
        keys = [encryption_key] if isinstance(encryption_key, str | bytes) else encryption_key
        if not keys:
            raise InvalidEncryptionKeyError(
                "encryption_key is an empty list; give one Fernet key (or several, newest "
                "first), or None to store credentials unencrypted"
            )
        fernets = []
        for number, key in enumerate(keys, start=1):
            try:
                fernets.append(module.Fernet(key))
            except (ValueError, TypeError) as exc:
                raise InvalidEncryptionKeyError(
                    f"encryption key #{number} is not a Fernet key (32 url-safe base64-encoded "
                    f"bytes): {exc}. Generate one with cairn.auth.new_encryption_key() and keep "
                    "it outside the database (an environment variable, a secret manager)."
                ) from None
        self._fernet = module.MultiFernet(fernets)
        self._invalid_token = module.InvalidToken

    @property
    def encrypts(self) -> bool:
        return self._fernet is not None

    def encode(self, owner: Owner, credential_key: str, credential: AuthCredential) -> str:
        body = credential.model_dump(mode="json", exclude_none=True)
        row: dict[str, Any] = {"format": FORMAT, "version": VERSION}
        if self._fernet is None:
            row["credential"] = body
        else:
            sealed = {
                "appName": owner[0],
                "userId": owner[1],
                "credentialKey": credential_key,
                "credential": body,
            }
            token = self._fernet.encrypt(json.dumps(sealed, separators=(",", ":")).encode())
            row["encryption"] = "fernet"
            row["ciphertext"] = token.decode("ascii")
        return json.dumps(row, separators=(",", ":"))

    def decode(self, owner: Owner, credential_key: str, text: str) -> AuthCredential:
        where = f"credential {credential_key!r} of user {owner[1]!r} in app {owner[0]!r}"
        try:
            row = json.loads(text)
        except ValueError:
            row = None
        if not isinstance(row, dict) or row.get("format") != FORMAT:
            raise CredentialFormatError(
                f"the stored {where} is not a cairn credential (it was written by something "
                "else). Delete it and save the credential again."
            )
        if row.get("version") != VERSION:
            raise CredentialFormatError(
                f"the stored {where} has format version {row.get('version')!r}; this cairn "
                f"reads version {VERSION}. A newer cairn wrote it: upgrade cairn."
            )
        if "ciphertext" in row:
            body = self._open(owner, credential_key, where, row)
        else:
            body = row.get("credential")
        try:
            return AuthCredential.model_validate(body)
        except ValidationError as exc:
            raise CredentialFormatError(
                f"the stored {where} is damaged ({exc.error_count()} invalid field(s)). "
                "Delete it and ask the user again."
            ) from None

    def _open(self, owner: Owner, credential_key: str, where: str, row: dict[str, Any]) -> Any:
        if self._fernet is None:
            raise CredentialDecryptionError(
                f"the stored {where} is encrypted and this credential service has no "
                "encryption_key. Nothing was changed; pass encryption_key= the key it was "
                "saved with."
            )
        try:
            plain = self._fernet.decrypt(str(row.get("ciphertext")).encode("ascii"))
        except (self._invalid_token, UnicodeEncodeError):
            raise CredentialDecryptionError(
                f"the encryption_key given cannot decrypt the stored {where}: it was saved with "
                "another key (or the row was changed). Nothing was changed; pass the key it was "
                "saved with (while rotating keys, pass [new_key, old_key])."
            ) from None
        sealed = json.loads(plain)
        if (sealed.get("appName"), sealed.get("userId"), sealed.get("credentialKey")) != (
            owner[0],
            owner[1],
            credential_key,
        ):
            raise CredentialDecryptionError(
                f"the stored {where} was encrypted for another app, user or credential key: "
                "the row was copied or moved in the database, so it is not used. Nothing was "
                "changed; delete it and ask the user to sign in again."
            )
        return sealed.get("credential")
