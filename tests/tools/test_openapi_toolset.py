"""OpenAPIToolset / RestApiTool against a real FastAPI app served by uvicorn (its own
generated OpenAPI document is the spec), and against cairn's own server."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.genai import types
from tests.auth.token_server import CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, FakeProvider
from tests.server.harness import uvicorn_server
from tests.support.waiting import BOUND_SECONDS
from tests.tools.openapi_app import (
    API_KEY,
    BASIC_PASSWORD,
    BASIC_USER,
    BEARER_TOKEN,
    create_app,
    serve,
)

from cairn import Agent, InMemorySessionService, Runner
from cairn.auth import (
    APIKey,
    APIKeyIn,
    AuthCredential,
    AuthCredentialTypes,
    HttpAuth,
    HttpCredentials,
    InMemoryCredentialService,
    OAuth2Auth,
)
from cairn.testing import Call, ScriptedLlm
from cairn.tools.openapi_tool import OpenAPIToolset, RestApiTool
from cairn.tools.openapi_tool.auth.auth_helpers import token_to_scheme_credential
from cairn.tools.openapi_tool.openapi_spec_parser import InvalidOpenApiSpecError


@pytest.fixture(scope="module")
def pets() -> Iterator[tuple[str, Any]]:
    """(base URL, FastAPI app) of the pets API, one server for the module."""
    app = create_app()
    with serve(app) as url:
        yield url, app


def spec_of(url: str, app: Any) -> dict[str, Any]:
    """The app's generated OpenAPI document, served from where it runs (as a client gets it)."""
    spec: dict[str, Any] = httpx.get(f"{url}/openapi.json", timeout=BOUND_SECONDS).json()
    spec["servers"] = [{"url": url}]
    return spec


def toolset(url: str, app: Any, **options: Any) -> OpenAPIToolset:
    return OpenAPIToolset(spec_dict=spec_of(url, app), allow_private_network_access=True, **options)


def tool(toolset: OpenAPIToolset, name: str) -> RestApiTool:
    found = toolset.get_tool(name)
    assert found is not None, [t.name for t in toolset._tools]
    return found


# -- the document becomes tools -----------------------------------------------------------------
async def test_each_operation_is_a_tool_named_and_declared_as_adk_does(pets) -> None:  # type: ignore[no-untyped-def]
    tools = toolset(*pets)
    names = {t.name for t in await tools.get_tools()}
    assert {"get_pet", "list_pets", "create_pet", "save_folder", "vault_by_header"} <= names
    get_pet = tool(tools, "get_pet").declaration()
    assert get_pet.description == "Get a pet by its id."
    schema = get_pet.parameters_json_schema
    # Path, query, header and cookie parameters, named in snake_case; a path one required.
    assert set(schema["properties"]) == {"pet_id", "detail", "x_trace", "session"}
    assert schema["required"] == ["pet_id"]
    assert schema["properties"]["pet_id"]["type"] == "integer"
    # An object body's properties become arguments, required as the model says ($ref resolved).
    create = tool(tools, "create_pet").declaration().parameters_json_schema
    assert set(create["properties"]) == {"name", "age", "tag"}
    assert sorted(create["required"]) == ["age", "name"]
    # A recursive schema is cut where it recurs: no $ref is left for the model.
    folder = tool(tools, "save_folder").declaration().parameters_json_schema
    assert "$ref" not in json.dumps(folder)
    assert folder["properties"]["children"]["items"] == {}


async def test_the_model_s_arguments_reach_the_api_and_its_answer_is_the_result(pets) -> None:  # type: ignore[no-untyped-def]
    url, app = pets
    tools = toolset(url, app)
    got = await tool(tools, "get_pet").run_async(
        args={"pet_id": 1, "detail": True, "x_trace": "t-1", "session": "s-9"}, tool_context=None
    )
    assert got == {
        "pet": {"name": "Rex", "age": 3, "tag": "dog", "id": 1},
        "detail": True,
        "trace": "t-1",
        "session": "s-9",
    }
    seen = app.state.seen[-1]
    assert (seen.path, seen.query) == ("/pets/1", "detail=true")
    assert seen.headers["x-trace"] == "t-1" and seen.headers["cookie"] == "session=s-9"
    assert seen.headers["user-agent"].startswith("cairn/")

    created = await tool(tools, "create_pet").run_async(
        args={"name": "Tom", "age": 2, "tag": "cat"}, tool_context=None
    )
    assert created == {"name": "Tom", "age": 2, "tag": "cat", "id": 2}
    listed = await tool(tools, "list_pets").run_async(
        args={"tags": ["cat", "fish"], "limit": 5}, tool_context=None
    )
    assert listed == [created]  # a list query parameter is sent as repeated keys
    assert app.state.seen[-1].query == "tags=cat&tags=fish&limit=5"
    # A body whose schema is a $ref to a recursive model, sent whole.
    tree = {"name": "root", "children": [{"name": "a", "children": [{"name": "b"}]}]}
    assert await tool(tools, "save_folder").run_async(args=tree, tool_context=None) == {
        "folders": 3
    }
    # A body that is not JSON comes back as text.
    assert await tool(tools, "read_note").run_async(args={"name": "x"}, tool_context=None) == {
        "text": "note x"
    }


async def test_what_goes_wrong_comes_back_to_the_model_as_an_error_result(pets) -> None:  # type: ignore[no-untyped-def]
    url, app = pets
    tools = toolset(url, app)
    missing = await tool(tools, "get_pet").run_async(args={"pet_id": 99}, tool_context=None)
    assert "HTTP 404" in missing["error"] and "no pet 99" in missing["error"]
    invalid = await tool(tools, "get_pet").run_async(args={"pet_id": "abc"}, tool_context=None)
    assert "HTTP 422" in invalid["error"]
    down = await tool(tools, "broken").run_async(args={}, tool_context=None)
    assert "HTTP 503" in down["error"] and "kennel database is down" in down["error"]
    # Checked before anything is sent: a missing argument, a path escape.
    before = len(app.state.seen)
    absent = await tool(tools, "create_pet").run_async(args={"name": "x"}, tool_context=None)
    assert "age" in absent["error"] and "missing" in absent["error"]
    escape = await tool(tools, "read_note").run_async(args={"name": "../pets"}, tool_context=None)
    assert "'..'" in escape["error"]
    assert len(app.state.seen) == before
    # A body too large for a tool result is not read to its end.
    huge = await tool(tools, "huge").run_async(args={}, tool_context=None)
    assert "larger than" in huge["error"]
    # A host that does not answer.
    gone = OpenAPIToolset(
        spec_dict={**spec_of(url, app), "servers": [{"url": "http://127.0.0.1:9"}]},
        allow_private_network_access=True,
    )
    unreachable = await tool(gone, "list_pets").run_async(args={}, tool_context=None)
    assert "ConnectError" in unreachable["error"]


async def test_private_hosts_are_refused_unless_allowed(pets) -> None:  # type: ignore[no-untyped-def]
    url, app = pets
    spec = spec_of(url, app)
    before = len(app.state.seen)
    guarded = OpenAPIToolset(spec_dict=spec)
    refused = await tool(guarded, "list_pets").run_async(args={}, tool_context=None)
    assert "allow_private_network_access=True" in refused["error"]
    for host in (
        "http://localhost:1",
        "http://10.0.0.8",
        "http://169.254.169.254",
        "http://db.internal",
    ):
        blocked = OpenAPIToolset(spec_dict={**spec, "servers": [{"url": host}]})
        assert (
            "refused"
            in (await tool(blocked, "list_pets").run_async(args={}, tool_context=None))["error"]
        )
    assert len(app.state.seen) == before  # nothing reached the app


# -- authentication ------------------------------------------------------------------------------
async def test_configured_api_keys_tokens_and_passwords_authenticate(pets) -> None:  # type: ignore[no-untyped-def]
    url, app = pets
    tools = toolset(url, app)
    key = AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key=API_KEY)
    # The document's own scheme says where the key goes: a header, or the query.
    for name, via in (("vault_by_header", "header"), ("vault_by_query", "query")):
        vault = tool(tools, name)
        vault.configure_auth_credential(key)
        assert await vault.run_async(args={}, tool_context=None) == {"vault": "open", "via": via}
    assert app.state.seen[-1].query == f"api_key={API_KEY}"
    bearer = tool(tools, "vault_by_bearer")
    _, token = token_to_scheme_credential("oauth2Token", "header", "Authorization", BEARER_TOKEN)
    bearer.configure_auth_credential(token)
    assert await bearer.run_async(args={}, tool_context=None) == {"vault": "open", "via": "bearer"}
    basic = tool(tools, "vault_by_basic")
    basic.configure_auth_credential(
        AuthCredential(
            auth_type=AuthCredentialTypes.HTTP,
            http=HttpAuth(
                scheme="basic",
                credentials=HttpCredentials(username=BASIC_USER, password=BASIC_PASSWORD),
            ),
        )
    )
    assert (await basic.run_async(args={}, tool_context=None))["user"] == BASIC_USER


async def test_a_toolset_wide_scheme_and_key_and_a_rejected_secret_never_shown(pets) -> None:  # type: ignore[no-untyped-def]
    url, app = pets
    scheme, credential = token_to_scheme_credential("apikey", "header", "X-API-Key", API_KEY)
    tools = toolset(url, app, auth_scheme=scheme, auth_credential=credential)
    assert await tool(tools, "vault_by_header").run_async(args={}, tool_context=None) == {
        "vault": "open",
        "via": "header",
    }
    assert app.state.seen[-1].headers["x-api-key"] == API_KEY
    # A wrong token the API echoes back in its error: the model sees the error, not the token.
    wrong = "tok-WRONG-7781"
    bearer = tool(toolset(url, app), "vault_by_bearer")
    bearer.configure_auth_credential(
        token_to_scheme_credential("oauth2Token", None, None, wrong)[1]
    )
    refused = await bearer.run_async(args={}, tool_context=None)
    assert "HTTP 401" in refused["error"] and wrong not in json.dumps(refused)
    assert "[redacted]" in refused["error"]


async def scripted_turns(runner: Runner, user: str, session: str, message: str) -> list[Any]:
    said = types.Content(role="user", parts=[types.Part(text=message)])
    return [e async for e in runner.run_async(user_id=user, session_id=session, new_message=said)]


def answer(asked: Any, credential: dict[str, Any]) -> types.Content:
    """The client's answer to a credential request: its auth config, the credential filled."""
    filled = dict(asked.payload)
    filled["exchangedAuthCredential"] = {
        **(filled.get("exchangedAuthCredential") or {}),
        **credential,
    }
    return types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=asked.id, name=asked.name, response=filled
                )
            )
        ],
    )


def responses(events: list[Any]) -> list[Any]:
    return [r.response for e in events for r in e.get_function_responses()]


async def test_a_key_the_document_asks_for_is_asked_of_the_user_and_kept(pets) -> None:  # type: ignore[no-untyped-def]
    url, app = pets
    tools = toolset(url, app, tool_filter=["vault_by_header"])
    model = ScriptedLlm(
        script=[Call("vault_by_header"), "Open.", Call("vault_by_header"), "Again."]
    )
    runner = Runner(
        app_name="pets",
        agent=Agent(name="keeper", model=model, tools=[tools]),
        session_service=InMemorySessionService(),
        credential_service=InMemoryCredentialService(),
    )
    await runner.session_service.create_session(app_name="pets", user_id="u", session_id="s")
    await scripted_turns(runner, "u", "s", "open it")
    [asked] = await runner.list_pending_interrupts(user_id="u", session_id="s")
    assert asked.kind == "credential"
    assert asked.payload["authScheme"] == {"type": "apiKey", "in": "header", "name": "X-API-Key"}
    done = [
        e
        async for e in runner.run_async(
            user_id="u",
            session_id="s",
            new_message=answer(asked, {"authType": "apiKey", "apiKey": API_KEY}),
        )
    ]
    assert {"vault": "open", "via": "header"} in responses(done)
    again = await scripted_turns(runner, "u", "s", "once more")
    assert {"vault": "open", "via": "header"} in responses(again)
    assert await runner.list_pending_interrupts(user_id="u", session_id="s") == []
    stored = await runner.session_service.get_session(app_name="pets", user_id="u", session_id="s")
    assert stored is not None and API_KEY not in "".join(e.to_json() for e in stored.events)


@pytest.fixture
def calendar() -> Iterator[tuple[str, Any, FakeProvider]]:
    """The pets API whose calendar route accepts the tokens a real local OAuth2 provider
    issued (and the test has not revoked)."""
    with FakeProvider().running() as provider:
        provider.token_tag = "-" + secrets.token_hex(8)  # tokens longer than what is shown
        revoked: set[str] = set()
        app = create_app(
            valid_oauth_token=lambda t: t in provider.issued and t not in revoked,
            authorization_url=provider.authorization_url,
            token_url=provider.token_url,
        )
        app.state.revoked = revoked
        with serve(app) as url:
            yield url, app, provider


async def test_oauth2_signs_the_user_in_through_a_credential_request(calendar) -> None:  # type: ignore[no-untyped-def]
    url, app, provider = calendar
    client = AuthCredential(
        auth_type=AuthCredentialTypes.OAUTH2,
        oauth2=OAuth2Auth(
            client_id=CLIENT_ID, client_secret=CLIENT_SECRET, redirect_uri=REDIRECT_URI
        ),
    )
    tools = toolset(url, app, auth_credential=client, tool_filter=["list_events"])
    model = ScriptedLlm(
        script=[Call("list_events", day="monday"), "Monday.", Call("list_events", day="friday"),
                "Friday.", Call("list_events"), "Still."]
    )  # fmt: skip
    runner = Runner(
        app_name="cal",
        agent=Agent(name="planner", model=model, tools=[tools]),
        session_service=InMemorySessionService(),
        credential_service=InMemoryCredentialService(),
    )
    await runner.session_service.create_session(app_name="cal", user_id="u", session_id="s")
    await scripted_turns(runner, "u", "s", "what is on monday?")
    [asked] = await runner.list_pending_interrupts(user_id="u", session_id="s")
    sign_in = asked.payload["exchangedAuthCredential"]["oauth2"]
    assert CLIENT_SECRET not in json.dumps(asked.payload)
    redirected = provider.authorize(sign_in["authUri"])  # the user signs in and consents

    done = [
        e
        async for e in runner.run_async(
            user_id="u",
            session_id="s",
            new_message=answer(asked, {"oauth2": {**sign_in, "authResponseUri": redirected}}),
        )
    ]
    [first_token] = [t for t in provider.issued if t.startswith("at-")]
    assert {"day": "monday", "events": ["stand-up"], "token_ends": first_token[-4:]} in responses(
        done
    )
    assert provider.requests[0].form["client_secret"] == CLIENT_SECRET  # the tool's own secret

    # The token is kept: the next call does not ask again.
    again = await scripted_turns(runner, "u", "s", "and friday?")
    assert responses(again)[0]["day"] == "friday"
    assert await runner.list_pending_interrupts(user_id="u", session_id="s") == []

    # The API stops accepting the token: the tool refreshes it and calls once more.
    app.state.revoked.add(first_token)
    renewed = await scripted_turns(runner, "u", "s", "and now?")
    [result] = responses(renewed)
    assert result["day"] == "monday" and "error" not in result
    new_token = [t for t in provider.issued if t.startswith("at-")][-1]
    assert new_token != first_token
    assert app.state.seen[-1].headers["authorization"] == f"Bearer {new_token}"
    assert [r.form["grant_type"] for r in provider.requests] == [
        "authorization_code",
        "refresh_token",
    ]

    stored = await runner.session_service.get_session(app_name="cal", user_id="u", session_id="s")
    assert stored is not None
    log = "".join(e.to_json() for e in stored.events)
    for secret in (CLIENT_SECRET, *provider.issued):
        assert secret not in log


# -- cairn's own server --------------------------------------------------------------------------
def test_tools_from_cairn_s_own_server_spec_list_its_sessions(tmp_path: Path) -> None:
    env = {"CAIRN_STORE": str(tmp_path / "sessions.db"), "CAIRN_API_KEY": "srv-key-4410"}
    with uvicorn_server(env, log=tmp_path / "server.log") as url:
        spec = httpx.get(f"{url}/openapi.json", timeout=BOUND_SECONDS).json()
        spec["servers"] = [{"url": url}]
        key = AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="srv-key-4410")
        tools = OpenAPIToolset(
            spec_dict=spec, auth_credential=key, allow_private_network_access=True
        )
        names = [t.name for t in tools._tools]
        assert all(len(n) <= 60 for n in names) and len(set(names)) == len(names)
        create = tool(tools, "create_session_apps_app_name_users_user_id_sessions_post")
        listing = tool(tools, "list_sessions_apps_app_name_users_user_id_sessions_get")

        async def use() -> tuple[Any, Any]:
            made = await create.run_async(
                # An optional body (anyOf: object or null) is one argument, as in ADK.
                args={"app_name": "echo", "user_id": "ada", "body": {"state": {"mood": "calm"}}},
                tool_context=None,
            )
            return made, await listing.run_async(
                args={"app_name": "echo", "user_id": "ada"}, tool_context=None
            )

        made, listed = asyncio.run(use())
        assert made["state"] == {"mood": "calm"}
        ids = [s["id"] for s in (listed if isinstance(listed, list) else listed["sessions"])]
        assert made["id"] in ids
        # Without the key the server refuses, and the model is told so.
        bare = OpenAPIToolset(spec_dict=spec, allow_private_network_access=True)
        bare_listing = tool(bare, "list_sessions_apps_app_name_users_user_id_sessions_get")
        bare_listing.configure_auth_scheme(APIKey(in_=APIKeyIn.header, name="X-Other"))
        bare_listing.configure_auth_credential(
            AuthCredential(auth_type=AuthCredentialTypes.API_KEY, api_key="nope")
        )
        refused = asyncio.run(
            bare_listing.run_async(args={"app_name": "echo", "user_id": "ada"}, tool_context=None)
        )
        assert "HTTP 401" in refused["error"]


# -- reading documents ---------------------------------------------------------------------------
PETSTORE_YAML = """
openapi: 3.0.3
info: {title: Tiny, version: "1"}
servers: [{url: "https://api.example.com/{version}", variables: {version: {default: v2}}}]
paths:
  /things/{thingId}:
    parameters:
      - {name: thingId, in: path, schema: {type: string}}
    get:
      operationId: getThingByID
      parameters:
        - {name: class, in: query, schema: {type: string}}
        - $ref: '#/components/parameters/Missing'
      responses: {'200': {description: ok}}
  /things:
    post:
      requestBody:
        content:
          application/json:
            schema: {type: array, items: {type: string}}
      responses: {'200': {description: ok}}
components: {parameters: {}}
"""


async def test_a_yaml_document_with_path_level_parameters_and_an_unnamed_operation() -> None:
    tools = OpenAPIToolset(spec_str=PETSTORE_YAML, spec_str_type="yaml")
    get = tool(tools, "get_thing_by_id")
    assert get.endpoint.base_url == "https://api.example.com/v2"
    schema = get.declaration().parameters_json_schema
    # Keywords are renamed, the path item's parameter is kept, a dangling $ref skipped.
    assert set(schema["properties"]) == {"param_class", "thing_id"}
    post = tool(tools, "things_post")  # no operationId: named from the path and method
    assert set(post.declaration().parameters_json_schema["properties"]) == {"array"}


def test_bad_documents_say_what_is_wrong() -> None:
    with pytest.raises(InvalidOpenApiSpecError, match=r"spec_dict=.*or spec_str="):
        OpenAPIToolset()
    with pytest.raises(InvalidOpenApiSpecError, match=r"not JSON.*spec_str_type='yaml'"):
        OpenAPIToolset(spec_str=PETSTORE_YAML)
    with pytest.raises(InvalidOpenApiSpecError, match=r"Swagger 2.0"):
        OpenAPIToolset(spec_dict={"swagger": "2.0", "paths": {}})
    external = {
        "openapi": "3.1.0",
        "paths": {"/a": {"get": {"responses": {"200": {"$ref": "common.yaml#/Ok"}}}}},
    }
    with pytest.raises(InvalidOpenApiSpecError, match=r"another document.*Bundle"):
        OpenAPIToolset(spec_dict=external)


async def test_long_operation_ids_keep_distinct_names_and_a_prefix_renames() -> None:
    stem = "a" * 70
    spec = {
        "openapi": "3.0.0",
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/x": {"get": {"operationId": stem + "X", "responses": {}}},
            "/y": {"get": {"operationId": stem + "Y", "responses": {}}},
        },
    }
    tools = OpenAPIToolset(spec_dict=spec, tool_name_prefix="svc")
    names = [t.name for t in tools._tools]
    assert names == ["a" * 60, "a" * 58 + "_2"]
    prefixed = [t.name for t in await tools.get_tools_with_prefix()]
    assert prefixed == ["svc_" + n for n in names]
