"""Credentials at rest in the session store's database: encrypted with a key, refused without it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import Connection, insert, select, update
from tests.auth.conftest import SQL_STORES, Backend, backend

from cairn.auth import (
    APIKey,
    APIKeyIn,
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    CredentialDecryptionError,
    CredentialFormatError,
    InvalidEncryptionKeyError,
    OAuth2,
    OAuth2Auth,
    OAuthFlowAuthorizationCode,
    OAuthFlows,
    SessionStoreCredentialService,
    new_encryption_key,
)
from cairn.sessions import InMemorySessionService
from cairn.sessions.sql.schema import credentials

TOKEN = "at-this-must-not-be-readable"
SECRET_REFRESH = "rt-nor-this"


@pytest.fixture(params=SQL_STORES)
async def place(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend(request.param, tmp_path) as found:
        yield found


def ctx(user_id: str = "ann") -> Any:
    return SimpleNamespace(invocation_context=SimpleNamespace(app_name="app", user_id=user_id))


def token_config() -> AuthConfig:
    return AuthConfig(
        auth_scheme=OAuth2(
            flows=OAuthFlows(
                authorization_code=OAuthFlowAuthorizationCode(
                    authorization_url="https://id.example.com/authorize",
                    token_url="https://id.example.com/token",
                )
            )
        ),
        exchanged_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.OAUTH2,
            oauth2=OAuth2Auth(client_id="c", access_token=TOKEN, refresh_token=SECRET_REFRESH),
        ),
    )


async def test_with_a_key_the_stored_row_does_not_contain_the_token(place: Backend) -> None:
    key = new_encryption_key()
    service = place.credential_service(key)
    assert service.encrypts
    config = token_config()
    await service.save_credential(config, ctx())
    [(app_name, user_id, credential_key, text)] = await place.rows()
    assert (app_name, user_id, credential_key) == ("app", "ann", config.key)
    assert TOKEN not in text and SECRET_REFRESH not in text
    stored = json.loads(text)
    assert stored["format"] == "cairn.credential" and stored["version"] == 1
    assert stored["encryption"] == "fernet" and "credential" not in stored
    loaded = await place.credential_service(key).load_credential(config, ctx())
    assert loaded == config.exchanged_auth_credential


async def test_without_a_key_the_row_is_plain_versioned_json(place: Backend) -> None:
    service = place.credential_service()
    assert not service.encrypts
    await service.save_credential(token_config(), ctx())
    [(_, _, _, text)] = await place.rows()
    stored = json.loads(text)
    assert stored["format"] == "cairn.credential" and stored["version"] == 1
    assert stored["credential"]["oauth2"]["accessToken"] == TOKEN


async def test_a_wrong_or_missing_key_is_refused_and_nothing_is_lost(place: Backend) -> None:
    right, wrong = new_encryption_key(), new_encryption_key()
    config = token_config()
    await place.credential_service(right).save_credential(config, ctx())
    before = await place.rows()

    with pytest.raises(CredentialDecryptionError, match="saved with another key") as caught:
        await place.credential_service(wrong).load_credential(config, ctx())
    message = str(caught.value)
    assert config.key in message and "'ann'" in message and "'app'" in message
    assert "Nothing was changed" in message
    with pytest.raises(CredentialDecryptionError, match="has no encryption_key"):
        await place.credential_service().load_credential(config, ctx())
    # A misconfigured process cannot overwrite what it cannot read, either.
    with pytest.raises(CredentialDecryptionError, match="saved with another key"):
        await place.credential_service(wrong).save_credential(config, ctx())
    with pytest.raises(CredentialDecryptionError, match="has no encryption_key"):
        await place.credential_service().save_credential(config, ctx())

    assert await place.rows() == before
    loaded = await place.credential_service(right).load_credential(config, ctx())
    assert loaded == config.exchanged_auth_credential


async def test_keys_rotate(place: Backend) -> None:
    old, new = new_encryption_key(), new_encryption_key()
    config = token_config()
    await place.credential_service(old).save_credential(config, ctx())
    rotating = place.credential_service([new, old])
    assert await rotating.load_credential(config, ctx()) == config.exchanged_auth_credential
    await rotating.save_credential(config, ctx())  # written again with the new key
    only_new = place.credential_service(new)
    assert await only_new.load_credential(config, ctx()) == config.exchanged_auth_credential
    with pytest.raises(CredentialDecryptionError):
        await place.credential_service(old).load_credential(config, ctx())


async def test_encryption_can_be_turned_on_later(place: Backend) -> None:
    config = token_config()
    await place.credential_service().save_credential(config, ctx())
    key = new_encryption_key()
    service = place.credential_service(key)
    assert await service.load_credential(config, ctx()) == config.exchanged_auth_credential
    await service.save_credential(config, ctx())
    [(_, _, _, text)] = await place.rows()
    assert TOKEN not in text


async def test_a_row_moved_to_another_user_is_not_used(place: Backend) -> None:
    key = new_encryption_key()
    config = token_config()
    service = place.credential_service(key)
    await service.save_credential(config, ctx("ann"))
    [(_, _, _, text)] = await place.rows()

    def copy_to_mallory(connection: Connection) -> None:
        connection.execute(
            insert(credentials).values(
                app_name="app",
                user_id="mallory",
                credential_key=config.key,
                credential=text,
                update_time=0.0,
            )
        )

    await place.run(copy_to_mallory)
    with pytest.raises(CredentialDecryptionError, match="encrypted for another app, user"):
        await service.load_credential(config, ctx("mallory"))


async def test_a_damaged_or_newer_row_is_refused_by_name(place: Backend) -> None:
    config = AuthConfig(
        auth_scheme=APIKey(in_=APIKeyIn.header, name="X-Key"),
        exchanged_auth_credential=AuthCredential(
            auth_type=AuthCredentialTypes.API_KEY, api_key="k"
        ),
    )
    service = place.credential_service()
    await service.save_credential(config, ctx())

    def overwrite(text: str) -> Any:
        def run(connection: Connection) -> None:
            connection.execute(update(credentials).values(credential=text))
            assert connection.execute(select(credentials.c.credential)).scalar_one() == text

        return run

    await place.run(overwrite(json.dumps({"format": "cairn.credential", "version": 2})))
    with pytest.raises(CredentialFormatError, match=r"version 2.*upgrade cairn"):
        await service.load_credential(config, ctx())
    await place.run(overwrite("not json"))
    with pytest.raises(CredentialFormatError, match="not a cairn credential"):
        await service.load_credential(config, ctx())


def test_a_bad_key_is_refused_with_how_to_make_one() -> None:
    store = InMemorySessionService()
    with pytest.raises(InvalidEncryptionKeyError, match=r"#1 is not a Fernet key.*new_encryption"):
        SessionStoreCredentialService(store, encryption_key="hunter2")
    with pytest.raises(InvalidEncryptionKeyError, match="empty list"):
        SessionStoreCredentialService(store, encryption_key=[])
    with pytest.raises(TypeError, match="InMemoryCredentialService"):
        SessionStoreCredentialService(object())  # type: ignore[arg-type]
