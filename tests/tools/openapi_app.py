"""A small real REST API for the OpenAPI tool tests: a pet store with API-key, bearer, basic
and OAuth2-protected routes, served by uvicorn on a free port (``serve``).

Every request it answers is recorded (method, path, query, headers) so tests can see what
reached it; the OAuth2 route accepts the access tokens the test's provider issued and
has not revoked.
(No ``from __future__ import annotations``: FastAPI reads the annotations of the routes,
whose dependencies are local names.)
"""

import dataclasses
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import uvicorn
from fastapi import Cookie, Depends, FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import PlainTextResponse
from fastapi.security import (
    APIKeyHeader,
    APIKeyQuery,
    HTTPAuthorizationCredentials,
    HTTPBasic,
    HTTPBasicCredentials,
    HTTPBearer,
    OAuth2AuthorizationCodeBearer,
)
from pydantic import BaseModel
from tests.support.waiting import wait_until

API_KEY = "k-live-8842"
BEARER_TOKEN = "tok-5521-abc"
BASIC_USER, BASIC_PASSWORD = "ada", "pw-9917"


class Pet(BaseModel):
    name: str
    age: int
    tag: str | None = None


class StoredPet(Pet):
    id: int


class Folder(BaseModel):
    """A recursive schema (its $ref points back into itself)."""

    name: str
    children: list["Folder"] = []


@dataclasses.dataclass
class Seen:
    method: str
    path: str
    query: str
    headers: dict[str, str]


def create_app(
    valid_oauth_token: Callable[[str], bool] = lambda _: False,
    authorization_url: str = "https://sign-in.invalid/authorize",
    token_url: str = "https://sign-in.invalid/token",
) -> FastAPI:
    """The pets API; its OAuth2 route names ``authorization_url`` and ``token_url`` as its
    provider's and accepts the tokens ``valid_oauth_token`` accepts."""
    app = FastAPI(title="Pets", version="1.0")
    app.state.seen = []
    pets: dict[int, StoredPet] = {1: StoredPet(id=1, name="Rex", age=3, tag="dog")}

    @app.middleware("http")
    async def record(request: Request, call_next: Any) -> Any:
        app.state.seen.append(
            Seen(
                request.method,
                request.url.path,
                request.url.query,
                {k.lower(): v for k, v in request.headers.items()},
            )
        )
        return await call_next(request)

    @app.get("/pets/{pet_id}", operation_id="getPet")
    async def get_pet(
        pet_id: int,
        detail: bool = False,
        x_trace: Annotated[str | None, Header()] = None,
        session: Annotated[str | None, Cookie()] = None,
    ) -> dict[str, Any]:
        """Get a pet by its id."""
        pet = pets.get(pet_id)
        if pet is None:
            raise HTTPException(404, f"no pet {pet_id}")
        return {"pet": pet.model_dump(), "detail": detail, "trace": x_trace, "session": session}

    @app.get("/pets", operation_id="listPets")
    async def list_pets(
        limit: int = 10, tags: Annotated[list[str] | None, Query()] = None
    ) -> list[StoredPet]:
        """List the pets, optionally only those with one of the tags."""
        found = [p for p in pets.values() if not tags or p.tag in tags]
        return found[:limit]

    @app.post("/pets", operation_id="createPet", status_code=201)
    async def create_pet(pet: Pet) -> StoredPet:
        """Add a pet."""
        stored = StoredPet(id=max(pets) + 1, **pet.model_dump())
        pets[stored.id] = stored
        return stored

    @app.post("/folders", operation_id="saveFolder")
    async def save_folder(folder: Folder) -> dict[str, int]:
        """Save a folder tree."""

        def count(f: Folder) -> int:
            return 1 + sum(count(c) for c in f.children)

        return {"folders": count(folder)}

    @app.get("/notes/{name}", operation_id="readNote", response_class=PlainTextResponse)
    async def read_note(name: str) -> str:
        """A note, as plain text."""
        return f"note {name}"

    @app.get("/huge", operation_id="huge", response_class=PlainTextResponse)
    async def huge() -> str:
        return "x" * 1_500_000

    @app.get("/broken", operation_id="broken")
    async def broken() -> None:
        raise HTTPException(503, "the kennel database is down")

    key_header = APIKeyHeader(name="X-API-Key", auto_error=False)
    key_query = APIKeyQuery(name="api_key", auto_error=False)
    bearer = HTTPBearer(auto_error=False)
    basic = HTTPBasic(auto_error=False)
    oauth2 = OAuth2AuthorizationCodeBearer(
        authorizationUrl=authorization_url,
        tokenUrl=token_url,
        scopes={"calendar.read": "Read your calendar"},
        auto_error=False,
    )

    @app.get("/vault/header", operation_id="vaultByHeader")
    async def vault_header(key: Annotated[str | None, Depends(key_header)]) -> dict[str, str]:
        """Open the vault with an API key in a header."""
        if key != API_KEY:
            raise HTTPException(401, f"bad key {key!r}")
        return {"vault": "open", "via": "header"}

    @app.get("/vault/query", operation_id="vaultByQuery")
    async def vault_query(key: Annotated[str | None, Depends(key_query)]) -> dict[str, str]:
        """Open the vault with an API key in the query."""
        if key != API_KEY:
            raise HTTPException(401, f"bad key {key!r}")
        return {"vault": "open", "via": "query"}

    @app.get("/vault/bearer", operation_id="vaultByBearer")
    async def vault_bearer(
        given: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> dict[str, str]:
        """Open the vault with a bearer token."""
        if given is None or given.credentials != BEARER_TOKEN:
            # Echoes what it got, as careless APIs do: the tool must not pass it on.
            shown = given.credentials if given else None
            raise HTTPException(401, f"token {shown!r} is not valid")
        return {"vault": "open", "via": "bearer"}

    @app.get("/vault/basic", operation_id="vaultByBasic")
    async def vault_basic(
        given: Annotated[HTTPBasicCredentials | None, Depends(basic)],
    ) -> dict[str, str]:
        """Open the vault with a user name and password."""
        if given is None or (given.username, given.password) != (BASIC_USER, BASIC_PASSWORD):
            raise HTTPException(401, "bad user or password")
        return {"vault": "open", "via": "basic", "user": given.username}

    @app.get("/calendar/events", operation_id="listEvents")
    async def list_events(
        token: Annotated[str | None, Depends(oauth2)], day: str = "monday"
    ) -> dict[str, Any]:
        """The signed-in user's events of a day."""
        if token is None or not valid_oauth_token(token):
            raise HTTPException(
                401, "invalid token", headers={"WWW-Authenticate": 'Bearer error="invalid_token"'}
            )
        return {"day": day, "events": ["stand-up"], "token_ends": token[-4:]}

    return app


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """``app`` served by uvicorn on a free port of 127.0.0.1; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started or not thread.is_alive(), "uvicorn serving the pets app")
        assert thread.is_alive(), "uvicorn stopped before serving"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()
