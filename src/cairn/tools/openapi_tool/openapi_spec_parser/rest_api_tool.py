"""``RestApiTool``: one operation of an OpenAPI document as a tool the model can call.

The model's arguments become the request (path, query, header and cookie parameters,
and the body); the credential goes where the security scheme says; the response body
is the tool's result. Whatever goes wrong (a missing argument, an unreachable host, an
HTTP error) comes back to the model as ``{"error": ...}``; a secret of the credential
never appears in a result or a log line.
"""

from __future__ import annotations

import base64
import json
import logging
import ssl
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

import httpx2
from fastapi.openapi.models import Operation
from google.genai import types
from pydantic import TypeAdapter

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_schemes import AuthScheme, scheme_from_foreign
from cairn.auth.auth_tool import AuthConfig
from cairn.auth.credential_manager import CredentialManager
from cairn.auth.errors import CredentialError, InvalidCredentialError
from cairn.auth.oauth2 import refresh, uses_oauth2
from cairn.tools.base_authenticated_tool import CredentialProblem, credential_for_call
from cairn.tools.base_tool import BaseTool
from cairn.tools.openapi_tool.auth.auth_helpers import credential_to_param
from cairn.tools.openapi_tool.common.common import ApiParameter, to_snake_case
from cairn.tools.openapi_tool.openapi_spec_parser._request_target import (
    BlockedTargetError,
    check_target,
    pinned_url,
)
from cairn.tools.openapi_tool.openapi_spec_parser.openapi_spec_parser import (
    OperationEndpoint,
    ParsedOperation,
)
from cairn.tools.openapi_tool.openapi_spec_parser.operation_parser import (
    MAX_TOOL_NAME_LENGTH,
    OperationParser,
)
from cairn.version import __version__

logger = logging.getLogger(__name__)

HttpxClientFactory = Callable[[], httpx2.AsyncClient]
"""Makes the HTTP client of one request (a fresh one each time: it is closed after the
request). For proxies, custom transports or timeouts of your own."""

DEFAULT_TIMEOUT = httpx2.Timeout(connect=10.0, read=60.0, write=60.0, pool=10.0)
"""Timeouts of a request made with cairn's own client (seconds)."""
MAX_RESPONSE_BYTES = 1_000_000
"""A response body longer than this is not read to its end: the model gets an error."""
ERROR_TEXT_LIMIT = 2_000
"""How much of an error response's body the model sees."""
PENDING_RESULT = {
    "pending": True,
    "message": "Waiting for the user to authorize access to this API; the call goes on "
    "once they have.",
}
"""The result while the user is asked for a credential (the call pauses meanwhile)."""

_SCHEME: TypeAdapter[AuthScheme] = TypeAdapter(AuthScheme)
_REDACTED = "[redacted]"


def snake_to_lower_camel(snake_case_string: str) -> str:
    """``snake_case`` -> ``snakeCase`` (a name without ``_`` is returned as it is)."""
    if "_" not in snake_case_string:
        return snake_case_string
    first, *rest = snake_case_string.split("_")
    return first.lower() + "".join(part.capitalize() for part in rest)


def _param_text(value: Any) -> str:
    """A path, header or cookie value as OpenAPI's default ``simple`` style writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_param_text(item) for item in value if item is not None)
    if isinstance(value, dict):
        return ",".join(f"{k},{_param_text(v)}" for k, v in value.items() if v is not None)
    return str(value)


class _RequestError(ValueError):
    """The model's arguments do not make a request (the message says why)."""


def _path_segment(name: str, value: Any) -> str:
    """A path parameter, percent-encoded (``/`` too); ``.`` and ``..`` segments refused, so
    a value cannot move the request to another path of the API."""
    text = _param_text(value)
    if any(part in (".", "..") for part in text.replace("\\", "/").split("/")):
        raise _RequestError(f"the path parameter {name!r} must not contain '.' or '..' segments")
    return quote(text, safe="")


def _scrub(value: Any, secrets: list[str]) -> Any:
    """``value`` with every occurrence of a secret replaced (an API that echoes the request
    back must not put its credential into the event log)."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, _REDACTED)
        return value
    if isinstance(value, list):
        return [_scrub(item, secrets) for item in value]
    if isinstance(value, dict):
        return {_scrub(k, secrets): _scrub(v, secrets) for k, v in value.items()}
    return value


class RestApiTool(BaseTool):
    """One REST operation as a tool. Usually made by ``OpenAPIToolset``; by hand, from an
    ``OperationEndpoint`` (base URL, path, method) and the OpenAPI operation object.

    Its name is the operation id in snake_case (at most 60 characters); its arguments are
    the operation's parameters (``OperationParser``). ``auth_scheme`` and
    ``auth_credential`` say how to authenticate (see ``cairn.auth``): a key or token the
    tool was given is used as it is; otherwise the user is asked, and OAuth2 tokens are
    kept by the Runner's ``credential_service`` and refreshed when they expire.

    Requests go to public hosts only unless ``allow_private_network_access=True``; each
    is bounded (``DEFAULT_TIMEOUT``, ``MAX_RESPONSE_BYTES``).
    """

    def __init__(
        self,
        name: str,
        description: str,
        endpoint: OperationEndpoint | str,
        operation: Operation | dict[str, Any] | str,
        auth_scheme: AuthScheme | dict[str, Any] | None = None,
        auth_credential: AuthCredential | str | None = None,
        should_parse_operation: bool = True,
        ssl_verify: bool | str | ssl.SSLContext | None = None,
        header_provider: Callable[[Any], dict[str, str]] | None = None,
        httpx_client_factory: HttpxClientFactory | None = None,
        *,
        credential_key: str | None = None,
        allow_private_network_access: bool = False,
    ) -> None:
        super().__init__(name=name[:MAX_TOOL_NAME_LENGTH], description=description)
        self.endpoint = (
            OperationEndpoint.model_validate_json(endpoint)
            if isinstance(endpoint, str)
            else endpoint
        )
        self._operation_parser = OperationParser(operation, should_parse=should_parse_operation)
        self.operation = self._operation_parser.operation
        self.auth_scheme: AuthScheme | None = None
        self.auth_credential: AuthCredential | None = None
        self.credential_key = credential_key
        self.configure_auth_scheme(auth_scheme)
        self.configure_auth_credential(auth_credential)
        self._ssl_verify = ssl_verify
        self._header_provider = header_provider
        self._httpx_client_factory = httpx_client_factory
        self._allow_private_network_access = allow_private_network_access
        self._default_headers: dict[str, str] = {}
        self._auth_problem: str | None = None

    @classmethod
    def from_parsed_operation(
        cls,
        parsed: ParsedOperation,
        ssl_verify: bool | str | ssl.SSLContext | None = None,
        header_provider: Callable[[Any], dict[str, str]] | None = None,
        httpx_client_factory: HttpxClientFactory | None = None,
        *,
        allow_private_network_access: bool = False,
    ) -> RestApiTool:
        """The tool of an operation ``OpenApiSpecParser`` read."""
        tool = cls(
            name=to_snake_case(parsed.name),
            description=parsed.description,
            endpoint=parsed.endpoint,
            operation=parsed.operation,
            auth_scheme=parsed.auth_scheme,
            auth_credential=parsed.auth_credential,
            should_parse_operation=False,
            ssl_verify=ssl_verify,
            header_provider=header_provider,
            httpx_client_factory=httpx_client_factory,
            allow_private_network_access=allow_private_network_access,
        )
        tool._operation_parser = OperationParser.load(
            parsed.operation, parsed.parameters, parsed.return_value
        )
        context = parsed.additional_context
        if isinstance(context, dict) and context.get("auth_problem"):
            tool._auth_problem = str(context["auth_problem"])
        return tool

    @classmethod
    def from_parsed_operation_str(cls, parsed_operation_str: str) -> RestApiTool:
        """The tool of a ``ParsedOperation`` given as JSON."""
        return cls.from_parsed_operation(ParsedOperation.model_validate_json(parsed_operation_str))

    # -- configuration ---------------------------------------------------------------------
    def configure_auth_scheme(self, auth_scheme: AuthScheme | dict[str, Any] | None) -> None:
        """Authenticate with ``auth_scheme`` (a scheme model, e.g. ``fastapi.openapi.models``'
        or cairn's, or its OpenAPI JSON); None for none."""
        if auth_scheme is None:
            self.auth_scheme = None
            return
        self.auth_scheme = _SCHEME.validate_python(scheme_from_foreign(auth_scheme))
        self._auth_problem = None

    def configure_auth_credential(
        self, auth_credential: AuthCredential | str | None = None
    ) -> None:
        """Authenticate with ``auth_credential`` (or its JSON): a key or token used as it is,
        or the OAuth2 client that signs users in."""
        if isinstance(auth_credential, str):
            auth_credential = AuthCredential.model_validate_json(auth_credential)
        self.auth_credential = auth_credential

    def configure_credential_key(self, credential_key: str | None = None) -> None:
        """Keep the credential under ``credential_key`` (shared by the tools that name it)."""
        self.credential_key = credential_key

    def configure_ssl_verify(self, ssl_verify: bool | str | ssl.SSLContext | None = None) -> None:
        """How cairn's client checks TLS certificates: True / None (the system's CAs), a CA
        bundle path, an ``ssl.SSLContext``, or False (no check: never in production)."""
        self._ssl_verify = ssl_verify

    def set_default_headers(self, headers: dict[str, str]) -> None:
        """Headers sent with every request, unless the request sets them itself."""
        self._default_headers = dict(headers)

    @property
    def auth_config(self) -> AuthConfig | None:
        """The auth config the tool's credential is asked for and kept under (None without
        an auth scheme)."""
        if self.auth_scheme is None:
            return None
        return AuthConfig(
            auth_scheme=self.auth_scheme,
            raw_auth_credential=self.auth_credential,
            credential_key=self.credential_key,
        )

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=self._operation_parser.get_json_schema(),
        )

    # -- a call ----------------------------------------------------------------------------
    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        return await self.call(args=args, tool_context=tool_context)

    async def call(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        """Send the request ``args`` describe; the response body (JSON, or ``{"text": ...}``)
        or ``{"error": ...}``; ``{"pending": True, ...}`` while the user is asked for a
        credential."""
        config = self.auth_config
        if config is None and self._auth_problem is not None:
            return self._error(f"the operation cannot be authenticated: {self._auth_problem}")
        credential: AuthCredential | None = None
        answered = False
        if config is not None:
            found = await credential_for_call(CredentialManager(config), tool_context, self.name)
            if isinstance(found, CredentialProblem):
                return found.as_result()
            if found is None:
                return dict(PENDING_RESULT)
            credential = found
            answered = (
                tool_context is not None and tool_context.get_auth_response(config) is not None
            )
        return await self._call_with(args, tool_context, config, credential, answered=answered)

    async def _call_with(
        self,
        args: dict[str, Any],
        tool_context: Any,
        config: AuthConfig | None,
        credential: AuthCredential | None,
        *,
        answered: bool,
        retried: bool = False,
    ) -> Any:
        secrets = _secrets_of(credential)
        try:
            request = self._request(args, config, credential, tool_context)
        except (_RequestError, InvalidCredentialError) as error:
            return self._error(str(error))
        try:
            status, headers, body = await self._send(request)
        except BlockedTargetError as error:
            return _scrub(self._error(str(error)), secrets)
        except httpx2.TimeoutException as error:
            return self._error(f"the request timed out ({type(error).__name__})")
        except _TooLarge as error:
            return self._error(str(error))
        except Exception as error:  # the network, whoever's client it is: the model is told
            logger.info("tool %s: the request failed: %s", self.name, type(error).__name__)
            return _scrub(
                self._error(f"the request failed: {type(error).__name__}: {error}"), secrets
            )
        logger.debug("tool %s: %s %s -> %d", self.name, request["method"], request["url"], status)
        if status == 401 and config is not None and uses_oauth2(config) and not retried:
            recovered = await self._recover(args, tool_context, config, credential, answered)
            if recovered is not None:
                return recovered
        return _scrub(self._result(status, headers, body), secrets)

    async def _recover(
        self,
        args: dict[str, Any],
        tool_context: Any,
        config: AuthConfig,
        credential: AuthCredential | None,
        answered: bool,
    ) -> Any:
        """After a 401 with OAuth2: refresh the token and try once more, or ask the user to
        sign in again; None if neither applies (the user just signed in: the API refuses
        the grant itself, so asking again would not help)."""
        if tool_context is None or answered:
            return None
        if credential is not None and credential.oauth2 and credential.oauth2.refresh_token:
            try:
                renewed = await refresh(credential, config)
            except CredentialError as error:
                logger.info("tool %s: refreshing after a 401 failed: %s", self.name, error)
            else:
                await CredentialManager(config).save_credential(tool_context, renewed)
                return await self._call_with(
                    args, tool_context, config, renewed, answered=False, retried=True
                )
        tool_context.request_credential(config)
        return dict(PENDING_RESULT)

    def _request(
        self,
        args: dict[str, Any],
        config: AuthConfig | None,
        credential: AuthCredential | None,
        tool_context: Any,
    ) -> dict[str, Any]:
        """The request ``args`` describe, as keywords of ``httpx2.AsyncClient.request``."""
        parameters = list(self._operation_parser.get_parameters())
        values = dict(args or {})
        missing = [
            p.name
            for p in parameters
            if p.required and values.get(p.name) is None and "default" not in p.param_schema
        ]
        if missing:
            raise _RequestError(
                f"the required argument(s) {', '.join(missing)} are missing; call the tool "
                "again with them"
            )
        for parameter in parameters:
            schema = parameter.param_schema
            if parameter.required and parameter.name not in values and "default" in schema:
                values[parameter.name] = schema["default"]
        if config is not None and credential is not None:
            placed, value = credential_to_param(config.auth_scheme, credential)
            if placed is not None and value is not None:
                parameters.insert(0, placed)
                values.update(value)
        return self._prepare_request_params(parameters, values, tool_context)

    def _prepare_request_params(
        self, parameters: list[ApiParameter], kwargs: dict[str, Any], tool_context: Any = None
    ) -> dict[str, Any]:
        path: dict[str, str] = {}
        query: dict[str, Any] = {}
        headers: dict[str, str] = {"User-Agent": f"cairn/{__version__} (tool: {self.name})"}
        cookies: dict[str, str] = {}
        by_name = {p.name: p for p in parameters}
        for name, value in kwargs.items():
            parameter = by_name.get(name)
            if parameter is None or value is None:
                continue
            where, original = parameter.param_location, parameter.original_name
            if where == "path":
                path[original] = _path_segment(original, value)
            elif where == "query":
                query[original] = value
            elif where == "header":
                headers[original] = _param_text(value)
            elif where == "cookie":
                cookies[original] = _param_text(value)
        try:
            route = self.endpoint.path.format(**path)
        except (KeyError, IndexError) as error:
            raise _RequestError(f"the path parameter {error.args[0]!r} has no value") from None
        url = self.endpoint.base_url.rstrip("/") + route
        parts = urlsplit(url)
        for key, value in parse_qsl(parts.query):  # a query written into the path template
            query.setdefault(key, value)
        request: dict[str, Any] = {
            "method": self.endpoint.method.upper(),
            "url": urlunsplit(parts._replace(query="", fragment="")),
            "params": query,
            "headers": headers,
        }
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        request.update(self._body(parameters, kwargs, headers))
        if self._header_provider is not None and tool_context is not None:
            headers.update(self._header_provider(tool_context) or {})
        for key, value in self._default_headers.items():
            headers.setdefault(key, value)
        return request

    def _body(
        self, parameters: list[ApiParameter], kwargs: dict[str, Any], headers: dict[str, str]
    ) -> dict[str, Any]:
        found = self._operation_parser.request_body()
        if found is None:
            return {}
        media_type, schema = found
        body_parameters = [p for p in parameters if p.param_location == "body"]
        if schema.get("type") == "object":
            data: Any = {
                p.original_name: kwargs[p.name] for p in body_parameters if p.name in kwargs
            }
        else:
            data = next((kwargs.get(p.name) for p in body_parameters), None)
        if media_type != "multipart/form-data":
            headers["Content-Type"] = media_type
        if media_type == "application/json" or media_type.endswith("+json"):
            return {"json": data} if data is not None else {}
        if media_type == "application/x-www-form-urlencoded":
            return {"data": data}
        if media_type == "multipart/form-data":
            return {"files": data}
        if data is None:
            return {}
        return {"content": data if isinstance(data, str | bytes) else json.dumps(data)}

    async def _send(self, request: dict[str, Any]) -> tuple[int, httpx2.Headers, bytes]:
        """Send ``request`` to the checked address; (status, headers, body)."""
        target = await check_target(
            request["url"], allow_private=self._allow_private_network_access
        )
        if self._httpx_client_factory is not None:
            client = self._httpx_client_factory()
            addresses = None  # the factory's client may proxy or route as it likes
        else:
            verify = True if self._ssl_verify is None else self._ssl_verify
            client = httpx2.AsyncClient(timeout=DEFAULT_TIMEOUT, verify=verify)
            addresses = target.addresses
        async with client:
            if not addresses:
                return await _read(client, request)
            original = urlsplit(request["url"])
            headers = {**request["headers"], "Host": original.netloc}
            last: Exception | None = None
            for address in addresses:
                pinned = {
                    **request,
                    "url": pinned_url(request["url"], address),
                    "headers": headers,
                    "extensions": {"sni_hostname": target.hostname},
                }
                try:
                    return await _read(client, pinned)
                except httpx2.ConnectError as error:
                    last = error
            assert last is not None
            raise last

    # -- results ---------------------------------------------------------------------------
    def _result(self, status: int, headers: httpx2.Headers, body: bytes) -> Any:
        text = _decode(headers, body)
        if status >= 400:
            shown = text if len(text) <= ERROR_TEXT_LIMIT else text[:ERROR_TEXT_LIMIT] + "..."
            return self._error(f"the API answered HTTP {status}: {shown}")
        if not body:
            return {"status_code": status}
        try:
            return json.loads(text)
        except ValueError:
            return {"text": text}

    def _error(self, message: str) -> dict[str, str]:
        return {
            "error": f"Tool {self.name} failed: {message}. Check the arguments against the "
            "tool's parameters, and call it again only if a change would help."
        }

    def __repr__(self) -> str:
        return (
            f"RestApiTool(name={self.name!r}, method={self.endpoint.method.upper()}, "
            f"url={self.endpoint.base_url}{self.endpoint.path!s})"
        )


class _TooLarge(Exception):
    """A response body past ``MAX_RESPONSE_BYTES``."""


async def _read(
    client: httpx2.AsyncClient, request: dict[str, Any]
) -> tuple[int, httpx2.Headers, bytes]:
    method, url = request["method"], request["url"]
    options = {k: v for k, v in request.items() if k not in ("method", "url")}
    async with client.stream(method, url, follow_redirects=False, **options) as response:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise _TooLarge(
                    f"the response is larger than {MAX_RESPONSE_BYTES} bytes, more than a tool "
                    "result may hold; ask the API for less (a filter, a page size)"
                )
            chunks.append(chunk)
        return response.status_code, response.headers, b"".join(chunks)


def _decode(headers: httpx2.Headers, body: bytes) -> str:
    content_type = headers.get("content-type", "")
    charset = "utf-8"
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = value.strip('"')
    try:
        return body.decode(charset, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _secrets_of(credential: AuthCredential | None) -> list[str]:
    """Every secret string ``credential`` holds, longest first (so none is left partly)."""
    if credential is None:
        return []
    found = [credential.api_key]
    if credential.http is not None:
        given = credential.http.credentials
        found += [given.token, given.password]
        if given.username is not None and given.password:
            pair = f"{given.username}:{given.password}".encode()
            found.append(base64.b64encode(pair).decode("ascii"))
    if credential.oauth2 is not None:
        oauth2 = credential.oauth2
        found += [oauth2.access_token, oauth2.refresh_token, oauth2.id_token, oauth2.client_secret]
    return sorted({s for s in found if s and len(s) >= 4}, key=len, reverse=True)
