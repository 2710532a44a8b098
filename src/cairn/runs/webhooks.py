"""Webhooks: a run that ends (done, failed, cancelled) or pauses is POSTed, as JSON, to its
``webhook`` URL.

A delivery is signed when ``CAIRN_WEBHOOK_SECRET`` is set: ``Cairn-Signature: t=<unix
seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">``; receivers check it with
``verify_webhook``. ``Cairn-Delivery`` names the delivery (the same on every retry, and on a
re-delivery after a crash: receivers drop repeats by it); ``Cairn-Event`` says what happened
(``run.done``, ``run.failed``, ``run.cancelled``, ``run.paused``). Connection errors, 5xx
and 429 are retried with exponential backoff and jitter (``Retry-After`` honoured), a
bounded number of times; any other answer is final. Delivery is at least once.

URLs are checked (http or https; with ``CAIRN_WEBHOOK_HOSTS`` set, only those hosts): a
webhook is a request the server makes on a client's behalf, so without an allow-list
anyone who may create runs may make the server call any address it can reach.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import hashlib
import hmac
import json
import logging
import os
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx2

from cairn.errors import CairnError, InputValidationError
from cairn.runs.view import run_json
from cairn.sessions.run_store import RunStatus, RunStore, StoredRun
from cairn.version import __version__

logger = logging.getLogger("cairn.runs.webhooks")

SIGNATURE_HEADER = "Cairn-Signature"
DELIVERY_HEADER = "Cairn-Delivery"
EVENT_HEADER = "Cairn-Event"
DEFAULT_TOLERANCE_SECONDS = 300.0
"""How old (or how far in the future) a signed delivery's timestamp may be for
``verify_webhook``."""

_DELIVERY_NAMESPACE = uuid.UUID("6f0c2a52-4d1e-4c53-9a3e-2b7d8e4f1a60")

Sleep = Callable[[float], Awaitable[None]]


class WebhookUrlError(InputValidationError):
    """A webhook URL that cairn will not call (not http/https, or a host outside
    ``CAIRN_WEBHOOK_HOSTS``)."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        super().__init__(f"the webhook URL {_where(url)!r} is refused: {reason}")


class WebhookVerificationError(CairnError, ValueError):
    """A delivery whose signature does not verify: not from cairn, altered, replayed too
    late, or signed with another secret. Answer it with 400 and do not act on it."""


@dataclasses.dataclass(frozen=True)
class WebhookSettings:
    """How webhooks are sent: the signing ``secret`` (None: unsigned), the hosts they may
    go to (None: any), and how hard to try."""

    secret: str | None = dataclasses.field(default=None, repr=False)
    allowed_hosts: frozenset[str] | None = None
    """Host names (lower case) webhooks may go to; ``*.example.com`` allows its subdomains."""
    max_attempts: int = 6
    """Attempts per delivery (the first one included)."""
    initial_backoff: float = 1.0
    """Seconds before the first retry; doubled on each one, with jitter."""
    max_delay: float = 300.0
    """The longest wait between two attempts (a larger ``Retry-After`` is cut to it)."""
    timeout: float = 10.0
    """Seconds for one attempt's connect, send and read."""

    def __post_init__(self) -> None:
        if self.secret == "":
            raise ValueError("the webhook secret must not be empty; unset it to send unsigned")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1; got {self.max_attempts}")
        if self.initial_backoff < 0 or self.max_delay < 0 or self.timeout <= 0:
            raise ValueError("backoff and delays must not be negative, the timeout positive")
        if self.allowed_hosts is not None:
            hosts = frozenset(h.strip().lower() for h in self.allowed_hosts if h.strip())
            object.__setattr__(self, "allowed_hosts", hosts)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WebhookSettings:
        """From ``CAIRN_WEBHOOK_SECRET``, ``CAIRN_WEBHOOK_HOSTS`` (comma-separated) and
        ``CAIRN_WEBHOOK_MAX_ATTEMPTS``."""
        env = os.environ if environ is None else environ
        hosts = env.get("CAIRN_WEBHOOK_HOSTS", "").strip()
        attempts = env.get("CAIRN_WEBHOOK_MAX_ATTEMPTS", "").strip()
        if attempts and not attempts.isdigit():
            raise ValueError(f"CAIRN_WEBHOOK_MAX_ATTEMPTS must be a whole number; got {attempts!r}")
        return cls(
            secret=env.get("CAIRN_WEBHOOK_SECRET") or None,
            allowed_hosts=frozenset(hosts.split(",")) if hosts else None,
            max_attempts=int(attempts) if attempts else cls.max_attempts,
        )


@dataclasses.dataclass(frozen=True)
class WebhookDelivery:
    """How one delivery went: ``delivered`` (a 2xx) or given up on, after ``attempts``."""

    run_id: str
    delivery_id: str
    event: str
    delivered: bool
    attempts: int
    status_code: int | None = None
    """The last answer's HTTP status (None: no answer, or never sent)."""
    problem: str | None = None
    """Why it was not delivered."""


def check_webhook_url(url: str, settings: WebhookSettings | None = None) -> str:
    """Return ``url`` if webhooks may go there, else raise ``WebhookUrlError`` saying why.
    Call it when a run or schedule is created, so that a bad URL is refused at once."""
    settings = WebhookSettings.from_env() if settings is None else settings
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError) as exc:
        raise WebhookUrlError(str(url), f"it is not a URL ({exc})") from None
    if parsed.scheme not in ("http", "https"):
        raise WebhookUrlError(url, "give an http:// or https:// URL")
    host = parsed.host.lower()
    if not host:
        raise WebhookUrlError(url, "it names no host")
    if settings.allowed_hosts is not None and not _host_allowed(host, settings.allowed_hosts):
        raise WebhookUrlError(
            url,
            f"the host {host!r} is not in CAIRN_WEBHOOK_HOSTS "
            f"({', '.join(sorted(settings.allowed_hosts)) or 'empty'}); use one of those "
            "hosts, or add it to the list",
        )
    return url


def _host_allowed(host: str, allowed: frozenset[str]) -> bool:
    return host in allowed or any(
        entry.startswith("*.") and host.endswith(entry[1:]) for entry in allowed
    )


def _where(url: str) -> str:
    """The URL's scheme, host and port only: a path or query may carry a token."""
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError):
        return "<not a URL>"
    port = f":{parsed.port}" if parsed.port is not None else ""
    return f"{parsed.scheme}://{parsed.host}{port}/..."


def webhook_event(run: StoredRun) -> str:
    """The ``Cairn-Event`` of the run's current status: ``run.done``, ``run.paused``, ..."""
    return f"run.{run.status.value}"


def delivery_id(run: StoredRun) -> str:
    """The delivery's id: the same for every attempt and re-delivery of this end (or pause)
    of the run, different for its next one."""
    parts = (*run.key, run.run_id, run.status.value, str(run.attempts))
    key = "\x1f".join(parts)
    return str(uuid.uuid5(_DELIVERY_NAMESPACE, key))


def sign_webhook(body: bytes, secret: str, timestamp: int) -> str:
    """The ``Cairn-Signature`` header value for ``body`` sent at ``timestamp``."""
    return f"t={timestamp},v1={_digest(body, secret, timestamp)}"


def _digest(body: bytes, secret: str, timestamp: int) -> str:
    signed = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def verify_webhook(
    body: bytes | str,
    headers: Mapping[str, str],
    secret: str | Sequence[str],
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
    *,
    now: float | None = None,
) -> dict[str, Any]:
    """Check a received delivery and return its JSON (the run).

    ``body`` is the request body exactly as received; ``headers`` its headers (any case);
    ``secret`` the sender's ``CAIRN_WEBHOOK_SECRET`` (or several, while rotating it).
    Raises ``WebhookVerificationError`` when the signature is missing or wrong, or when
    its timestamp is more than ``tolerance`` seconds from ``now`` (a replay).
    """
    raw = body.encode() if isinstance(body, str) else bytes(body)
    header = next((v for k, v in headers.items() if k.lower() == SIGNATURE_HEADER.lower()), None)
    if not header:
        raise WebhookVerificationError(
            f"the delivery has no {SIGNATURE_HEADER} header: the sender has no "
            "CAIRN_WEBHOOK_SECRET set, or the request is not from cairn"
        )
    timestamp: int | None = None
    signatures: list[str] = []
    for item in header.split(","):
        name, _, value = item.strip().partition("=")
        if name == "t" and value.isdigit():
            timestamp = int(value)
        elif name == "v1":
            signatures.append(value)
    if timestamp is None or not signatures:
        raise WebhookVerificationError(
            f"the {SIGNATURE_HEADER} header {header[:100]!r} is malformed: expected "
            "'t=<unix seconds>,v1=<hex digest>'"
        )
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError(
            f"the delivery was signed at {timestamp}, {abs(current - timestamp):.0f}s from now "
            f"(tolerance {tolerance:.0f}s): a replayed request, or a clock off; check the "
            "receiver's clock"
        )
    secrets = [secret] if isinstance(secret, str) else list(secret)
    expected = [_digest(raw, s, timestamp) for s in secrets]
    if not any(hmac.compare_digest(e, s) for e in expected for s in signatures):
        raise WebhookVerificationError(
            "the delivery's signature does not match its body: it was altered, or signed "
            "with another secret (verify with the sender's CAIRN_WEBHOOK_SECRET and the body "
            "bytes exactly as received, before parsing)"
        )
    try:
        payload = json.loads(raw)
    except ValueError:
        raise WebhookVerificationError("the signed body is not JSON") from None
    if not isinstance(payload, dict):
        raise WebhookVerificationError("the signed body is not a JSON object")
    return payload


def _retry_after(response: httpx2.Response, now: float) -> float | None:
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def _backoff(settings: WebhookSettings, retry: int) -> float:
    """Exponential backoff with jitter: between half and all of ``initial * 2**retry``."""
    ceiling: float = min(settings.max_delay, settings.initial_backoff * 2.0**retry)
    return ceiling * random.uniform(0.5, 1.0)


def _is_retried(status: int) -> bool:
    return status == 429 or status >= 500


async def deliver_webhook(
    run: StoredRun,
    settings: WebhookSettings | None = None,
    *,
    sleep: Sleep = asyncio.sleep,
) -> WebhookDelivery:
    """POST ``run`` to its webhook, retrying as the module says. Never raises for the
    receiver's failures: the result says how it went. ``sleep`` waits between attempts."""
    settings = WebhookSettings.from_env() if settings is None else settings
    event = webhook_event(run)
    ident = delivery_id(run)

    def outcome(attempts: int, status: int | None, problem: str | None) -> WebhookDelivery:
        return WebhookDelivery(
            run_id=run.run_id,
            delivery_id=ident,
            event=event,
            delivered=problem is None,
            attempts=attempts,
            status_code=status,
            problem=problem,
        )

    if not run.webhook:
        return outcome(0, None, "the run has no webhook")
    if not (run.status.ended or run.status is RunStatus.PAUSED):
        return outcome(0, None, f"the run is {run.status.value}: it has not ended or paused")
    try:
        url = check_webhook_url(run.webhook, settings)
    except WebhookUrlError as exc:
        logger.warning("webhook of run %s not sent: %s", run.run_id, exc)
        return outcome(0, None, str(exc))
    body = json.dumps(
        run_json(run, private=False), separators=(",", ":"), ensure_ascii=False
    ).encode()
    headers = {DELIVERY_HEADER: ident, EVENT_HEADER: event}
    sent = await post_with_retries(url, body, headers, settings, sleep=sleep)
    if sent.problem is not None:
        logger.warning(
            "webhook %s of run %s given up after %d attempt(s): %s",
            ident,
            run.run_id,
            sent.attempts,
            sent.problem,
        )
    return outcome(sent.attempts, sent.status_code, sent.problem)


@dataclasses.dataclass(frozen=True)
class PostOutcome:
    """How ``post_with_retries`` went: ``problem`` is None when a 2xx answered."""

    attempts: int
    status_code: int | None
    problem: str | None


async def post_with_retries(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    settings: WebhookSettings,
    *,
    sleep: Sleep = asyncio.sleep,
) -> PostOutcome:
    """POST ``body`` (JSON) to ``url`` (already checked with ``check_webhook_url``) as webhooks
    are sent: signed when ``settings`` has a secret, no redirect followed, connection errors,
    5xx and 429 retried with backoff. Never raises for the receiver's failures. A2A push
    notifications are sent with it too."""
    sent = {
        "Content-Type": "application/json",
        "User-Agent": f"cairn-webhooks/{__version__}",
        **headers,
    }
    status: int | None = None
    problem = "not sent"
    attempt = 0
    async with httpx2.AsyncClient(timeout=settings.timeout, follow_redirects=False) as client:
        for attempt in range(1, settings.max_attempts + 1):
            if settings.secret is not None:
                sent[SIGNATURE_HEADER] = sign_webhook(body, settings.secret, int(time.time()))
            wait: float | None = None
            try:
                response = await client.post(url, content=body, headers=sent)
            except httpx2.TransportError as exc:
                status, problem = None, f"{type(exc).__name__}: no answer from {_where(url)}"
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return PostOutcome(attempt, status, None)
                problem = f"{_where(url)} answered {status}"
                if not _is_retried(status):
                    break
                wait = _retry_after(response, time.time())
            if attempt == settings.max_attempts:
                break
            delay = _backoff(settings, attempt - 1)
            await sleep(delay if wait is None else min(max(wait, delay), settings.max_delay))
    return PostOutcome(attempt, status, problem)


async def deliver_run_webhook(
    store: RunStore,
    run: StoredRun,
    settings: WebhookSettings | None = None,
    *,
    sleep: Sleep = asyncio.sleep,
) -> WebhookDelivery:
    """Deliver ``run``'s webhook (or give up), then mark it ``webhook_done`` in ``store``,
    unless the run has moved on since (answered, running again, paused anew: that end has
    a delivery of its own)."""
    delivery = await deliver_webhook(run, settings, sleep=sleep)
    current = await store.get_run(run.app_name, run.user_id, run.session_id, run.run_id)
    if current is None or (current.status, current.attempts) != (run.status, run.attempts):
        return delivery
    await store.update_run(
        run.app_name,
        run.user_id,
        run.session_id,
        run.run_id,
        expect_status={run.status},
        webhook_done=True,
    )
    return delivery


async def deliver_pending(
    store: RunStore,
    settings: WebhookSettings | None = None,
    *,
    concurrency: int = 8,
    sleep: Sleep = asyncio.sleep,
) -> list[WebhookDelivery]:
    """Deliver the webhooks of runs that ended or paused without theirs (the process that
    ran them stopped first), at most ``concurrency`` at a time; each is then marked done.
    Call it when a server or worker starts."""
    settings = WebhookSettings.from_env() if settings is None else settings
    pending = await store.undelivered_webhooks()
    gate = asyncio.Semaphore(concurrency)

    async def one(run: StoredRun) -> WebhookDelivery:
        async with gate:
            return await deliver_run_webhook(store, run, settings, sleep=sleep)

    return list(await asyncio.gather(*(one(run) for run in pending)))


__all__ = [
    "DELIVERY_HEADER",
    "EVENT_HEADER",
    "SIGNATURE_HEADER",
    "PostOutcome",
    "WebhookDelivery",
    "WebhookSettings",
    "WebhookUrlError",
    "WebhookVerificationError",
    "check_webhook_url",
    "deliver_pending",
    "deliver_run_webhook",
    "deliver_webhook",
    "delivery_id",
    "post_with_retries",
    "run_json",
    "sign_webhook",
    "verify_webhook",
    "webhook_event",
]
