"""Webhooks, against a real HTTP receiver on a local port: signed, retried, given up on,
deduplicated by their delivery id, re-delivered after a crash."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest
from tests.support.webhook_receiver import Reply, webhook_receiver

from cairn.runs.webhooks import (
    WebhookSettings,
    WebhookUrlError,
    WebhookVerificationError,
    check_webhook_url,
    deliver_pending,
    deliver_run_webhook,
    deliver_webhook,
    sign_webhook,
    verify_webhook,
)
from cairn.sessions import BaseSessionService
from cairn.sessions.run_store import RunStatus, RunStore, StoredRun, run_store_for

SECRET = "whsec-test-4f1a"
FAST = WebhookSettings(secret=SECRET, max_attempts=4, initial_backoff=0.001, max_delay=60.0)


def a_run(webhook: str | None, status: RunStatus = RunStatus.DONE, **fields: object) -> StoredRun:
    values: dict[str, object] = {
        "app_name": "app",
        "user_id": "u1",
        "session_id": "s1",
        "run_id": "run-1",
        "seq": 0,
        "status": status,
        "strategy": "enqueue",
        "request": {"newMessage": {"role": "user", "parts": [{"text": "the card is 4242"}]}},
        "created_at": 1_000.0,
        "started_at": 1_001.0,
        "ended_at": 1_002.5,
        "owner": "runs@host:1:abc",
        "webhook": webhook,
        "attempts": 1,
        "metadata": {"ticket": "T-7"},
    }
    values.update(fields)
    return StoredRun(**values)  # type: ignore[arg-type]


class Waits:
    """The ``sleep`` a delivery waits with: records the delay asked for, waits for none."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


async def test_a_signed_delivery_verifies_and_carries_the_run_without_secrets() -> None:
    with webhook_receiver() as receiver:
        url = f"{receiver.url}/hooks/cairn?token=hook-token-9"
        delivery = await deliver_webhook(a_run(url), FAST)
        [got] = receiver.wait_for(1)
    assert delivery.delivered and delivery.attempts == 1 and delivery.status_code == 200
    assert got.path == "/hooks/cairn?token=hook-token-9"
    assert got.headers["Cairn-Event"] == "run.done"
    assert got.headers["Cairn-Delivery"] == delivery.delivery_id
    assert got.headers["Content-Type"] == "application/json"
    payload = verify_webhook(got.body, got.headers, SECRET)
    assert payload == json.loads(got.body)
    assert payload["runId"] == "run-1" and payload["sessionId"] == "s1"
    assert payload["status"] == "done" and payload["endedAt"] == 1_002.5
    assert payload["metadata"] == {"ticket": "T-7"} and payload["error"] is None
    # What was asked, who ran it and the webhook's own URL (its token) stay out.
    for secret_text in ("4242", "hook-token-9", "runs@host", SECRET):
        assert secret_text not in got.body.decode()


async def test_a_failed_run_is_sent_with_its_error_and_its_event() -> None:
    error = {"type": "ToolExecutionError", "message": "the API said no"}
    with webhook_receiver() as receiver:
        run = a_run(receiver.url, RunStatus.FAILED, error=error)
        await deliver_webhook(run, FAST)
        [got] = receiver.wait_for(1)
    assert got.headers["Cairn-Event"] == "run.failed"
    assert verify_webhook(got.body, got.headers, SECRET)["error"] == error


async def test_without_a_secret_deliveries_are_unsigned() -> None:
    with webhook_receiver() as receiver:
        unsigned = WebhookSettings(secret=None, initial_backoff=0.001)
        assert (await deliver_webhook(a_run(receiver.url), unsigned)).delivered
        [got] = receiver.wait_for(1)
    assert "Cairn-Signature" not in got.headers
    with pytest.raises(WebhookVerificationError, match="no Cairn-Signature header"):
        verify_webhook(got.body, got.headers, SECRET)


async def test_5xx_answers_are_retried_with_one_delivery_id_until_it_succeeds() -> None:
    waits = Waits()
    with webhook_receiver(Reply(500), Reply(502)) as receiver:
        delivery = await deliver_webhook(a_run(receiver.url), FAST, sleep=waits)
        received = receiver.wait_for(3)
    assert delivery.delivered and delivery.attempts == 3
    assert [r.headers["Cairn-Delivery"] for r in received] == [delivery.delivery_id] * 3
    for request in received:  # each attempt is signed afresh and verifies
        verify_webhook(request.body, request.headers, SECRET)
    assert len(waits.delays) == 2 and all(0 < d <= 0.002 for d in waits.delays)


async def test_it_gives_up_after_max_attempts(caplog: pytest.LogCaptureFixture) -> None:
    waits = Waits()
    with webhook_receiver(*[Reply(503)] * 10) as receiver:
        url = f"{receiver.url}/hooks/T0K3N-in-path"
        delivery = await deliver_webhook(a_run(url), FAST, sleep=waits)
        received = receiver.wait_for(4)
    assert "given up after 4 attempt(s)" in caplog.text and receiver.url in caplog.text
    assert "T0K3N" not in caplog.text + (delivery.problem or "") and SECRET not in caplog.text
    assert not delivery.delivered and delivery.attempts == 4 == len(received)
    assert delivery.status_code == 503 and "answered 503" in (delivery.problem or "")
    assert len(waits.delays) == 3
    # Exponential: each ceiling doubles (jitter keeps a delay within its upper half).
    for retry, delay in enumerate(waits.delays):
        assert 0.001 * 2**retry / 2 <= delay <= 0.001 * 2**retry


async def test_a_4xx_answer_is_final() -> None:
    waits = Waits()
    with webhook_receiver(Reply(400), Reply(200)) as receiver:
        delivery = await deliver_webhook(a_run(receiver.url), FAST, sleep=waits)
        received = receiver.wait_for(1)
    assert not delivery.delivered and delivery.attempts == 1 and delivery.status_code == 400
    assert len(received) == 1 and waits.delays == []


async def test_429_waits_what_retry_after_asks() -> None:
    waits = Waits()
    with webhook_receiver(Reply(429, {"Retry-After": "7"}), Reply(503)) as receiver:
        delivery = await deliver_webhook(a_run(receiver.url), FAST, sleep=waits)
        receiver.wait_for(3)
    assert delivery.delivered and delivery.attempts == 3
    assert waits.delays[0] == 7.0  # the receiver's wish, not the 1 ms backoff
    assert waits.delays[1] < 0.01
    capped = WebhookSettings(secret=SECRET, initial_backoff=0.001, max_delay=2.0)
    waits = Waits()
    with webhook_receiver(Reply(429, {"Retry-After": "3600"})) as receiver:
        await deliver_webhook(a_run(receiver.url), capped, sleep=waits)
    assert waits.delays == [2.0]


async def test_connection_errors_are_retried_then_given_up() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits = Waits()
    delivery = await deliver_webhook(a_run(f"http://127.0.0.1:{port}/hook"), FAST, sleep=waits)
    assert not delivery.delivered and delivery.attempts == 4 and delivery.status_code is None
    assert "ConnectError" in (delivery.problem or "") and len(waits.delays) == 3


async def test_the_delivery_id_names_one_end_of_one_run() -> None:
    with webhook_receiver() as receiver:
        paused = a_run(receiver.url, RunStatus.PAUSED)
        done = a_run(receiver.url, RunStatus.DONE, attempts=2)
        first, again, end = [await deliver_webhook(run, FAST) for run in (paused, paused, done)]
        received = receiver.wait_for(3)
    assert first.delivery_id == again.delivery_id != end.delivery_id
    assert [r.headers["Cairn-Event"] for r in received] == ["run.paused"] * 2 + ["run.done"]


async def test_a_run_that_has_not_ended_is_not_sent() -> None:
    with webhook_receiver() as receiver:
        delivery = await deliver_webhook(a_run(receiver.url, RunStatus.RUNNING), FAST)
        assert receiver.received == []
    assert not delivery.delivered and "running" in (delivery.problem or "")


def test_verify_refuses_altered_bodies_other_secrets_and_old_timestamps() -> None:
    body = b'{"runId":"r1","status":"done"}'
    now = int(time.time())
    headers = {"cairn-signature": sign_webhook(body, SECRET, now)}  # any header case
    assert verify_webhook(body, headers, SECRET) == {"runId": "r1", "status": "done"}
    assert verify_webhook(body.decode(), headers, ["old-secret", SECRET])["runId"] == "r1"
    with pytest.raises(WebhookVerificationError, match="does not match"):
        verify_webhook(body.replace(b"done", b"fail"), headers, SECRET)
    with pytest.raises(WebhookVerificationError, match="does not match"):
        verify_webhook(body, headers, "another-secret")
    with pytest.raises(WebhookVerificationError, match="replayed"):
        verify_webhook(body, headers, SECRET, tolerance=60, now=now + 61)
    assert verify_webhook(body, headers, SECRET, tolerance=60, now=now + 59)["runId"] == "r1"
    with pytest.raises(WebhookVerificationError, match="malformed"):
        verify_webhook(body, {"Cairn-Signature": "v1=abc"}, SECRET)


def test_urls_must_be_http_and_on_the_allow_list() -> None:
    anywhere = WebhookSettings()
    assert check_webhook_url("https://hooks.example.com/x", anywhere)
    with pytest.raises(WebhookUrlError, match="http:// or https://"):
        check_webhook_url("file:///etc/passwd", anywhere)
    with pytest.raises(WebhookUrlError, match=r"not a URL|no host"):
        check_webhook_url("http://", anywhere)
    listed = WebhookSettings.from_env({"CAIRN_WEBHOOK_HOSTS": "hooks.example.com, *.acme.io"})
    assert check_webhook_url("https://HOOKS.example.com/x", listed)
    assert check_webhook_url("https://eu.acme.io/x", listed)
    for refused in ("http://169.254.169.254/latest", "https://acme.io.evil.net/", "http://acme.io"):
        with pytest.raises(WebhookUrlError, match="not in CAIRN_WEBHOOK_HOSTS") as error:
            check_webhook_url(refused, listed)
        assert "/latest" not in str(error.value)  # the path (maybe a token) is not shown


async def test_a_host_off_the_allow_list_is_never_called() -> None:
    with webhook_receiver() as receiver:
        settings = WebhookSettings(secret=SECRET, allowed_hosts=frozenset({"hooks.example.com"}))
        delivery = await deliver_webhook(a_run(receiver.url), settings)
        assert receiver.received == []
    assert not delivery.delivered and delivery.attempts == 0
    assert "CAIRN_WEBHOOK_HOSTS" in (delivery.problem or "")


def test_settings_from_the_environment() -> None:
    settings = WebhookSettings.from_env(
        {"CAIRN_WEBHOOK_SECRET": "s3", "CAIRN_WEBHOOK_MAX_ATTEMPTS": "3"}
    )
    assert settings.secret == "s3" and settings.max_attempts == 3
    assert settings.allowed_hosts is None and "s3" not in repr(settings)
    assert WebhookSettings.from_env({}).secret is None
    with pytest.raises(ValueError, match="whole number"):
        WebhookSettings.from_env({"CAIRN_WEBHOOK_MAX_ATTEMPTS": "many"})


@pytest.fixture
def store(sessions: BaseSessionService) -> RunStore:
    return run_store_for(sessions)


async def test_deliver_pending_sends_what_a_crash_left_undelivered(store: RunStore) -> None:
    with webhook_receiver() as receiver:
        rows = {
            "done": a_run(receiver.url, RunStatus.DONE, run_id="r-done"),
            "paused": a_run(receiver.url, RunStatus.PAUSED, run_id="r-paused"),
            "running": a_run(receiver.url, RunStatus.RUNNING, run_id="r-running"),
            "sent": a_run(receiver.url, RunStatus.FAILED, run_id="r-sent", webhook_done=True),
            "none": a_run(None, RunStatus.DONE, run_id="r-none"),
        }
        for row in rows.values():
            await store.create_run(row)
        # The process delivered r-done, then died before marking it: it is sent again, with
        # the same delivery id, so that the receiver can drop the repeat.
        before_crash = await deliver_webhook(rows["done"], FAST)
        deliveries = await deliver_pending(store, FAST)
        received = receiver.wait_for(3)
        assert await deliver_pending(store, FAST) == []
    assert sorted(d.run_id for d in deliveries) == ["r-done", "r-paused"]
    assert all(d.delivered for d in deliveries)
    ids = [r.headers["Cairn-Delivery"] for r in received]
    assert ids.count(before_crash.delivery_id) == 2 and len(set(ids)) == 2
    for run_id in ("r-done", "r-paused"):
        row = await store.get_run("app", "u1", "s1", run_id)
        assert row is not None and row.webhook_done
    running = await store.get_run("app", "u1", "s1", "r-running")
    assert running is not None and not running.webhook_done


async def test_a_webhook_given_up_on_is_marked_done(store: RunStore) -> None:
    with webhook_receiver(*[Reply(500)] * 10) as receiver:
        await store.create_run(a_run(receiver.url))
        [delivery] = await deliver_pending(store, FAST, sleep=Waits())
        receiver.wait_for(4)
    assert not delivery.delivered
    assert await store.undelivered_webhooks() == []


async def test_a_run_that_moved_on_keeps_its_next_delivery_pending(store: RunStore) -> None:
    with webhook_receiver() as receiver:
        first_pause = a_run(receiver.url, RunStatus.PAUSED, attempts=1)
        await store.create_run(first_pause)
        # Answered and paused again while the first pause was being reported.
        await store.update_run("app", "u1", "s1", "run-1", attempts=2)
        await deliver_run_webhook(store, first_pause, FAST)
        [pending] = await store.undelivered_webhooks()
        assert pending.attempts == 2
        [second] = await deliver_pending(store, FAST)
        received = receiver.wait_for(2)
    assert second.delivered and len({r.headers["Cairn-Delivery"] for r in received}) == 2
    assert await store.undelivered_webhooks() == []
