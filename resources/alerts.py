"""Alerts: tell people when an audit run fails or a parse-quality check fails.

One resource, three channels, chosen by ``FAIRNESS_ALERT_CHANNELS`` (comma separated):

- ``log``      the Dagster log of the sensor tick (always safe; the default)
- ``webhook``  an HTTP POST of the alert as JSON to ``FAIRNESS_ALERT_WEBHOOK_URL``
               (Slack/Teams/Mattermost incoming webhooks accept the ``text`` field)
- ``email``    a plain-text e-mail over SMTP (``FAIRNESS_SMTP_HOST``, ``FAIRNESS_SMTP_PORT``,
               ``FAIRNESS_SMTP_USER``, ``FAIRNESS_SMTP_PASSWORD``, ``FAIRNESS_SMTP_STARTTLS``,
               ``FAIRNESS_ALERT_EMAIL_FROM``, ``FAIRNESS_ALERT_EMAIL_TO``)

Each alert links to its run in the Dagster UI: ``<FAIRNESS_UI_URL>/runs/<run id>``
(``ui_base_url``; default ``http://127.0.0.1:3000``, what ``dagster dev`` serves).

Delivery failures are not swallowed: every configured channel is tried, and each one that
failed is named with the reason (:meth:`AlertResource.send` raises :class:`AlertDeliveryError`;
the sensors log the failure and retry an alert that reached no channel on the next tick).
"""

from __future__ import annotations

import json
import smtplib
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from email.message import EmailMessage
from typing import Callable, Optional

from dagster import ConfigurableResource

CHANNELS = ("log", "webhook", "email")


class AlertDeliveryError(RuntimeError):
    """One or more alert channels could not deliver; the message names each one."""


@dataclass(frozen=True)
class Alert:
    """What happened, where, and how to find it."""

    kind: str  # "run_failure", "check_failure", "invalid_partition" or "tick_failure"
    title: str
    summary: str
    error: str = ""  # the cause of a run failure: the failed step's error message (trimmed)
    severity: str = "ERROR"
    job: str = ""
    run_id: str = ""
    partition: str = ""
    asset: str = ""
    check: str = ""
    details: dict = field(default_factory=dict)
    url: str = ""

    def as_text(self) -> str:
        lines = [f"[{self.severity}] {self.title}", "", self.summary, ""]
        if self.error and self.error not in self.summary:
            lines[-1:] = [f"error: {self.error}", ""]
        for label, value in (
            ("job", self.job),
            ("run", self.run_id),
            ("partition", self.partition),
            ("asset", self.asset),
            ("check", self.check),
            ("open", self.url),
        ):
            if value:
                lines.append(f"{label}: {value}")
        for key, value in self.details.items():
            lines.append(f"{key}: {value}")
        return "\n".join(lines).rstrip() + "\n"

    def as_json(self) -> dict:
        # `text` first: chat webhooks (Slack, Mattermost, Teams connectors) display it as is
        return {"text": self.as_text(), **asdict(self)}


class AlertResource(ConfigurableResource):
    """Sends :class:`Alert` s to the configured channels (see the module docstring)."""

    channels: str = "log"
    webhook_url: str = ""
    smtp_host: str = ""
    smtp_port: int = 25
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_starttls: bool = False
    email_from: str = "fairness-audit@localhost"
    email_to: str = ""
    timeout_s: float = 10.0
    ui_base_url: str = "http://127.0.0.1:3000"  # FAIRNESS_UI_URL: the UI the alerts link to

    def channel_list(self) -> list[str]:
        wanted = [c.strip().lower() for c in str(self.channels).split(",") if c.strip()]
        unknown = [c for c in wanted if c not in CHANNELS]
        if unknown:
            raise ValueError(f"FAIRNESS_ALERT_CHANNELS: unknown channel(s) {unknown}; choose from {list(CHANNELS)}")
        if "webhook" in wanted and not self.webhook_url:
            raise ValueError("alert channel 'webhook' is enabled but FAIRNESS_ALERT_WEBHOOK_URL is not set")
        if "email" in wanted and not (self.smtp_host and self.email_to):
            raise ValueError("alert channel 'email' needs FAIRNESS_SMTP_HOST and FAIRNESS_ALERT_EMAIL_TO")
        return wanted or ["log"]

    def run_url(self, run_id: str) -> str:
        return f"{self.ui_base_url.rstrip('/')}/runs/{run_id}" if run_id else ""

    def send(self, alert: Alert, log: Optional[Callable[[str], None]] = None) -> list[str]:
        """Deliver ``alert`` on every channel; returns the channels that delivered, raises
        :class:`AlertDeliveryError` naming every channel that failed."""
        delivered, errors = self.deliver(alert, log)
        if errors:
            raise AlertDeliveryError(f"alert {alert.title!r} not delivered on " + "; ".join(errors))
        return delivered

    def deliver(self, alert: Alert, log: Optional[Callable[[str], None]] = None) -> tuple[list[str], list[str]]:
        """Try every channel; returns (channels that delivered, '<channel>: <error>' of those that failed)."""
        delivered, errors = [], []
        for channel in self.channel_list():
            try:
                if channel == "log":
                    (log or print)(alert.as_text())
                elif channel == "webhook":
                    self._post(alert)
                elif channel == "email":
                    self._mail(alert)
                delivered.append(channel)
            except Exception as exc:  # noqa: BLE001 - every channel is tried, failures reported together
                errors.append(f"{channel}: {type(exc).__name__}: {exc}")
        return delivered, errors

    def _post(self, alert: Alert) -> None:
        body = json.dumps(alert.as_json(), default=str).encode("utf-8")
        request = urllib.request.Request(
            self.webhook_url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                if response.status >= 300:
                    raise RuntimeError(f"{self.webhook_url} answered HTTP {response.status}")
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"{self.webhook_url} answered HTTP {exc.code}: {exc.reason}") from exc
        except urllib.error.URLError as exc:
            raise RuntimeError(f"{self.webhook_url} not reachable: {exc.reason}") from exc

    def _mail(self, alert: Alert) -> None:
        message = EmailMessage()
        message["Subject"] = f"[fairness-audit] {alert.title}"
        message["From"] = self.email_from
        message["To"] = ", ".join(a.strip() for a in self.email_to.split(",") if a.strip())
        message.set_content(alert.as_text())
        try:
            with smtplib.SMTP(self.smtp_host, int(self.smtp_port), timeout=self.timeout_s) as smtp:
                if self.smtp_starttls:
                    smtp.starttls()
                if self.smtp_user:
                    smtp.login(self.smtp_user, self.smtp_password)
                smtp.send_message(message)
        except (OSError, smtplib.SMTPException) as exc:
            raise RuntimeError(f"SMTP {self.smtp_host}:{self.smtp_port}: {exc}") from exc
