"""The alert resource against a real HTTP receiver and a real SMTP server (aiosmtpd) on loopback."""

from __future__ import annotations

import socket

import pytest

from resources.alerts import Alert, AlertDeliveryError, AlertResource
from tests.helpers.servers import Receiver, smtp_server

ALERT = Alert(
    kind="check_failure",
    title="parse-quality check parse_rate failed on recommendations",
    summary="parse rate 0.40 below 0.80",
    run_id="abc123",
    partition="m1|base",
    asset="recommendations",
    check="parse_rate",
    details={"observed": 0.4, "threshold": 0.8},
)


@pytest.fixture
def webhook():
    with Receiver() as r:
        yield r


@pytest.fixture
def smtp():
    with smtp_server() as server:
        yield server


def test_webhook_receives_the_alert_as_json(webhook):
    delivered = AlertResource(channels="webhook", webhook_url=webhook.url).send(ALERT)
    assert delivered == ["webhook"]
    assert len(webhook.posts) == 1
    post = webhook.posts[0]
    assert post["path"] == "/hooks/audit" and post["type"] == "application/json"
    body = post["json"]
    assert body["kind"] == "check_failure" and body["check"] == "parse_rate" and body["partition"] == "m1|base"
    assert "parse rate 0.40 below 0.80" in body["text"] and "observed: 0.4" in body["text"]


def test_email_reaches_the_smtp_server(smtp):
    port, received = smtp
    alerts = AlertResource(
        channels="email",
        smtp_host="127.0.0.1",
        smtp_port=port,
        email_from="audit@example.org",
        email_to="ops@example.org, lead@example.org",
    )
    assert alerts.send(ALERT) == ["email"]
    assert len(received) == 1
    msg = received[0]
    assert " ".join(str(msg["Subject"]).split()) == "[fairness-audit] " + ALERT.title  # unfolded header
    assert msg["To"] == "ops@example.org, lead@example.org" and msg["From"] == "audit@example.org"
    assert "partition: m1|base" in msg.get_payload()


def test_every_channel_at_once(webhook, smtp):
    port, received = smtp
    logged = []
    alerts = AlertResource(
        channels="log, webhook, email",
        webhook_url=webhook.url,
        smtp_host="127.0.0.1",
        smtp_port=port,
        email_to="ops@example.org",
    )
    assert alerts.send(ALERT, log=logged.append) == ["log", "webhook", "email"]
    assert len(logged) == 1 and len(webhook.posts) == 1 and len(received) == 1


def test_failures_name_the_channel_and_the_rest_still_deliver(webhook):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    alerts = AlertResource(
        channels="webhook,email",
        webhook_url=webhook.url,
        smtp_host="127.0.0.1",
        smtp_port=dead,
        email_to="ops@example.org",
        timeout_s=2,
    )
    with pytest.raises(AlertDeliveryError, match=rf"email: .*127.0.0.1:{dead}"):
        alerts.send(ALERT)
    assert len(webhook.posts) == 1  # the webhook was still tried and delivered

    with Receiver(status=500) as bad:
        with pytest.raises(AlertDeliveryError, match="HTTP 500"):
            AlertResource(channels="webhook", webhook_url=bad.url).send(ALERT)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"channels": "pager"}, "unknown channel"),
        ({"channels": "webhook"}, "FAIRNESS_ALERT_WEBHOOK_URL"),
        ({"channels": "email", "smtp_host": "127.0.0.1"}, "FAIRNESS_ALERT_EMAIL_TO"),
    ],
)
def test_misconfiguration_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AlertResource(**kwargs).send(ALERT)
