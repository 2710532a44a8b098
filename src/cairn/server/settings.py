"""What a server serves and how (agents, stores, key, CORS, limits), also from the environment."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path

DEFAULT_MAX_BODY_BYTES = 1_048_576
DEFAULT_LEASE_TTL = 30.0


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
    api_key: str | None = None
    """When set, every API route needs the header ``X-API-Key`` with this value."""
    cors_origins: list[str] = dataclasses.field(default_factory=list)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    web: bool = False
    """Also serve the dev UI (``cairn.web``'s static files) at ``/``."""
    auto_create_session: bool = False
    lease_ttl: float = DEFAULT_LEASE_TTL
    """Seconds a session's lease outlives its last renewal when its holder stops (a holder on
    the same host whose process exited is replaced at once)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents_dir", Path(self.agents_dir))
        if self.max_body_bytes < 1:
            raise ValueError(f"max_body_bytes must be at least 1; got {self.max_body_bytes}")
        if not self.lease_ttl > 0:
            raise ValueError(
                f"lease_ttl must be a positive number of seconds; got {self.lease_ttl}"
            )
        if self.api_key == "":
            raise ValueError("api_key must not be empty; pass None to serve without a key")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServerSettings:
        """Settings from ``CAIRN_AGENTS_DIR``, ``CAIRN_STORE``, ``CAIRN_ARTIFACT_STORE``,
        ``CAIRN_MEMORY_STORE``, ``CAIRN_API_KEY``, ``CAIRN_CORS_ORIGINS`` (comma-separated),
        ``CAIRN_MAX_BODY_BYTES``, ``CAIRN_WEB=1``, ``CAIRN_AUTO_CREATE_SESSION=1`` and
        ``CAIRN_LEASE_TTL`` (seconds)."""
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
        origins = env.get("CAIRN_CORS_ORIGINS", "")
        return cls(
            agents_dir=Path(env.get("CAIRN_AGENTS_DIR") or "."),
            store=env.get("CAIRN_STORE") or None,
            artifact_store=env.get("CAIRN_ARTIFACT_STORE") or None,
            memory_store=env.get("CAIRN_MEMORY_STORE") or None,
            api_key=env.get("CAIRN_API_KEY") or None,
            cors_origins=[o.strip() for o in origins.split(",") if o.strip()],
            max_body_bytes=max_body_bytes,
            web=_flag(env.get("CAIRN_WEB")),
            auto_create_session=_flag(env.get("CAIRN_AUTO_CREATE_SESSION")),
            lease_ttl=lease_ttl,
        )


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}
