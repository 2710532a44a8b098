"""What a server serves and how (agents, stores, authentication, CORS, limits), also from
the environment."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path

DEFAULT_MAX_BODY_BYTES = 1_048_576
DEFAULT_LEASE_TTL = 30.0
IN_PROCESS = "in-process"
TEMPORAL_SCHEME = "temporal://"
"""Where runs execute (``cairn.runs.executor``): ``in-process`` (the server's process), or
``temporal://HOST:PORT[/NAMESPACE]`` (Temporal's workers)."""
_HMAC = ("HS256", "HS384", "HS512")


@dataclasses.dataclass(frozen=True)
class JWTSettings:
    """How bearer tokens (JWT) are verified and read (``cairn.server.jwt_auth``): one key
    source (an HMAC ``secret``, a PEM ``public_key_file`` or a ``jwks_file``), the accepted
    ``algorithms``, the ``audience`` and ``issuer`` a token must name, and which claims hold
    the user id, the allowed apps (None: every app) and the admin mark."""

    secret: str | None = dataclasses.field(default=None, repr=False)
    public_key_file: Path | None = None
    jwks_file: Path | None = None
    algorithms: tuple[str, ...] = ()
    """Empty: ``HS256`` with a secret, ``RS256`` with a public key or JWKS."""
    audience: str | None = None
    issuer: str | None = None
    user_claim: str = "sub"
    apps_claim: str | None = None
    """A claim listing the apps the token allows (a list, or a space-separated string); a
    token without it allows none. None: every app."""
    admin_claim: str | None = None
    """A claim that marks an admin: ``true``, or a list / space-separated string holding
    ``admin_value``. None: no token is an admin's."""
    admin_value: str = "admin"
    leeway_seconds: float = 0.0
    """Clock skew allowed when checking ``exp`` (always required) and ``nbf``."""

    def __post_init__(self) -> None:
        for name in ("public_key_file", "jwks_file"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, Path(value))
        sources = [
            n for n in ("secret", "public_key_file", "jwks_file") if getattr(self, n) is not None
        ]
        if len(sources) != 1:
            raise ValueError(
                "JWT verification needs exactly one key source: secret (CAIRN_JWT_SECRET), "
                "public_key_file (CAIRN_JWT_PUBLIC_KEY_FILE) or jwks_file "
                f"(CAIRN_JWT_JWKS_FILE); got {', '.join(sources) or 'none'}"
            )
        if self.secret == "":
            raise ValueError("the JWT secret must not be empty")
        algorithms = tuple(self.algorithms) or (("HS256",) if self.secret else ("RS256",))
        object.__setattr__(self, "algorithms", algorithms)
        if any(a.lower() == "none" for a in algorithms):
            raise ValueError("the JWT algorithm 'none' accepts unsigned tokens; leave it out")
        mismatched = [a for a in algorithms if (a in _HMAC) != (self.secret is not None)]
        if mismatched:
            wanted = "HS256, HS384 or HS512" if self.secret else "e.g. RS256, ES256 or EdDSA"
            raise ValueError(
                f"the JWT algorithms {', '.join(mismatched)} do not fit the "
                f"{sources[0].replace('_', ' ')}: use {wanted}"
            )
        if self.leeway_seconds < 0:
            raise ValueError(f"leeway_seconds must not be negative; got {self.leeway_seconds}")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> JWTSettings | None:
        """From ``CAIRN_JWT_SECRET`` / ``_PUBLIC_KEY_FILE`` / ``_JWKS_FILE``, ``_ALGORITHMS``
        (comma-separated), ``_AUDIENCE``, ``_ISSUER``, ``_USER_CLAIM``, ``_APPS_CLAIM``,
        ``_ADMIN_CLAIM``, ``_ADMIN_VALUE`` and ``_LEEWAY_SECONDS``; None without a key source."""
        given = {k: v for k, v in env.items() if k.startswith("CAIRN_JWT_") and v}
        keys = ("CAIRN_JWT_SECRET", "CAIRN_JWT_PUBLIC_KEY_FILE", "CAIRN_JWT_JWKS_FILE")
        if not any(k in given for k in keys):
            if given:
                raise ValueError(
                    f"{', '.join(sorted(given))} set without a key: set one of {', '.join(keys)}"
                )
            return None
        leeway = given.get("CAIRN_JWT_LEEWAY_SECONDS", "0")
        try:
            leeway_seconds = float(leeway)
        except ValueError:
            raise ValueError(
                f"CAIRN_JWT_LEEWAY_SECONDS={leeway!r} is not a number of seconds"
            ) from None
        algorithms = given.get("CAIRN_JWT_ALGORITHMS", "")
        return cls(
            secret=given.get("CAIRN_JWT_SECRET"),
            public_key_file=_path(given.get("CAIRN_JWT_PUBLIC_KEY_FILE")),
            jwks_file=_path(given.get("CAIRN_JWT_JWKS_FILE")),
            algorithms=tuple(a.strip() for a in algorithms.split(",") if a.strip()),
            audience=given.get("CAIRN_JWT_AUDIENCE"),
            issuer=given.get("CAIRN_JWT_ISSUER"),
            user_claim=given.get("CAIRN_JWT_USER_CLAIM", "sub"),
            apps_claim=given.get("CAIRN_JWT_APPS_CLAIM"),
            admin_claim=given.get("CAIRN_JWT_ADMIN_CLAIM"),
            admin_value=given.get("CAIRN_JWT_ADMIN_VALUE", "admin"),
            leeway_seconds=leeway_seconds,
        )


@dataclasses.dataclass(frozen=True)
class ServerSettings:
    """Settings of one HTTP server (``create_app``); ``from_env`` reads ``CAIRN_*`` variables."""

    agents_dir: Path = Path(".")
    """A directory of apps (one per subdirectory), or one agent file or package."""
    store: str | None = None
    """Session store URL or SQLite path (None: ``.cairn/sessions.db``; ``memory://``)."""
    artifact_store: str | None = None
    """None: artifacts in the session store's database (in memory for ``memory://``);
    ``memory://``; or a directory for ``FileArtifactService``."""
    memory_store: str | None = None
    """None or ``memory://``: in memory; a SQLite path, ``semantic+sqlite:///path`` or a
    ``postgresql://`` URL (see ``cairn.memory.factory``)."""
    api_key: str | None = dataclasses.field(default=None, repr=False)
    """When set, every API route needs the header ``X-API-Key`` with this value (user ids are
    then not authenticated: whoever has the key acts for any user)."""
    authenticate: str | None = None
    """``module:function`` of an authentication hook (``cairn.server.auth.Authenticate``)."""
    jwt: JWTSettings | None = None
    """Verify ``Authorization: Bearer`` tokens (needs ``cairn[jwt]``)."""
    cors_origins: list[str] = dataclasses.field(default_factory=list)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    web: bool = False
    """Also serve the dev UI (``cairn.web``'s static files) at ``/``."""
    auto_create_session: bool = False
    lease_ttl: float = DEFAULT_LEASE_TTL
    """Seconds a session's lease outlives its last renewal when its holder stops (a holder on
    the same host whose process exited is replaced at once)."""
    record_spans: bool | None = None
    """Write finished spans into the session store (``cairn.sessions.span_recorder``), for
    the Trace tab and the trace routes. None: when the dev UI is served (``web``)."""
    executor: str = IN_PROCESS
    """Where runs execute: ``in-process`` (this server's process, one session's runs one
    after another) or ``temporal://HOST:PORT[/NAMESPACE]`` (that Temporal server's workers,
    ``cairn worker``)."""
    task_queue: str | None = None
    """With a Temporal executor: the task queue its workers poll (None: ``cairn-runs``)."""
    max_runs: int | None = None
    """With the in-process executor: runs this process executes at once (None: no limit);
    the others wait, pending, in their sessions' order."""
    a2a: bool = False
    """Also serve every app over A2A at ``/a2a/{app_name}`` (``cairn.a2a.serving``; needs
    ``cairn[a2a]``)."""

    @property
    def records_spans(self) -> bool:
        return self.web if self.record_spans is None else self.record_spans

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents_dir", Path(self.agents_dir))
        if self.max_body_bytes < 1:
            raise ValueError(f"max_body_bytes must be at least 1; got {self.max_body_bytes}")
        if not self.lease_ttl > 0:
            raise ValueError(
                f"lease_ttl must be a positive number of seconds; got {self.lease_ttl}"
            )
        if self.executor != IN_PROCESS and not self.executor.startswith(TEMPORAL_SCHEME):
            raise ValueError(
                f"there is no run executor {self.executor!r}; use {IN_PROCESS} or "
                "temporal://HOST:PORT[/NAMESPACE] (--executor, CAIRN_EXECUTOR)"
            )
        if self.max_runs is not None and self.max_runs < 1:
            raise ValueError(
                f"max_runs must be at least 1 (or None: no limit); got {self.max_runs}"
            )
        if self.api_key == "":
            raise ValueError("api_key must not be empty; pass None to serve without a key")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServerSettings:
        """Settings from ``CAIRN_AGENTS_DIR``, ``CAIRN_STORE``, ``CAIRN_ARTIFACT_STORE``,
        ``CAIRN_MEMORY_STORE``, ``CAIRN_API_KEY``, ``CAIRN_AUTHENTICATE``, ``CAIRN_JWT_*``
        (``JWTSettings.from_env``), ``CAIRN_CORS_ORIGINS`` (comma-separated),
        ``CAIRN_MAX_BODY_BYTES``, ``CAIRN_WEB=1``, ``CAIRN_AUTO_CREATE_SESSION=1``,
        ``CAIRN_LEASE_TTL`` (seconds), ``CAIRN_RECORD_SPANS`` (1 or 0; unset: with the
        web UI), ``CAIRN_EXECUTOR`` (``in-process`` or ``temporal``), ``CAIRN_TASK_QUEUE``,
        ``CAIRN_MAX_RUNS`` (a whole number) and ``CAIRN_A2A=1``."""
        env = os.environ if environ is None else environ
        size = env.get("CAIRN_MAX_BODY_BYTES", "").strip()
        try:
            max_body_bytes = int(size) if size else DEFAULT_MAX_BODY_BYTES
        except ValueError:
            raise ValueError(
                f"CAIRN_MAX_BODY_BYTES={size!r} is not a whole number of bytes; "
                f"set it to e.g. {DEFAULT_MAX_BODY_BYTES} or unset it"
            ) from None
        ttl = env.get("CAIRN_LEASE_TTL", "").strip()
        try:
            lease_ttl = float(ttl) if ttl else DEFAULT_LEASE_TTL
        except ValueError:
            raise ValueError(
                f"CAIRN_LEASE_TTL={ttl!r} is not a number of seconds; set it to e.g. "
                f"{DEFAULT_LEASE_TTL:g} or unset it"
            ) from None
        runs = env.get("CAIRN_MAX_RUNS", "").strip()
        try:
            max_runs = int(runs) if runs else None
        except ValueError:
            raise ValueError(
                f"CAIRN_MAX_RUNS={runs!r} is not a whole number of runs; set it to e.g. 8 or "
                "unset it (no limit)"
            ) from None
        origins = env.get("CAIRN_CORS_ORIGINS", "")
        return cls(
            agents_dir=Path(env.get("CAIRN_AGENTS_DIR") or "."),
            store=env.get("CAIRN_STORE") or None,
            artifact_store=env.get("CAIRN_ARTIFACT_STORE") or None,
            memory_store=env.get("CAIRN_MEMORY_STORE") or None,
            api_key=env.get("CAIRN_API_KEY") or None,
            authenticate=env.get("CAIRN_AUTHENTICATE") or None,
            jwt=JWTSettings.from_env(env),
            cors_origins=[o.strip() for o in origins.split(",") if o.strip()],
            max_body_bytes=max_body_bytes,
            web=_flag(env.get("CAIRN_WEB")),
            auto_create_session=_flag(env.get("CAIRN_AUTO_CREATE_SESSION")),
            lease_ttl=lease_ttl,
            record_spans=_flag(env["CAIRN_RECORD_SPANS"])
            if env.get("CAIRN_RECORD_SPANS")
            else None,
            executor=env.get("CAIRN_EXECUTOR") or IN_PROCESS,
            task_queue=env.get("CAIRN_TASK_QUEUE") or None,
            max_runs=max_runs,
            a2a=_flag(env.get("CAIRN_A2A")),
        )


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}
