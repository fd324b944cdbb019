"""Passwords that hold URL delimiters (issue 19, item 7).

``postgresql://u:Super@Secret99@127.0.0.1:1/db``: the password is ``Super@Secret99``. A URL
parser that splits the userinfo at its first ``@`` takes ``Secret99@127.0.0.1`` for the host, and
the driver then prints that "host" in its error, where no mask by URL shape finds it. The mask
runs from the scheme's ``//`` to the last ``@`` before the host, whatever the password holds; the
URL is handed to the driver with its userinfo percent-encoded, so the driver never sees a tail
of the password as a host; and a host name quoted by a driver never shows what precedes an ``@``.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa

from resources import database as D
from resources.secrets import MASK, quote_userinfo, redact

ODD_PASSWORDS = [
    "Super@Secret99",
    "a:b:c",
    "p/a/th",
    "ha#sh",
    "que?ry",
    "pe%rcent",
    "pe%zzrcent",
    "with space",
    "all @:/#?% of them",
    "@lead",
    "trail@",
    "x@h/y",
    "x@h:5432/y",
    "semi;colon'quote\"",
    "tab\there",
    "Sup3r@Secret99@again",
]
HOSTS = ["127.0.0.1:5432", "db.example.org", "[::1]:5432", "h1:5432,h2:5433"]


def _pieces(password: str, text: str) -> list[str]:
    """The parts of a password a wrong split could leave visible (3+ characters) that the rest
    of ``text`` does not hold anyway."""
    import re

    rest = text.replace(password, "")
    return [p for p in re.split(r"[@:/#?%\s;'\"]+", password) if len(p) >= 3 and p not in rest]


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("password", ODD_PASSWORDS)
def test_the_whole_password_is_masked_in_a_url(password, host):
    url = f"postgresql://u:{password}@{host}/db?sslmode=disable"
    assert redact(url) == f"postgresql://u:{MASK}@{host}/db?sslmode=disable"
    assert redact(f"postgresql+psycopg2://u:{password}@{host}") == f"postgresql+psycopg2://u:{MASK}@{host}"


@pytest.mark.parametrize("password", ODD_PASSWORDS)
def test_the_whole_password_is_masked_in_a_text(password):
    url = f"postgresql://u:{password}@127.0.0.1:5432/db"
    for text in (
        f"could not connect to '{url}': refused",
        f"results database {url} is not usable: boom",
        f"[{url}]",
        f"url={url}\nnext line stays: admin@example.org",
    ):
        masked = redact(text)
        assert "postgresql://u:***@127.0.0.1:5432/db" in masked, masked
        for piece in _pieces(password, text):
            assert piece not in masked, (piece, masked)
    assert redact(f"first line {url}\nmail admin@example.org").endswith("\nmail admin@example.org")


@pytest.mark.parametrize(
    "text, expected",
    [
        # an e-mail address after the URL on the same line is not taken for the host
        (
            "postgresql://u:pw@h/db failed; mail admin@example.org",
            "postgresql://u:***@h/db failed; mail admin@example.org",
        ),
        (
            "postgresql://u:pw@h:5432 failed; mail admin@example.org",
            "postgresql://u:***@h:5432 failed; mail admin@example.org",
        ),
        # host:port is not a password, even with an '@' further on the line
        ("http://127.0.0.1:8000/v1 (org/model@v2)", "http://127.0.0.1:8000/v1 (org/model@v2)"),
        ("http://127.0.0.1:3000/runs/abc by ops@example.org", "http://127.0.0.1:3000/runs/abc by ops@example.org"),
        # Azure-style user names hold an '@'
        ("postgresql://user@server:pw@server.example.org/db", "postgresql://user@server:***@server.example.org/db"),
        # two URLs on one line: each its own
        (
            "copy postgresql://a:p1@h1/db to postgresql://b:p@2@h2/db",
            "copy postgresql://a:***@h1/db to postgresql://b:***@h2/db",
        ),
        # already masked: unchanged
        ("postgresql://u:***@127.0.0.1:1/db", "postgresql://u:***@127.0.0.1:1/db"),
        # libpq's errors when a parser took the password's tail for the host
        (
            'could not translate host name "Secret99@127.0.0.1" to address: Name or service not known',
            'could not translate host name "***@127.0.0.1" to address: Name or service not known',
        ),
        (
            'connection to server at "Sec@ret99@db.example.org" (10.0.0.1), port 5432 failed',
            'connection to server at "***@db.example.org" (10.0.0.1), port 5432 failed',
        ),
        ("host=Secret99@127.0.0.1 port=1 dbname=db", "host=***@127.0.0.1 port=1 dbname=db"),
        ("dbname=db user=u password=Super@Secret99 host=h", "dbname=db user=u password=*** host=h"),
        ("dbname=db password='with space' host=h", "dbname=db password=*** host=h"),
    ],
)
def test_texts(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected


@pytest.mark.parametrize("password", ODD_PASSWORDS)
def test_quote_userinfo_hands_the_driver_the_password_and_host_meant(password):
    url = f"postgresql://u:{password}@127.0.0.1:5432/db?sslmode=disable"
    quoted = quote_userinfo(url)
    parsed = sa.engine.make_url(quoted)
    assert (parsed.username, parsed.password) == ("u", password)  # no password above holds a %XX escape
    assert (parsed.host, parsed.port, parsed.database) == ("127.0.0.1", 5432, "db")
    assert quote_userinfo(quoted) == quoted  # once is enough
    assert redact(quoted) == "postgresql://u:***@127.0.0.1:5432/db?sslmode=disable"


def test_an_escape_is_read_as_encoded():
    assert sa.engine.make_url(quote_userinfo("postgresql://u:p%40ss@w@h/db")).password == "p@ss@w"


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:////tmp/results.db",
        "postgresql://postgres@127.0.0.1:5432/db",
        "postgresql://u:p%40ss@h/db",
        "",
        "not a url",
    ],
)
def test_quote_userinfo_leaves_well_formed_urls_alone(url):
    assert quote_userinfo(url) == url


# ----------------------------------------------------------------------------- a run on a real instance folder
def _files_holding(folder: Path, secrets: list[str]) -> list[str]:
    hits = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path}: {s}" for s in secrets if s.encode() in data]
    return hits


def test_a_failed_materialization_stores_no_piece_of_the_password(tmp_path):
    """The results database resource given the raw URL (as the UI's runs give it, from
    FAIRNESS_DATABASE_URL) on an instance with its folder on disk: the step failure in the event
    log and the compute logs hold neither part of the password."""
    from fairness_assets.defs.reference import assets as ref
    from resources.settings import AuditGridResource, ReferenceDataResource

    url = "postgresql://u:Super@Secret99@127.0.0.1:1/db"
    home = tmp_path / "dagster_home"
    home.mkdir()
    database = D.ResultsDatabase(url=url)
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        result = dg.materialize(
            [ref.profiles],
            instance=instance,
            raise_on_error=False,
            resources={
                "database": database,
                "results_io": D.SQLResultsIOManager(database=database),
                "reference": ReferenceDataResource(),
                "audit_grid": AuditGridResource(design="demo"),
            },
        )
        assert not result.success
        records = instance.all_logs(result.run_id)
        failures = [r for r in records if r.dagster_event and r.dagster_event.is_step_failure]
        assert failures, "the step did not fail"
        error = failures[0].dagster_event.step_failure_data.error.to_string()
        assert "results database postgresql://u:***@127.0.0.1:1/db is not usable" in error
        for record in records:
            text = str(record) + (
                record.dagster_event.step_failure_data.error.to_string()
                if record.dagster_event and record.dagster_event.is_step_failure
                else ""
            )
            assert "Secret99" not in text and "Super" not in text, text[-2000:]
    assert list(home.rglob("*.err")) or list(home.rglob("compute_logs*")), "no compute log was written to check"
    assert _files_holding(tmp_path, ["Secret99", "Super@"]) == []


@pytest.mark.postgres
def test_the_results_database_reaches_the_host_meant_when_the_password_holds_an_at_sign(postgres_url):
    """UI and daemon runs open the database from FAIRNESS_DATABASE_URL as written: a password with
    an unencoded '@' is percent-encoded before the driver sees it (the server trusts local users,
    so any password is accepted once the right host is reached)."""
    url = sa.engine.make_url(postgres_url)
    raw = f"postgresql://{url.username}:Super@Secret99@{url.host}:{url.port or 5432}/{url.database}"
    db = D.ResultsDatabase(url=raw)
    try:
        assert db.count(D.Provenance) == 0
        assert "Secret99" not in db.describe()
    finally:
        db.dispose()
