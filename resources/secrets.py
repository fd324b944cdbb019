"""Keep secrets out of errors, logs, the Dagster event log and stored rows.

``redact(text)`` masks the password of every URL-shaped thing in a text, whether or not the
URL parses (``postgresql://user:pw@127.0.0.1:54x2/db`` has a bad port and still gets
``postgresql://user:***@127.0.0.1:54x2/db``) and whatever the password holds: the mask runs
from the ':' after the user name to the LAST '@' before the host, so ``u:Super@Secret99@host``
becomes ``u:***@host``. It works on the characters, never falls back to the raw string.
``quote_userinfo(url)`` percent-encodes a URL's user name and password, so that a driver that
splits the userinfo at its first '@' does not take ``Secret99@host`` for the host (and print it).
``mask_secrets(text, secrets)`` replaces known secret values (an API key) with ``***`` wherever
they appear, including their URL- and JSON-escaped forms.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Iterable, Optional

MASK = "***"

# scheme:// (the start of a URL anywhere in a text)
_SCHEME = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://")
# a user name: up to the ':' that starts the password ('@' allowed: Azure's user@server)
_USER = re.compile(r"[^:/?#\s'\"<>]*:")
# what may follow the '@' that ends a userinfo: a host (name, IPv4, [IPv6], host lists h1:1,h2:2, a port,
# possibly malformed) holding no '@', then the end of the authority
_AUTHORITY = re.compile(r"[^/?#@\s'\"<>()`;]*(?=[/?#\s'\"<>()`;]|$)")
_HOST = re.compile(r"(?:\[[^\]]*\]|[A-Za-z0-9][A-Za-z0-9._~%\-]*)")  # an authority that starts like a host
_PORT_LIKE = re.compile(r"\d*(?:[/?#]\S*)?$")  # ':5432/db' after a host name: a port, not a password
# user:password@host without a scheme, or with a broken one (postgresql//user:pw@host, postgresql:/u:pw@h)
_BARE_USERINFO = re.compile(r"(?P<head>(?:^|(?<=[\s/'\"=(<,\[]))[\w.%+\-]+):(?P<pw>[^\s/'\"<>]+)@(?=[\w.\-\[])")
# ?password=... / &password=... in a query string (libpq and SQLAlchemy accept the password there)
_QUERY_SECRET = re.compile(
    r"(?P<head>[?&](?:password|passwd|pwd|pass|secret|token|api[_-]?key|access[_-]?token)=)(?P<pw>[^&\s'\"<>]*)",
    re.IGNORECASE,
)
# password=... in a libpq key=value connection string, quoted ('with space') or not
_CONNINFO_SECRET = re.compile(
    r"(?P<head>(?:^|(?<=\s))(?:password|passwd|pwd)\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|[^\s'\"]+)", re.IGNORECASE
)
# a host name as a driver quotes it (libpq: 'could not translate host name "X@h"', 'connection to server at
# "X@h"', 'host=X@h'): a host holds no '@', so what precedes the last '@' is the tail of a password that a
# parser splitting the userinfo at its first '@' took for the host
_QUOTED_HOST = re.compile(
    r"(?P<head>\b(?:host\s+name|server\s+at|hostaddr|host)\s*[=:]?\s*(?P<q>[\"']?))(?P<pw>[^\s\"'@]*(?:@[^\s\"'@]*)*)@"
    r"(?=[^\s\"'@]*(?P=q)(?:[\s,;).]|$))",
    re.IGNORECASE,
)


def _userinfo_end(text: str, start: int, stop: int) -> tuple[int, int] | None:
    """(where the password starts, where its '@' is) of the URL whose userinfo starts at ``start``
    (just after ``scheme://``), looking no further than ``stop``; None when it has no password.

    A password may hold any character, '@', '/', ':', '#', '?', '%' and spaces included, so it runs
    to the LAST '@' that is followed by a host (an authority without '@', then the end of the
    authority). An '@' after white space only counts when the first word of the would-be password
    is not a port (``host:5432/db ... a@b``), and a later ``user@example.org`` on the same line is
    not taken for the host when an '@' in the URL's own word is followed by one: an '@' after white
    space wins only where it is followed by a host with a port or a path.
    """
    user = _USER.match(text, start, stop)
    if user is None:
        return None
    pw_start = user.end()
    ends, in_word = [], []
    word_end = next((i for i in range(pw_start, stop) if text[i].isspace()), stop)
    for i in range(pw_start, stop):
        if text[i] == "@":
            auth = _AUTHORITY.match(text, i + 1, stop)
            if auth is not None and (auth.end() == stop or text[auth.end()] != "@"):
                ends.append((i, auth))
                if i < word_end:
                    in_word.append(i)
    if not ends:
        return None
    later = [(i, a) for i, a in ends if i >= word_end]
    if later and _PORT_LIKE.match(text, pw_start, word_end) and not in_word:
        later = []  # host:port/path, then an unrelated '@' further on
    strong = [
        i
        for i, a in later
        if _HOST.match(a.group()) and ((a.end() < stop and text[a.end()] in "/?#") or re.search(r":\d+$", a.group()))
    ]
    if strong:
        return pw_start, strong[-1]
    if in_word:
        return pw_start, in_word[-1]
    return (pw_start, later[-1][0]) if later else None


def _mask_userinfo(text: str) -> str:
    """Every URL's password in ``text`` masked; a URL's search for its host ends at the end of
    its line or where the next URL starts."""
    out, pos = [], 0
    for m in _SCHEME.finditer(text):
        start = m.end()
        if start < pos:
            continue
        line_end = text.find("\n", start)
        nxt = _SCHEME.search(text, start)
        stop = min(line_end if line_end >= 0 else len(text), nxt.start() if nxt else len(text))
        found = _userinfo_end(text, start, stop)
        if found is None:
            continue
        pw_start, at = found
        out.append(text[pos:pw_start] + MASK)
        pos = at
    out.append(text[pos:])
    return "".join(out)


def redact(url_or_text: Optional[str]) -> str:
    """``url_or_text`` with the password of every URL in it replaced by ``***``.

    Works on text (an error message that quotes a URL) as well as on a bare URL, parseable or
    not, whatever the password holds ('@', ':', '/', '#', '?', '%', spaces): the mask runs from the
    ':' after the user name to the last '@' before the host. A URL without a password is
    returned unchanged. Also masked: ``?password=``/``password=`` values, and what precedes an '@'
    in a host name a driver quotes (``host name "tail@127.0.0.1"``: a host holds no '@').
    """
    if url_or_text is None:
        return ""
    text = str(url_or_text)
    text = _mask_userinfo(text)
    text = _BARE_USERINFO.sub(lambda m: m.group(0) if m["pw"] == MASK else f"{m['head']}:{MASK}@", text)
    text = _QUERY_SECRET.sub(lambda m: f"{m['head']}{MASK}" if m["pw"] and m["pw"] != MASK else m.group(0), text)
    text = _CONNINFO_SECRET.sub(lambda m: f"{m['head']}{MASK}" if m["pw"] != MASK else m.group(0), text)
    text = _QUOTED_HOST.sub(lambda m: m.group(0) if m["pw"] in (MASK, "") else f"{m['head']}{MASK}@", text)
    return text


_UNRESERVED = "-._~!$&'()*+,;="  # unreserved and sub-delimiters: valid in a userinfo as they are
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def _quote_part(part: str) -> str:
    """``part`` percent-encoded for a userinfo; an existing ``%XX`` escape is kept (read as
    encoded, as URL parsers, SQLAlchemy and libpq read it), any other '%' encoded."""
    pieces, pos = [], 0
    for m in _ESCAPE.finditer(part):
        pieces.append(urllib.parse.quote(part[pos : m.start()], safe=_UNRESERVED))
        pieces.append(m.group(0))
        pos = m.end()
    pieces.append(urllib.parse.quote(part[pos:], safe=_UNRESERVED))
    return "".join(pieces)


def quote_userinfo(url: Optional[str]) -> str:
    """``url`` with its user name and password percent-encoded, so that every URL parser finds the
    host the user meant: ``postgresql://u:Super@Secret99@h/db`` -> ``postgresql://u:Super%40Secret99@h/db``
    (SQLAlchemy and libpq split a userinfo at its first '@', took ``Secret99@h`` for the host and
    printed it in their errors). The userinfo is found as :func:`redact` finds it: up to the last
    '@' before the host. A URL already encoded, without a userinfo or that is no URL is returned
    as it is."""
    if not url:
        return url or ""
    m = _SCHEME.match(url)
    if m is None:
        return url
    start = m.end()
    at = None
    for i in range(start, len(url)):
        if url[i] == "@":
            auth = _AUTHORITY.match(url, i + 1)
            if auth is not None and (auth.end() == len(url) or url[auth.end()] != "@"):
                at = i
    if at is None:
        return url
    userinfo = url[start:at]
    user, sep, password = userinfo.partition(":")
    quoted = _quote_part(user) + (sep + _quote_part(password) if sep else "")
    return url[:start] + quoted + url[at:]


def _forms(secret: str) -> set[str]:
    """The secret as it may appear in a text: raw, percent-encoded, JSON-escaped."""
    forms = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret), json.dumps(secret)[1:-1]}
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
