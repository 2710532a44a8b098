"""Typed errors of ``cairn.auth``: each names the credential and says how to fix the problem.

No message ever contains a secret (API key, password, token, client secret,
authorization code); a provider's own error code and description are quoted.
"""

from __future__ import annotations

from cairn.errors import CairnError


class CredentialError(CairnError):
    """Base class of the errors about credentials."""


class InvalidCredentialError(CredentialError, ValueError):
    """A credential or auth config lacks what its auth scheme needs, or does not fit it."""


class CredentialExchangeError(CredentialError):
    """The OAuth2 provider refused to issue a token, or could not be reached.

    ``error`` and ``error_description`` are the provider's (RFC 6749 section 5.2,
    e.g. ``invalid_grant``), or cairn's own code when no answer was usable
    (``unreachable``, ``state_mismatch``, ``access_denied`` ...).
    ``status_code`` is the HTTP status, if there was a response.
    """

    def __init__(
        self,
        message: str,
        *,
        error: str,
        error_description: str | None = None,
        status_code: int | None = None,
        token_url: str | None = None,
    ) -> None:
        self.error = error
        self.error_description = error_description
        self.status_code = status_code
        self.token_url = token_url
        super().__init__(message)


class CredentialRefreshError(CredentialExchangeError):
    """The provider refused to refresh an access token (``invalid_grant``: sign in again)."""


class CredentialDecryptionError(CredentialError):
    """A stored credential cannot be read with the ``encryption_key`` given (nothing changed)."""


class CredentialFormatError(CredentialError):
    """A stored credential is in a format this version of cairn does not know."""


class InvalidEncryptionKeyError(CredentialError, ValueError):
    """An ``encryption_key`` that is not a Fernet key (or ``cryptography`` is not installed)."""
