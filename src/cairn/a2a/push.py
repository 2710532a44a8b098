"""A2A push notifications: a task's state, POSTed to the URLs its clients configured.

A notification is the A2A ``StreamResponse`` JSON holding the task, sent with the runs'
webhook machinery (``cairn.runs.webhooks``): the URL is checked the same way (http or https,
``CAIRN_WEBHOOK_HOSTS``), no redirect is followed, failures are retried with backoff, and a
delivery is signed (``Cairn-Signature``) when ``CAIRN_WEBHOOK_SECRET`` is set. The config's
``token`` goes in ``X-A2A-Notification-Token`` and its ``authentication`` in ``Authorization``,
as the A2A SDK sends them.

Which stop of a task is notified, and by whom, is the handler's (``CairnRequestHandler``): each
stop is claimed in the store, so of all the servers watching a task one sends it, and a
server that starts watches again the tasks whose runs are active.
"""

from __future__ import annotations

import asyncio
import json
import logging

from a2a import types as a2a_types
from google.protobuf import json_format

from cairn.runs.webhooks import (
    WebhookSettings,
    WebhookUrlError,
    check_webhook_url,
    post_with_retries,
)
from cairn.sessions.a2a_store import A2aPushConfig, A2aStore

logger = logging.getLogger("cairn.a2a.push")

TOKEN_HEADER = "X-A2A-Notification-Token"


def config_json(config: a2a_types.TaskPushNotificationConfig) -> dict[str, object]:
    """What is stored of a config: its URL, token and authentication."""
    stored: dict[str, object] = {"url": config.url}
    if config.token:
        stored["token"] = config.token
    if config.HasField("authentication"):
        stored["authentication"] = {
            "scheme": config.authentication.scheme,
            "credentials": config.authentication.credentials,
        }
    return stored


def config_message(stored: A2aPushConfig) -> a2a_types.TaskPushNotificationConfig:
    """A stored config as the A2A SDK's message."""
    config = a2a_types.TaskPushNotificationConfig(
        id=stored.config_id, task_id=stored.task_id, url=str(stored.config.get("url", ""))
    )
    token = stored.config.get("token")
    if isinstance(token, str):
        config.token = token
    auth = stored.config.get("authentication")
    if isinstance(auth, dict):
        config.authentication.scheme = str(auth.get("scheme") or "")
        config.authentication.credentials = str(auth.get("credentials") or "")
    return config


class PushNotifier:
    """Sends a task to its push configs; ``check`` refuses a URL webhooks may not go to."""

    def __init__(self, store: A2aStore, settings: WebhookSettings | None = None) -> None:
        self.store = store
        self.settings = settings

    def _settings(self) -> WebhookSettings:
        return WebhookSettings.from_env() if self.settings is None else self.settings

    def check(self, url: str) -> None:
        """``WebhookUrlError`` for a URL push notifications may not go to."""
        check_webhook_url(url, self._settings())

    async def notify(self, app_name: str, task: a2a_types.Task) -> None:
        """POST ``task`` to each of its configs (at once; each retried on its own)."""
        configs = await self.store.list_push_configs(app_name, task.id)
        if not configs:
            return
        body = json.dumps(
            json_format.MessageToDict(a2a_types.StreamResponse(task=task)),
            separators=(",", ":"),
        ).encode()
        await asyncio.gather(*(self._send(config, body) for config in configs))

    async def _send(self, stored: A2aPushConfig, body: bytes) -> None:
        config = config_message(stored)
        settings = self._settings()
        try:
            url = check_webhook_url(config.url, settings)
        except WebhookUrlError as exc:
            logger.warning("push notification of task %s not sent: %s", stored.task_id, exc)
            return
        headers: dict[str, str] = {}
        if config.token:
            headers[TOKEN_HEADER] = config.token
        if config.authentication.scheme and config.authentication.credentials:
            auth = config.authentication
            headers["Authorization"] = f"{auth.scheme} {auth.credentials}"
        sent = await post_with_retries(url, body, headers, settings)
        if sent.problem is not None:
            logger.warning(
                "push notification of task %s given up after %d attempt(s): %s",
                stored.task_id,
                sent.attempts,
                sent.problem,
            )
