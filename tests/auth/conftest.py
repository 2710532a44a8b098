"""Fixtures of the auth tests: a real local OAuth2 provider, and configs that use it."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, select
from tests.auth.token_server import CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, FakeProvider
from tests.support.databases import MARIADB, MARIADB_AIOMYSQL, mariadb_database, postgres_database

from cairn.auth import (
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    OAuth2,
    OAuth2Auth,
    OAuthFlowAuthorizationCode,
    OAuthFlows,
)
from cairn.auth.credential_service import (
    EncryptionKey,
    InMemoryCredentialService,
    SessionStoreCredentialService,
)
from cairn.sessions import (
    BaseSessionService,
    DatabaseSessionService,
    InMemorySessionService,
    SqliteSessionService,
)
from cairn.sessions.sql.schema import credentials
from cairn.sessions.sql.store import SqlSessionStore


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider().running() as running:
        yield running


def oauth2_config(provider: FakeProvider, **client: object) -> AuthConfig:
    """The auth config of a tool that signs users in at ``provider``."""
    fields: dict[str, object] = {
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "redirect_uri": REDIRECT_URI,
        **client,
    }
    return AuthConfig(
        auth_scheme=OAuth2(
            flows=OAuthFlows(
                authorization_code=OAuthFlowAuthorizationCode(
                    authorization_url=provider.authorization_url,
                    token_url=provider.token_url,
                    scopes={"calendar.read": "Read your calendar", "offline": "Stay signed in"},
                )
            )
        ),
        raw_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth.model_validate(fields)
        ),
    )


# -- stores ------------------------------------------------------------------------------------
SQL_STORES = ["sqlite", "db-sqlite", "postgres", "mariadb", "mariadb-aiomysql"]


@asynccontextmanager
async def database_url(kind: str, tmp: Path) -> AsyncIterator[str]:
    """A fresh, empty database of ``kind`` (sqlite files are in ``tmp``)."""
    if kind in ("sqlite", "db-sqlite"):
        yield f"sqlite+aiosqlite:///{tmp / 'store.db'}"
    elif kind == "postgres":
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url
    else:
        driver = MARIADB_AIOMYSQL if kind == "mariadb-aiomysql" else MARIADB
        async with mariadb_database(driver) as url:  # type: ignore[attr-defined]
            yield url


def open_store(kind: str, url: str) -> SqlSessionStore:
    """A new session service on the database at ``url``, as a new process would open it."""
    if kind == "sqlite":
        return SqliteSessionService(url.removeprefix("sqlite+aiosqlite:///"))
    return DatabaseSessionService(url)


@dataclasses.dataclass
class Backend:
    """A place credentials are kept, and how to open it again."""

    kind: str
    url: str | None
    session_service: BaseSessionService | None
    opened: list[BaseSessionService] = dataclasses.field(default_factory=list)

    def credential_service(self, encryption_key: EncryptionKey | None = None) -> Any:
        """A credential service on this place (memory: the same; SQL: a new session service)."""
        if self.kind == "memory":
            if not hasattr(self, "_memory"):
                self._memory = InMemoryCredentialService()
            return self._memory
        if self.url is None:
            assert self.session_service is not None
            return SessionStoreCredentialService(
                self.session_service, encryption_key=encryption_key
            )
        store = open_store(self.kind, self.url)
        self.opened.append(store)
        return SessionStoreCredentialService(store, encryption_key=encryption_key)

    async def rows(self) -> list[tuple[str, str, str, str]]:
        """Every stored credential row, raw: (app_name, user_id, credential_key, text)."""
        store = self.opened[0] if self.opened else open_store(self.kind, self.url or "")

        def read(connection: Connection) -> list[tuple[str, str, str, str]]:
            found = connection.execute(select(credentials)).all()
            return [
                tuple(v.decode() if isinstance(v, bytes) else v for v in row[:4])  # type: ignore[misc]
                for row in found
            ]

        assert isinstance(store, SqlSessionStore)
        return await store.database.transaction(read, write=False)

    async def run(self, operation: Callable[[Connection], object]) -> None:
        """Run ``operation`` on the database in one write transaction (to tamper with rows)."""
        store = self.opened[0]
        assert isinstance(store, SqlSessionStore)
        await store.database.transaction(operation, write=True)

    async def close(self) -> None:
        for store in self.opened:
            await store.close()


@asynccontextmanager
async def backend(kind: str, tmp: Path) -> AsyncIterator[Backend]:
    if kind == "memory":
        yield Backend(kind, None, None)
    elif kind == "session-memory":
        yield Backend(kind, None, InMemorySessionService())
    else:
        async with database_url(kind, tmp) as url:
            place = Backend(kind, url, None)
            try:
                yield place
            finally:
                await place.close()
