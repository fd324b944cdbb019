"""Keep secrets out of errors, logs, the Dagster event log and stored rows.

``redact(text)`` masks the password of every URL-shaped thing in a text, whether or not the
URL parses (``postgresql://user:pw@127.0.0.1:54x2/db`` has a bad port and still gets
``postgresql://user:***@127.0.0.1:54x2/db``): it works on the characters, never falls back to
the raw string. ``mask_secrets(text, secrets)`` replaces known secret values (an API key) with
``***`` wherever they appear, including their URL- and JSON-escaped forms.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Iterable, Optional

MASK = "***"

# scheme://user:password@  (anywhere in a text; the password runs to the last '@' of the token, so a
# password holding '@', '/' or ':' is masked whole)
_SCHEME_USERINFO = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://(?P<user>[^:/@\s'\"<>]*)):(?P<pw>[^\s'\"<>]*)@")
# user:password@host without a scheme, or with a broken one (postgresql//user:pw@host, postgresql:/u:pw@h)
_BARE_USERINFO = re.compile(r"(?P<head>(?:^|(?<=[\s/'\"=(<,\[]))[\w.%+\-]+):(?P<pw>[^\s/'\"<>]+)@(?=[\w.\-\[])")
# ?password=... / &password=... in a query string (libpq and SQLAlchemy accept the password there)
_QUERY_SECRET = re.compile(
    r"(?P<head>[?&](?:password|passwd|pwd|pass|secret|token|api[_-]?key|access[_-]?token)=)(?P<pw>[^&\s'\"<>#]*)",
    re.IGNORECASE)


def redact(url_or_text: Optional[str]) -> str:
    """``url_or_text`` with the password of every URL in it replaced by ``***``.

    Works on text (an error message that quotes a URL) as well as on a bare URL, parseable or
    not; a URL without a password is returned unchanged.
    """
    if url_or_text is None:
        return ""
    text = str(url_or_text)
    text = _SCHEME_USERINFO.sub(lambda m: f"{m['head']}:{MASK}@", text)
    text = _BARE_USERINFO.sub(lambda m: m.group(0) if m["pw"] == MASK else f"{m['head']}:{MASK}@", text)
    text = _QUERY_SECRET.sub(lambda m: f"{m['head']}{MASK}" if m["pw"] else m.group(0), text)
    return text


def _forms(secret: str) -> set[str]:
    """The secret as it may appear in a text: raw, percent-encoded, JSON-escaped."""
    forms = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret),
             json.dumps(secret)[1:-1]}
    return {f for f in forms if f}


def mask_secrets(text: Optional[str], secrets: Iterable[Optional[str]]) -> str:
    """``text`` with every occurrence of each non-empty secret replaced by ``***``."""
    if text is None:
        return ""
    text = str(text)
    forms = set()
    for secret in secrets:
        if secret:
            forms |= _forms(str(secret))
    for form in sorted(forms, key=len, reverse=True):  # longest first: a form never leaves a piece behind
        text = text.replace(form, MASK)
    return text


def scrub(text: Optional[str], secrets: Iterable[Optional[str]] = ()) -> str:
    """Both: URL passwords and the given secrets masked."""
    return redact(mask_secrets(text, secrets))
