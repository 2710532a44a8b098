"""A small but real OAuth2 provider for tests, listening on 127.0.0.1 (an ephemeral port).

``authorize(auth_uri)`` plays the user's browser at the sign-in page: it
checks the request like a provider would and returns the redirect URL with
``?code=...&state=...``. The token endpoint (``POST /token``) is real HTTP:
it checks the client, the code, the redirect URI and the PKCE verifier,
issues tokens, and records every request it got.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

CLIENT_ID = "cairn-test-client"
CLIENT_SECRET = "client-s3cret"
REDIRECT_URI = "http://127.0.0.1/callback"


@dataclasses.dataclass
class TokenRequest:
    path: str
    form: dict[str, str]
    headers: dict[str, str]


@dataclasses.dataclass
class _Grant:
    client_id: str
    redirect_uri: str | None
    code_challenge: str | None
    scope: str


class FakeProvider:
    """An OAuth2 provider: authorization codes with PKCE, refresh tokens, client credentials."""

    def __init__(self) -> None:
        self.expires_in: int | None = 3600
        self.rotate_refresh_tokens = True
        self.form_encoded_responses = False
        self.next_failure: tuple[int, str, str] | None = None
        """(status, content type, body) to answer the next token request with."""
        self.requests: list[TokenRequest] = []
        self.client_secret = CLIENT_SECRET
        """The secret the token endpoint expects of client ``CLIENT_ID``."""
        self.token_tag = ""
        """Appended to every token issued (a test searching for tokens makes them unique)."""
        self.issued: list[str] = []
        """Every access, refresh and ID token issued, in order."""
        self._codes: dict[str, _Grant] = {}
        self._refresh_tokens: dict[str, _Grant] = {}
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # -- addresses ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def authorization_url(self) -> str:
        return f"{self.base_url}/authorize?prompt=consent"

    @property
    def token_url(self) -> str:
        return f"{self.base_url}/token"

    # -- the user's browser -------------------------------------------------------------------
    def authorize(self, auth_uri: str, *, approve: bool = True) -> str:
        """Sign in and consent at ``auth_uri``; the URL the provider redirects the browser to."""
        parts = urlsplit(auth_uri)
        assert f"{parts.scheme}://{parts.netloc}{parts.path}" == f"{self.base_url}/authorize"
        params = dict(parse_qsl(parts.query))
        assert params["response_type"] == "code", params
        assert params["client_id"] == CLIENT_ID, params
        redirect_uri = params.get("redirect_uri", REDIRECT_URI)
        if not approve:
            answer = {"error": "access_denied", "error_description": "The user said no"}
        else:
            assert params.get("code_challenge_method") == "S256", params
            code = f"code-{next(self._counter)}"
            with self._lock:
                self._codes[code] = _Grant(
                    CLIENT_ID,
                    params.get("redirect_uri"),
                    params.get("code_challenge"),
                    params.get("scope", ""),
                )
            answer = {"code": code}
        if "state" in params:
            answer["state"] = params["state"]
        return f"{redirect_uri}?{urlencode(answer)}"

    # -- the token endpoint -------------------------------------------------------------------
    def _token(self, form: dict[str, str], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        client_id, secret = form.get("client_id"), form.get("client_secret")
        authorization = headers.get("authorization", "")
        if authorization.startswith("Basic "):
            pair = base64.b64decode(authorization.removeprefix("Basic ")).decode()
            client_id, _, secret = (unquote(part) for part in pair.partition(":"))
        if client_id != CLIENT_ID or secret != self.client_secret:
            return 401, {"error": "invalid_client", "error_description": "Unknown client"}
        grant_type = form.get("grant_type")
        with self._lock:
            if grant_type == "authorization_code":
                grant = self._codes.pop(form.get("code", ""), None)
                if grant is None:
                    return 400, _invalid_grant("The code is unknown or was already used")
                if grant.redirect_uri is not None and form.get("redirect_uri") != (
                    grant.redirect_uri
                ):
                    return 400, _invalid_grant("redirect_uri differs from the authorization's")
                if grant.code_challenge is not None:
                    verifier = form.get("code_verifier", "")
                    digest = hashlib.sha256(verifier.encode()).digest()
                    challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
                    if challenge != grant.code_challenge:
                        return 400, _invalid_grant("PKCE verification failed")
                return 200, self._issue(grant, with_refresh_token=True)
            if grant_type == "refresh_token":
                token = form.get("refresh_token", "")
                grant = self._refresh_tokens.get(token)
                if grant is None:
                    return 400, _invalid_grant("The refresh token is invalid")
                if self.rotate_refresh_tokens:
                    del self._refresh_tokens[token]
                return 200, self._issue(grant, with_refresh_token=self.rotate_refresh_tokens)
            if grant_type == "client_credentials":
                grant = _Grant(CLIENT_ID, None, None, form.get("scope", ""))
                return 200, self._issue(grant, with_refresh_token=False)
        return 400, {"error": "unsupported_grant_type"}

    def _issue(self, grant: _Grant, *, with_refresh_token: bool) -> dict[str, Any]:
        number = next(self._counter)
        tag = self.token_tag
        tokens: dict[str, Any] = {"access_token": f"at-{number}{tag}", "token_type": "Bearer"}
        if self.expires_in is not None:
            tokens["expires_in"] = self.expires_in
        if with_refresh_token:
            tokens["refresh_token"] = f"rt-{number}{tag}"
            self._refresh_tokens[tokens["refresh_token"]] = grant
        if grant.scope:
            tokens["scope"] = grant.scope
        if "openid" in grant.scope.split():
            tokens["id_token"] = f"idt-{number}{tag}"
        self.issued += [
            tokens[k] for k in ("access_token", "refresh_token", "id_token") if k in tokens
        ]
        return tokens

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                form = dict(parse_qsl(self.rfile.read(length).decode()))
                headers = {name.lower(): value for name, value in self.headers.items()}
                provider.requests.append(TokenRequest(self.path, form, headers))
                if provider.next_failure is not None:
                    status, content_type, body = provider.next_failure
                    provider.next_failure = None
                    self._answer(status, content_type, body)
                elif self.path != "/token":
                    self._answer(404, "text/plain", "not found")
                elif "application/x-www-form-urlencoded" not in headers.get("content-type", ""):
                    self._answer(400, "application/json", '{"error": "invalid_request"}')
                else:
                    status, answer = provider._token(form, headers)
                    if provider.form_encoded_responses:
                        self._answer(status, "application/x-www-form-urlencoded", urlencode(answer))
                    else:
                        self._answer(status, "application/json", json.dumps(answer))

            def _answer(self, status: int, content_type: str, body: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    @contextmanager
    def running(self) -> Iterator[FakeProvider]:
        self._thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()


def _invalid_grant(description: str) -> dict[str, str]:
    return {"error": "invalid_grant", "error_description": description}
