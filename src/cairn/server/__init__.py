"""cairn's HTTP API: ADK's ``api_server`` routes and cairn's own, over any session store.

``create_app(ServerSettings(...))`` builds the FastAPI app; ``app_from_env`` builds it
from ``CAIRN_*`` variables for ``uvicorn --factory cairn.server:app_from_env``. Every API
route passes one authentication dependency (``cairn.server.auth``): JWT bearer tokens
(``JWTSettings``), a hook that returns a ``Principal``, the shared API key, or none (the
default).
See docs/server.md and docs/design/http-api-contract.md.
"""

from cairn.server.access import Principal
from cairn.server.app import app_from_env, create_app
from cairn.server.settings import JWTSettings, ServerSettings

__all__ = ["JWTSettings", "Principal", "ServerSettings", "app_from_env", "create_app"]
