"""Per-user isolation over HTTP: with JWT bearer tokens (or an authentication hook), a request
touches only its own user's sessions, artifacts, events and memory in its allowed apps;
listing every user and writing ``app:`` state are for admins."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import Request
from tests.server.auth_hooks import header_user
from tests.server.harness import asgi_client, run_body, sse_payloads, text, uvicorn_server
from tests.support.waiting import BOUND_SECONDS

from cairn.server import ServerSettings, create_app
from cairn.server.access import Principal
from cairn.server.settings import JWTSettings

SECRET = "a-test-secret-that-is-long-enough-for-hs256"
AUDIENCE = "cairn-tests"
ISSUER = "https://issuer.test"
SETTINGS = JWTSettings(
    secret=SECRET, audience=AUDIENCE, issuer=ISSUER, apps_claim="apps", admin_claim="roles"
)
ALL_APPS = ["clerk", "echo", "memo", "review", "streamer"]
HOOK = "tests.server.auth_hooks:header_user"


def token(
    user: str | None = "alice",
    *,
    apps: Any = ALL_APPS,
    roles: Any = None,
    lifetime: float = 3600,
    key: Any = SECRET,
    algorithm: str = "HS256",
    headers: dict[str, Any] | None = None,
    **claims: Any,
) -> str:
    payload: dict[str, Any] = {"aud": AUDIENCE, "iss": ISSUER, "exp": time.time() + lifetime}
    payload.update({"sub": user, "apps": apps, "roles": roles, **claims})
    payload = {k: v for k, v in payload.items() if v is not None}
    return jwt.encode(payload, key, algorithm=algorithm, headers=headers)


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


ALICE = bearer(token("alice"))
BOB = bearer(token("bob"))
ADMIN = bearer(token("root", roles=["admin"]))


@pytest.fixture
async def api() -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(jwt=SETTINGS) as client:
        yield client


async def _bobs_data(api: httpx.AsyncClient) -> None:
    """Bob's session ``b`` of each app: state, an artifact, a memory, a pending interrupt."""
    for app in ("echo", "memo", "clerk"):
        created = await api.post(
            f"/apps/{app}/users/bob/sessions",
            json={"sessionId": "b", "state": {"secret": "bob's", "user:plan": "gold"}},
            headers=BOB,
        )
        assert created.status_code == 200, created.text
    ran = await api.post("/run", json=run_body("echo", "b", "save bob-note", userId="bob"))
    assert ran.status_code == 401  # no token at all
    for app, message in (("echo", "save bob-note"), ("memo", "Bob's cat is Tofu"), ("clerk", "hi")):
        ran = await api.post("/run", json=run_body(app, "b", message, userId="bob"), headers=BOB)
        assert ran.status_code == 200, ran.text
    pending = await api.get("/cairn/apps/clerk/users/bob/sessions/b/interrupts", headers=BOB)
    assert len(pending.json()) == 1


async def test_a_user_cannot_read_list_or_write_another_users_data(
    api: httpx.AsyncClient,
) -> None:
    await _bobs_data(api)
    before = (await api.get("/apps/echo/users/bob/sessions/b", headers=BOB)).json()
    bob = "/apps/echo/users/bob/sessions"
    cairn_bob = "/cairn/apps/echo/users/bob/sessions"
    attempts = [
        ("GET", bob, None),
        ("POST", bob, {"sessionId": "planted"}),
        ("POST", bob + "/planted", {}),
        ("GET", bob + "/b", None),
        ("PATCH", bob + "/b", {"stateDelta": {"secret": "alice's"}}),
        ("DELETE", bob + "/b", None),
        ("GET", bob + "/b/artifacts", None),
        ("GET", bob + "/b/artifacts/note.txt", None),
        ("GET", bob + "/b/artifacts/note.txt/versions", None),
        ("GET", bob + "/b/artifacts/note.txt/versions/0", None),
        ("DELETE", bob + "/b/artifacts/note.txt", None),
        ("GET", cairn_bob, None),
        ("GET", cairn_bob + "/b", None),
        ("GET", cairn_bob + "/b/events", None),
        ("GET", cairn_bob + "/b/timeline", None),
        ("GET", cairn_bob + "/b/timeline?text=secret", None),
        ("GET", cairn_bob + "/b/verify", None),
        ("POST", cairn_bob + "/b/rewind", {"invocationId": "x"}),
        ("POST", cairn_bob + "/b/fork", {}),
        ("GET", "/cairn/apps/clerk/users/bob/sessions/b/interrupts", None),
        ("POST", "/cairn/apps/clerk/users/bob/sessions/b/interrupts/x", {"response": True}),
        ("GET", cairn_bob + "/b/invocations/x/nodes", None),
        ("PUT", cairn_bob + "/b/name", {"name": "planted"}),
        ("GET", cairn_bob + "/b/artifacts", None),
        ("POST", cairn_bob + "/b/artifacts", {"filename": "x.txt", "artifact": {"text": "x"}}),
        ("GET", cairn_bob + "/b/invocations/running", None),
        ("POST", cairn_bob + "/b/invocations/x/stop", None),
    ]
    for method, path, body in attempts:
        response = await api.request(method, path, json=body, headers=ALICE)
        assert response.status_code == 403, (method, path, response.text)
        detail = response.json()["detail"]
        assert "'alice'" in detail and "'bob'" in detail, detail
    # A run as Bob: his memory, his session, his state.
    for app, message in (("memo", "recall Tofu"), ("echo", "hi")):
        for route in ("/run", "/run_sse"):
            body = run_body(app, "b", message, userId="bob")
            response = await api.post(route, json=body, headers=ALICE)
            assert response.status_code == 403, (route, response.text)
    # Alice's own memory does not hold Bob's.
    await api.post("/apps/memo/users/alice/sessions", json={"sessionId": "a"}, headers=ALICE)
    mine = await api.post(
        "/run", json=run_body("memo", "a", "recall Tofu", userId="alice"), headers=ALICE
    )
    assert mine.json()[-1]["content"]["parts"][0]["text"] == "nothing"
    after = (await api.get("/apps/echo/users/bob/sessions/b", headers=BOB)).json()
    assert after == before
    assert (await api.get(bob + "/b/artifacts", headers=BOB)).json() == ["note.txt"]
    assert [s["id"] for s in (await api.get(bob, headers=BOB)).json()] == ["b"]


async def test_listing_every_user_is_for_admins(api: httpx.AsyncClient) -> None:
    await _bobs_data(api)
    await api.post("/apps/echo/users/alice/sessions", json={"sessionId": "a"}, headers=ALICE)
    for path in ("/cairn/apps/echo/users/*/sessions", "/apps/echo/users/*/sessions"):
        refused = await api.get(path, headers=ALICE)
        assert refused.status_code == 403 and "admin" in refused.json()["detail"]
    page = (await api.get("/cairn/apps/echo/users/*/sessions", headers=ADMIN)).json()
    assert page["total"] == 2
    assert {s["userId"] for s in page["sessions"]} == {"alice", "bob"}
    own = (await api.get("/cairn/apps/echo/users/alice/sessions", headers=ALICE)).json()
    assert [s["id"] for s in own["sessions"]] == ["a"]
    # An admin acts for any user.
    assert (await api.get("/apps/echo/users/bob/sessions/b", headers=ADMIN)).status_code == 200
    events = await api.get("/cairn/apps/echo/users/bob/sessions/b/events", headers=ADMIN)
    assert len(events.json()["events"]) == 2


async def test_app_state_is_written_only_by_admins(api: httpx.AsyncClient) -> None:
    base = "/apps/echo/users/alice/sessions"
    await api.post(base, json={"sessionId": "a"}, headers=ALICE)
    event = {"author": "user", "invocationId": "i", "actions": {"stateDelta": {"app:z": 1}}}
    writes = [
        ("POST", base, {"sessionId": "n1", "state": {"app:x": 1, "app:y": 2, "k": 3}}),
        ("POST", base, {"sessionId": "n2", "events": [event]}),
        ("POST", base + "/n3", {"app:x": 1}),
        ("PATCH", base + "/a", {"stateDelta": {"app:x": 1}}),
        ("PATCH", base + "/a", {"stateDelta": {}, "removedStateKeys": ["app:x"]}),
    ]
    for method, path, body in writes:
        refused = await api.request(method, path, json=body, headers=ALICE)
        assert refused.status_code == 403, (method, path, refused.text)
        assert "'app:" in refused.json()["detail"] and "admin" in refused.json()["detail"]
    assert "'app:x', 'app:y'" in (await api.post(base, json=writes[0][2], headers=ALICE)).text
    for route in ("/run", "/run_sse"):
        body = run_body("echo", "a", "hi", userId="alice", stateDelta={"app:x": 1})
        refused = await api.post(route, json=body, headers=ALICE)
        assert refused.status_code == 403 and "'app:x'" in refused.json()["detail"]
    listed = (await api.get(base, headers=ALICE)).json()
    assert [s["id"] for s in listed] == ["a"]  # no session was created by a refused request
    session = (await api.get(base + "/a", headers=ALICE)).json()
    assert session["state"] == {} and len(session["events"]) == 0
    # user: and session keys are the user's own; app: keys are an admin's.
    patched = await api.patch(
        base + "/a", json={"stateDelta": {"user:tz": "CET", "k": 1}}, headers=ALICE
    )
    assert patched.status_code == 200
    by_admin = await api.patch(base + "/a", json={"stateDelta": {"app:motd": "hi"}}, headers=ADMIN)
    assert by_admin.status_code == 200
    body = run_body("echo", "a", "hi", userId="alice", stateDelta={"app:n": 2})
    assert (await api.post("/run", json=body, headers=ADMIN)).status_code == 200
    created = await api.post(base, json={"sessionId": "c", "state": {"app:x": 1}}, headers=ADMIN)
    assert created.status_code == 200
    state = (await api.get(base + "/a", headers=ALICE)).json()["state"]
    assert state["app:motd"] == "hi" and state["app:n"] == 2 and state["app:x"] == 1
    assert state["user:tz"] == "CET" and state["k"] == 1


async def test_the_apps_claim_limits_the_apps() -> None:
    only_echo = bearer(token("alice", apps=["echo"]))
    no_apps = bearer(token("alice", apps=None))  # the claim is configured but absent
    async with asgi_client(jwt=SETTINGS) as api:
        assert (await api.get("/list-apps", headers=only_echo)).json() == ["echo"]
        assert (await api.get("/list-apps", headers=no_apps)).json() == []
        assert (await api.get("/cairn/apps/echo", headers=only_echo)).status_code == 200
        refused = await api.get("/cairn/apps/memo", headers=only_echo)
        assert refused.status_code == 403 and "'memo'" in refused.json()["detail"]
        body = run_body("memo", "s", "hi", userId="alice")
        assert (await api.post("/run", json=body, headers=only_echo)).status_code == 403
        path = "/apps/memo/users/alice/sessions"
        assert (await api.post(path, json={}, headers=only_echo)).status_code == 403
        assert (await api.post(path, json={}, headers=no_apps)).status_code == 403
    everything = JWTSettings(secret=SECRET, audience=AUDIENCE, issuer=ISSUER)  # no apps claim
    async with asgi_client(jwt=everything) as api:
        assert (await api.get("/list-apps", headers=only_echo)).json() == ALL_APPS


def _other_key_token() -> str:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return token("alice", key=private, algorithm="RS256")


REFUSED = {
    "no header": {},
    "not bearer": {"Authorization": "Basic YWxpY2U6cHc="},
    "empty bearer": {"Authorization": "Bearer "},
    "expired": bearer(token("alice", lifetime=-60)),
    "badly signed": bearer(token("alice", key="another-secret-that-is-long-enough-too")),
    "tampered": bearer(token("alice")[:-3] + "abc"),
    "wrong audience": bearer(token("alice", aud="someone-else")),
    "wrong issuer": bearer(token("alice", iss="https://evil.test")),
    "no expiry": bearer(token("alice", exp=None)),
    "unsigned": bearer(token("alice", key=None, algorithm="none")),
    "other algorithm": bearer(_other_key_token()),
    "user '*'": bearer(token("*")),
    "no user": bearer(token(None)),
    "not a token": bearer("hello"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSED))
async def test_refused_tokens_get_401_with_a_challenge(case: str, api: httpx.AsyncClient) -> None:
    headers = REFUSED[case]
    for method, path in (("GET", "/list-apps"), ("GET", "/apps/echo/users/alice/sessions")):
        response = await api.request(method, path, headers=headers)
        assert response.status_code == 401, response.text
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith('Bearer realm="cairn"')
        assert ("invalid_token" in challenge) == (
            case not in {"no header", "not bearer", "empty bearer"}
        )
        assert "Bearer <token>" in response.json()["detail"]
    if case == "expired":
        assert "expired" in response.json()["detail"]


async def test_user_star_cannot_be_created_over_http() -> None:
    """``*`` means every user in a listing path, so it is never a user of its own."""
    async with asgi_client(auto_create_session=True) as api:  # no authentication: anyone
        for path, body in (
            ("/apps/echo/users/*/sessions", {"sessionId": "s"}),
            ("/apps/echo/users/*/sessions/s", {}),
        ):
            response = await api.post(path, json=body)
            assert response.status_code == 422, response.text
            assert "'*' cannot be a user id" in response.json()["detail"]
        for route in ("/run", "/run_sse"):
            response = await api.post(route, json=run_body("echo", "s", "hi", userId="*"))
            assert response.status_code == 422 and "'*'" in response.json()["detail"]
        page = (await api.get("/cairn/apps/echo/users/*/sessions")).json()
        assert page["total"] == 0


async def test_a_custom_authenticate_hook_decides_who_the_request_is() -> None:
    async def async_hook(request: Request) -> Principal:
        return header_user(request)

    named = {"authenticate": HOOK}
    for client in (
        asgi_client(hook=header_user),
        asgi_client(hook=async_hook),
        asgi_client(**named),
    ):
        async with client as api:
            missing = await api.get("/list-apps")
            assert missing.status_code == 401 and missing.headers["www-authenticate"] == "X-User"
            assert (await api.get("/list-apps", headers={"X-User": "mallory"})).status_code == 403
            ada = {"X-User": "ada"}
            assert (await api.get("/list-apps", headers=ada)).json() == ["echo"]
            made = await api.post(
                "/apps/echo/users/ada/sessions", json={"sessionId": "s"}, headers=ada
            )
            assert made.status_code == 200
            ran = await api.post("/run_sse", json=run_body("echo", "s", "hi"), headers=ada)
            assert json.loads(sse_payloads(ran.text)[-1])["content"]["parts"][0]["text"]
            other = await api.get("/apps/echo/users/bob/sessions", headers=ada)
            assert other.status_code == 403
            ops = await api.get("/cairn/apps/echo/users/*/sessions", headers={"X-User": "ops"})
            assert ops.json()["total"] == 1


async def test_a_hook_that_returns_no_principal_is_a_server_error() -> None:
    async def broken(request: Request) -> Any:
        return {"user": "ada"}

    async with asgi_client(hook=broken) as api:
        response = await api.get("/list-apps")
        assert response.status_code == 500 and "echo" not in response.text


async def test_public_keys_and_jwks_verify_asymmetric_tokens(tmp_path: Path) -> None:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (tmp_path / "key.pem").write_bytes(pem)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
    jwk.update(kid="k1", use="sig", alg="RS256")
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [jwk]}))
    signed = token("alice", key=private, algorithm="RS256", headers={"kid": "k1"})
    unknown_kid = token("alice", key=private, algorithm="RS256", headers={"kid": "k2"})
    common = {"audience": AUDIENCE, "issuer": ISSUER}
    for source in (
        {"public_key_file": tmp_path / "key.pem"},
        {"jwks_file": tmp_path / "jwks.json"},
    ):
        async with asgi_client(jwt=JWTSettings(**source, **common)) as api:
            assert (await api.get("/list-apps", headers=bearer(signed))).status_code == 200
            hmac_token = bearer(token("alice"))  # HS256 with a secret: not accepted here
            assert (await api.get("/list-apps", headers=hmac_token)).status_code == 401
    async with asgi_client(jwt=JWTSettings(jwks_file=tmp_path / "jwks.json", **common)) as api:
        refused = await api.get("/list-apps", headers=bearer(unknown_kid))
        assert refused.status_code == 401 and "'k2'" in refused.json()["detail"]


def test_jwt_settings_from_the_environment_and_their_checks(tmp_path: Path) -> None:
    env = {
        "CAIRN_JWT_SECRET": SECRET,
        "CAIRN_JWT_AUDIENCE": AUDIENCE,
        "CAIRN_JWT_ISSUER": ISSUER,
        "CAIRN_JWT_ALGORITHMS": "HS256, HS512",
        "CAIRN_JWT_USER_CLAIM": "email",
        "CAIRN_JWT_APPS_CLAIM": "apps",
        "CAIRN_JWT_ADMIN_CLAIM": "scope",
        "CAIRN_JWT_ADMIN_VALUE": "cairn:admin",
        "CAIRN_JWT_LEEWAY_SECONDS": "5",
    }
    settings = ServerSettings.from_env(env).jwt
    assert settings == JWTSettings(
        secret=SECRET, audience=AUDIENCE, issuer=ISSUER, algorithms=("HS256", "HS512"),
        user_claim="email", apps_claim="apps", admin_claim="scope",
        admin_value="cairn:admin", leeway_seconds=5.0,
    )  # fmt: skip
    assert SECRET not in repr(ServerSettings.from_env(env))
    assert ServerSettings.from_env({}).jwt is None
    assert ServerSettings.from_env({"CAIRN_AUTHENTICATE": HOOK}).authenticate == HOOK
    with pytest.raises(ValueError, match="without a key"):
        ServerSettings.from_env({"CAIRN_JWT_AUDIENCE": "x"})
    with pytest.raises(ValueError, match="'none'"):
        JWTSettings(secret=SECRET, algorithms=("none",))
    with pytest.raises(ValueError, match="RS256 do not fit the secret"):
        JWTSettings(secret=SECRET, algorithms=("RS256",))
    with pytest.raises(ValueError, match="HS256 do not fit the public key file"):
        JWTSettings(public_key_file=tmp_path / "k.pem", algorithms=("HS256",))
    with pytest.raises(ValueError, match="exactly one key source"):
        JWTSettings(secret=SECRET, jwks_file=tmp_path / "jwks.json")
    with pytest.raises(ValueError, match="cannot be loaded"):
        create_app(ServerSettings(store="memory://", jwt=JWTSettings(jwks_file=tmp_path / "no")))
    with pytest.raises(ValueError, match="more than one way"):
        create_app(ServerSettings(store="memory://", api_key="k", jwt=JWTSettings(secret=SECRET)))
    with pytest.raises(ValueError, match="module:function"):
        create_app(ServerSettings(store="memory://", authenticate="no_colon"))


def test_scope_claims_and_admin_roles_over_a_real_uvicorn_process(tmp_path: Path) -> None:
    env = {
        "CAIRN_STORE": str(tmp_path / "sessions.db"),
        "CAIRN_JWT_SECRET": SECRET,
        "CAIRN_JWT_AUDIENCE": AUDIENCE,
        "CAIRN_JWT_ISSUER": ISSUER,
        "CAIRN_JWT_APPS_CLAIM": "apps",
        "CAIRN_JWT_ADMIN_CLAIM": "scope",
        "CAIRN_JWT_ADMIN_VALUE": "cairn:admin",
    }
    admin = bearer(token("ops", scope="read cairn:admin"))
    with (
        uvicorn_server(env, log=tmp_path / "server.log") as url,
        httpx.Client(base_url=url, timeout=BOUND_SECONDS) as client,
    ):
        bob = {"sessionId": "b", "state": {"user:plan": "gold"}}
        assert client.post("/apps/echo/users/bob/sessions", json=bob, headers=BOB).is_success
        assert client.post(
            "/run", json=run_body("echo", "b", "save x", userId="bob"), headers=BOB
        ).is_success
        for path in (
            "/apps/echo/users/bob/sessions/b",
            "/apps/echo/users/bob/sessions/b/artifacts",
            "/cairn/apps/echo/users/bob/sessions/b/events",
            "/cairn/apps/echo/users/*/sessions",
        ):
            assert client.get(path, headers=ALICE).status_code == 403, path
            assert client.get(path, headers=admin).status_code == 200, path
        run = run_body("echo", "b", "hi", userId="bob", newMessage=text("hi"))
        assert client.post("/run", json=run, headers=ALICE).status_code == 403
        patch = {"stateDelta": {"app:motd": "hello"}}
        assert (
            client.patch("/apps/echo/users/bob/sessions/b", json=patch, headers=BOB).status_code
            == 403
        )
        assert client.patch("/apps/echo/users/bob/sessions/b", json=patch, headers=admin).is_success
        expired = client.get("/list-apps", headers=bearer(token("alice", lifetime=-5)))
        assert expired.status_code == 401
        assert 'error="invalid_token"' in expired.headers["www-authenticate"]
        assert SECRET not in (tmp_path / "server.log").read_text()


def test_a_hook_named_in_the_environment_authenticates_a_uvicorn_process(tmp_path: Path) -> None:
    env = {"CAIRN_STORE": str(tmp_path / "sessions.db"), "CAIRN_AUTHENTICATE": HOOK}
    with (
        uvicorn_server(env, log=tmp_path / "server.log") as url,
        httpx.Client(base_url=url, timeout=BOUND_SECONDS) as client,
    ):
        missing = client.get("/list-apps")
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "X-User"
        ada = {"X-User": "ada"}
        assert client.get("/list-apps", headers=ada).json() == ["echo"]
        made = client.post("/apps/echo/users/ada/sessions", json={}, headers=ada)
        assert made.status_code == 200
        assert client.get("/apps/echo/users/bob/sessions", headers=ada).status_code == 403
        assert client.get("/list-apps", headers={"X-User": "mallory"}).status_code == 403
