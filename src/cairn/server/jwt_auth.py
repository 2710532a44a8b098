"""Bearer tokens (JWT, verified with PyJWT) as principals: the user id, allowed apps and admin
mark come from the token's claims, as ``JWTSettings`` names them."""

from __future__ import annotations

from typing import Any

try:
    import jwt
except ImportError as exc:  # pragma: no cover - packaging
    raise ImportError("verifying JWT bearer tokens needs PyJWT: pip install 'cairn[jwt]'") from exc
from fastapi import Request
from fastapi.security import HTTPBearer

from cairn.server.access import EVERY_USER, Principal
from cairn.server.errors import AuthenticationError
from cairn.server.settings import JWTSettings

_REALM = 'Bearer realm="cairn"'


def _invalid(message: str) -> AuthenticationError:
    """A 401 whose challenge says the token was refused (RFC 6750 ``invalid_token``)."""
    description = "".join(c for c in message if c.isprintable() and c not in '"\\')[:200]
    return AuthenticationError(
        f"the bearer token was refused: {message}. Send a valid, unexpired token signed "
        "by the server's key in Authorization: Bearer <token>.",
        challenge=f'{_REALM}, error="invalid_token", error_description="{description}"',
    )


class JWTAuthenticator:
    """``Authorization: Bearer <JWT>``: the signature (with the configured key and
    algorithms), ``exp`` (required), ``nbf``, audience and issuer are checked, then the
    claims become a ``Principal``."""

    security = HTTPBearer(bearerFormat="JWT", auto_error=False)

    def __init__(self, settings: JWTSettings) -> None:
        self.settings = settings
        self._key: str | None = settings.secret
        self._jwks: jwt.PyJWKSet | None = None
        try:
            if settings.public_key_file is not None:
                self._key = settings.public_key_file.read_text(encoding="utf-8")
            if settings.jwks_file is not None:
                self._jwks = jwt.PyJWKSet.from_json(settings.jwks_file.read_text("utf-8"))
        except (OSError, jwt.PyJWTError, ValueError) as exc:
            raise ValueError(f"the JWT verification key cannot be loaded: {exc}") from exc

    async def __call__(self, request: Request) -> Principal:
        return self.principal(self.verify(_bearer_token(request)))

    def verify(self, token: str) -> dict[str, Any]:
        """The token's claims, once its signature and registered claims are checked."""
        settings = self.settings
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._key_for(token),
                algorithms=list(settings.algorithms),
                audience=settings.audience,
                issuer=settings.issuer,
                leeway=settings.leeway_seconds,
                options={"require": ["exp"]},
            )
        except jwt.ExpiredSignatureError:
            raise _invalid("it has expired") from None
        except jwt.PyJWTError as exc:
            raise _invalid(str(exc) or type(exc).__name__) from None
        return claims

    def _key_for(self, token: str) -> Any:
        if self._jwks is None:
            return self._key
        kid = jwt.get_unverified_header(token).get("kid")
        if kid is None and len(self._jwks.keys) == 1:
            return self._jwks.keys[0].key
        try:
            return self._jwks[str(kid)].key
        except KeyError:
            raise _invalid(f"no key of the server's JWKS has the token's kid {kid!r}") from None

    def principal(self, claims: dict[str, Any]) -> Principal:
        """The principal the verified ``claims`` describe."""
        settings = self.settings
        user = claims.get(settings.user_claim)
        if not isinstance(user, str) or not user or user == EVERY_USER:
            raise _invalid(f"its claim {settings.user_claim!r} is not a user id: {user!r}")
        apps: frozenset[str] | None = None
        if settings.apps_claim is not None:
            apps = frozenset(_names(claims.get(settings.apps_claim), settings.apps_claim))
        admin = False
        if settings.admin_claim is not None:
            marked = claims.get(settings.admin_claim)
            admin = marked is True or (
                isinstance(marked, (str, list))
                and settings.admin_value in _names(marked, settings.admin_claim)
            )
        return Principal(user_id=user, apps=apps, admin=admin)


def _names(value: Any, claim: str) -> list[str]:
    """A claim holding names: a list of strings or a space-separated string (absent: none)."""
    if value is None:
        return []
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise _invalid(f"its claim {claim!r} is not a list of names: {value!r}")


def _bearer_token(request: Request) -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    reason = "has no Authorization header" if not header else "sends no bearer token"
    raise AuthenticationError(
        f"the request {reason}. Send Authorization: Bearer <token>, a JWT signed by the "
        "key the server was configured with (CAIRN_JWT_*).",
        challenge=_REALM,
    )
