"""cairn's HTTP API: ADK's ``api_server`` routes and cairn's own, over any session store.

``create_app(ServerSettings(...))`` builds the FastAPI app; ``app_from_env`` builds it
from ``CAIRN_*`` variables for ``uvicorn --factory cairn.server:app_from_env``.
See docs/server.md and docs/design/http-api-contract.md.
"""

from cairn.server.app import app_from_env, create_app
from cairn.server.settings import ServerSettings

__all__ = ["ServerSettings", "app_from_env", "create_app"]
