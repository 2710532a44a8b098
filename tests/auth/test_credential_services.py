"""The credential-service contract, written once and run against every place credentials live.

In memory, in an in-memory session store, and in the session store's database
(SQLite file, SQLite through SQLAlchemy, PostgreSQL, MariaDB with both drivers),
plain and encrypted; each server-backed run gets a fresh database.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.auth.conftest import SQL_STORES, Backend, backend, oauth2_config
from tests.auth.token_server import FakeProvider

from cairn.auth import (
    APIKey,
    APIKeyIn,
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    BaseCredentialService,
    InvalidCredentialError,
    OAuth2Auth,
    new_encryption_key,
)
from cairn.errors import LimitExceededError

KEY = new_encryption_key()

PLACES = [
    ("memory", None),
    ("session-memory", None),
    ("session-memory", KEY),
    *[(kind, None) for kind in SQL_STORES],
    *[(kind, KEY) for kind in ("sqlite", "postgres", "mariadb")],
]


@pytest.fixture(params=PLACES, ids=[kind + ("-encrypted" if key else "") for kind, key in PLACES])
async def place(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    kind, key = request.param
    async with backend(kind, tmp_path) as found:
        found.encryption_key = key  # type: ignore[attr-defined]
        yield found


def service_of(place: Backend) -> BaseCredentialService:
    return place.credential_service(getattr(place, "encryption_key", None))  # type: ignore[no-any-return]


def context(app_name: str, user_id: str) -> Any:
    """What a tool's context offers a credential service (cairn's ToolContext has these)."""
    return SimpleNamespace(invocation_context=SimpleNamespace(app_name=app_name, user_id=user_id))


def api_key_config(key: str | None = "k-123", header: str = "X-API-Key") -> AuthConfig:
    credential = AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=key)
    return AuthConfig(
        auth_scheme=APIKey(in_=APIKeyIn.header, name=header), exchanged_auth_credential=credential
    )


def oauth2_saved(provider: FakeProvider, **tokens: Any) -> AuthConfig:
    """An OAuth2 config whose exchanged credential holds ``tokens``."""
    config = oauth2_config(provider)
    credential = AuthCredential(
        auth_type=AuthCredentialTypes.OAUTH2,
        oauth2=OAuth2Auth(client_id="cairn-test-client", **tokens),
    )
    return config.model_copy(update={"exchanged_auth_credential": credential})


async def test_a_saved_credential_loads_back_for_its_app_and_user(place: Backend) -> None:
    service = service_of(place)
    config = api_key_config()
    assert await service.load_credential(config, context("app", "ann")) is None
    await service.save_credential(config, context("app", "ann"))
    loaded = await service.load_credential(config, context("app", "ann"))
    assert loaded == config.exchanged_auth_credential
    assert loaded is not config.exchanged_auth_credential
    assert await service.list_credential_keys(app_name="app", user_id="ann") == [config.key]
    direct = await service.load_user_credential(app_name="app", user_id="ann", auth_config=config)
    assert direct == loaded


async def test_users_and_apps_never_see_each_others_credentials(place: Backend) -> None:
    service = service_of(place)
    config = api_key_config("k-ann")
    await service.save_user_credential(app_name="app", user_id="Ann", auth_config=config)
    for app_name, user_id in (("app", "ann"), ("app", "Ann "), ("app", "bob"), ("other", "Ann")):
        assert (
            await service.load_user_credential(
                app_name=app_name, user_id=user_id, auth_config=config
            )
            is None
        ), (app_name, user_id)
        assert await service.list_credential_keys(app_name=app_name, user_id=user_id) == []
    await service.save_user_credential(
        app_name="app", user_id="ann", auth_config=api_key_config("k-lower-ann")
    )
    upper = await service.load_user_credential(app_name="app", user_id="Ann", auth_config=config)
    lower = await service.load_user_credential(app_name="app", user_id="ann", auth_config=config)
    assert upper is not None and upper.api_key == "k-ann"
    assert lower is not None and lower.api_key == "k-lower-ann"


async def test_saving_again_replaces_and_delete_forgets(place: Backend) -> None:
    service = service_of(place)
    first, other = api_key_config("k-1"), api_key_config("k-other", header="X-Other")
    await service.save_credential(first, context("app", "ann"))
    await service.save_credential(other, context("app", "ann"))
    await service.save_credential(api_key_config("k-2"), context("app", "ann"))
    loaded = await service.load_credential(first, context("app", "ann"))
    assert loaded is not None and loaded.api_key == "k-2"
    assert await service.list_credential_keys(app_name="app", user_id="ann") == sorted(
        [first.key, other.key]
    )
    await service.delete_credential(first, context("app", "ann"))
    await service.delete_credential(first, context("app", "ann"))  # nothing left: no error
    assert await service.load_credential(first, context("app", "ann")) is None
    assert await service.load_credential(other, context("app", "ann")) is not None


async def test_only_usable_credentials_are_saved(place: Backend, provider: FakeProvider) -> None:
    service = service_of(place)
    with pytest.raises(InvalidCredentialError, match=r"nothing to save.*complete_credential"):
        await service.save_credential(oauth2_config(provider), context("app", "ann"))
    unexchanged = oauth2_saved(provider, auth_code="c-1")
    with pytest.raises(InvalidCredentialError, match="has no access token yet"):
        await service.save_credential(unexchanged, context("app", "ann"))
    with pytest.raises(InvalidCredentialError, match="api_key is empty"):
        await service.save_credential(api_key_config(None), context("app", "ann"))
    assert await service.list_credential_keys(app_name="app", user_id="ann") == []


async def test_sign_in_values_are_not_stored(place: Backend, provider: FakeProvider) -> None:
    service = service_of(place)
    config = oauth2_saved(
        provider,
        access_token="at-1",
        refresh_token="rt-1",
        state="st",
        code_verifier="v",
        auth_code="c",
        auth_response_uri="http://127.0.0.1/callback?code=c&state=st",
        auth_uri="http://x/authorize",
    )
    await service.save_credential(config, context("app", "ann"))
    loaded = await service.load_credential(config, context("app", "ann"))
    assert loaded is not None and loaded.oauth2 is not None
    assert (loaded.oauth2.access_token, loaded.oauth2.refresh_token) == ("at-1", "rt-1")
    kept = loaded.oauth2.model_dump(exclude_none=True)
    assert kept == {
        "clientId": "cairn-test-client",
        "accessToken": "at-1",
        "refreshToken": "rt-1",
    }


async def test_an_expired_credential_is_refreshed_on_load_and_saved(
    place: Backend, provider: FakeProvider
) -> None:
    service = service_of(place)
    provider.rotate_refresh_tokens = False
    # A real sign-in gives a refresh token the provider knows.
    request = oauth2_config(provider)
    from tests.auth.test_oauth2 import signed_in

    credential = await signed_in(provider, request)
    assert credential.oauth2 is not None
    credential.oauth2.expires_at = int(time.time()) - 10
    config = request.model_copy(update={"exchanged_auth_credential": credential})
    await service.save_credential(config, context("app", "ann"))
    asked = len(provider.requests)

    loaded = await service.load_credential(request, context("app", "ann"))
    assert loaded is not None and loaded.oauth2 is not None
    assert loaded.oauth2.access_token == "at-3" and loaded.oauth2.refresh_token == "rt-2"
    assert loaded.oauth2.expires_at is not None and loaded.oauth2.expires_at > time.time() + 3000
    assert provider.requests[-1].form["grant_type"] == "refresh_token"
    # It was saved: the next load (even through another service) needs no request.
    again = await service_of(place).load_credential(request, context("app", "ann"))
    assert again == loaded and len(provider.requests) == asked + 1


async def test_an_expired_credential_that_cannot_be_renewed_loads_as_none(
    place: Backend, provider: FakeProvider
) -> None:
    service = service_of(place)
    past = int(time.time()) - 10
    no_refresh = oauth2_saved(provider, access_token="at-old", expires_at=past)
    await service.save_credential(no_refresh, context("app", "ann"))
    assert await service.load_credential(no_refresh, context("app", "ann")) is None

    revoked = oauth2_saved(
        provider, access_token="at-old", refresh_token="rt-gone", expires_at=past
    )
    await service.save_credential(revoked, context("app", "bob"))
    assert await service.load_credential(revoked, context("app", "bob")) is None
    assert provider.requests[-1].form["refresh_token"] == "rt-gone"


async def test_a_refresh_lost_to_another_process_uses_its_result(
    place: Backend, provider: FakeProvider
) -> None:
    from tests.auth.test_oauth2 import signed_in

    service = service_of(place)
    request = oauth2_config(provider)
    credential = await signed_in(provider, request)
    assert credential.oauth2 is not None
    credential.oauth2.expires_at = int(time.time()) - 10
    expired = request.model_copy(update={"exchanged_auth_credential": credential})
    await service.save_credential(expired, context("app", "ann"))
    # This process read the expired credential; meanwhile another one refreshed it (the
    # provider rotates refresh tokens, so the one read here is no longer accepted).
    other = service_of(place)
    winner = await other.load_credential(request, context("app", "ann"))
    assert winner is not None
    renewed = await service._renew(("app", "ann"), request, credential)
    assert renewed == winner


async def test_credentials_survive_reopening(place: Backend) -> None:
    await service_of(place).save_credential(api_key_config("k-kept"), context("app", "ann"))
    loaded = await service_of(place).load_credential(api_key_config(), context("app", "ann"))
    assert loaded is not None and loaded.api_key == "k-kept"


async def test_concurrent_first_saves_of_one_key_all_succeed(place: Backend) -> None:
    # The database exists first: opening a brand-new SQLite file from several connections at
    # once is the session store's business (tests/conformance, tests/multiprocess).
    await service_of(place).list_credential_keys(app_name="app", user_id="ann")
    services = [service_of(place) for _ in range(4)]
    await asyncio.gather(
        *(
            service.save_credential(api_key_config(f"k-{i}"), context("app", "ann"))
            for i, service in enumerate(services)
        )
    )
    loaded = await services[0].load_credential(api_key_config(), context("app", "ann"))
    assert loaded is not None and loaded.api_key in {f"k-{i}" for i in range(4)}


async def test_names_the_store_cannot_keep_are_refused(place: Backend) -> None:
    service = service_of(place)
    with pytest.raises(LimitExceededError, match=r"user id .* 129 characters"):
        await service.save_user_credential(
            app_name="app", user_id="u" * 129, auth_config=api_key_config()
        )
    long_key = api_key_config().model_copy(update={"credential_key": "k" * 256})
    with pytest.raises(LimitExceededError, match="credential key"):
        await service.save_credential(long_key, context("app", "ann"))
    with pytest.raises(ValueError, match="user id of a credential must not be empty"):
        await service.load_credential(api_key_config(), context("app", ""))
