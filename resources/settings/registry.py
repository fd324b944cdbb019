"""The model registry: registered model name -> where its weights or endpoint are.

``backend: http`` (a product's own API, not OpenAI-compatible) holds a request template instead
of weights: ``request`` (``url``, ``method``, ``headers``, ``body``), ``response`` (the field path
of the answer's text), ``timeout_s``, ``max_concurrency`` and ``requests_per_minute``, read into
:class:`HTTPSpec` and checked here, every error naming the model and the field
(``resources/llm/http_backend.py`` sends it)."""

from __future__ import annotations

import math
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import yaml

from fairness_assets.core.common.text import load_yaml

from ..secrets import redact
from .base import ConfigError
from .paths import MODEL_REGISTRY

FieldPath = tuple[Union[str, int], ...]

HTTP_FIELDS = ("request", "response", "timeout_s", "max_concurrency", "requests_per_minute")
HTTP_REQUEST_FIELDS = ("url", "method", "headers", "body")
HTTP_METHODS = ("POST", "PUT", "PATCH")  # a body carries the prompt
# placeholders of a body template: "{messages}" only as a whole value; "{prompt}" and "{seed}" also inside text
WHOLE_PLACEHOLDERS = ("{messages}", "{prompt}", "{seed}", "{max_tokens}", "{temperature}", "{top_p}")
INLINE_PLACEHOLDER = re.compile(r"\{(prompt|seed)\}")
ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP token (RFC 9110)
_PATH_PART = re.compile(r"\[(-?\d+)\]|\[\"((?:[^\"\\]|\\.)*)\"\]|(\.)?([^.\[\]]+)")


@dataclass(frozen=True, repr=False)
class HTTPSpec:
    """The request template of a ``backend: http`` entry (already checked). ``headers`` and ``url``
    may hold ``${VAR}`` references, read from the environment when the client is built; the repr
    shows the header names only and the URL without its userinfo and query string."""

    url: str
    response: str  # the field path as written, e.g. choices[0].message.content
    response_path: FieldPath
    body: Any
    method: str = "POST"
    headers: dict = field(default_factory=dict)
    timeout_s: Optional[float] = None
    max_concurrency: int = 4
    requests_per_minute: float = 0.0
    placeholders: frozenset = frozenset()  # those the body uses, e.g. {"{messages}", "{seed}"}

    def __repr__(self) -> str:
        return (
            f"HTTPSpec({self.method} {shown_url(self.url)}, headers {sorted(self.headers)}, "
            f"response {self.response!r}, max_concurrency {self.max_concurrency}, "
            f"requests_per_minute {self.requests_per_minute:g}, timeout_s {self.timeout_s})"
        )


@dataclass(frozen=True)
class ModelSpec:
    name: str
    source: str
    backend: str = "transformers"
    revision: Optional[str] = None
    gguf_file: Optional[str] = None
    parts: tuple[str, ...] = ()
    sha256: Optional[str] = None
    system_role: bool = True
    base_url: Optional[str] = None
    extra: dict = field(default_factory=dict)
    http: Optional[HTTPSpec] = None  # backend http: the request template


BACKENDS = ("transformers", "openai", "vllm", "http")


def shown_url(url: str) -> str:
    """``url`` as it may be printed: a userinfo replaced by ``***@``, a query string by ``?***``, a
    fragment dropped (``https://u:pw@h/api?key=k`` -> ``https://***@h/api?***``)."""
    text = redact(str(url))  # a password holding '/', '?' or '@' masked first (resources/secrets.py)
    head, sep, rest = text.partition("://")
    if not sep:
        head, rest = "", text
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = "***@" + authority.rsplit("@", 1)[1]
    path = path.split("#", 1)[0]
    path, query, _ = path.partition("?")
    if "?" in authority:  # no path: https://host?key=k
        authority, query = authority.split("?", 1)[0], "?"
    return (f"{head}://" if sep else "") + authority + slash + path + ("?***" if query else "")


def parse_field_path(text: str) -> FieldPath:
    """``choices[0].message.content`` -> ``("choices", 0, "message", "content")``: dotted keys,
    ``[i]`` indices (negative from the end), ``["a.b"]`` for a key holding dots or brackets, an
    optional leading ``$.``. Raises ValueError saying where the text stops making sense."""
    text = str(text).strip()
    rest = text[2:] if text.startswith("$.") else text[1:] if text.startswith("$[") else text
    if not rest:
        raise ValueError(f"field path {text!r} is empty")
    parts: list[Union[str, int]] = []
    pos = 0
    while pos < len(rest):
        m = _PATH_PART.match(rest, pos)
        if m is None or (m.group(4) is not None and bool(m.group(3)) != (pos > 0)):
            raise ValueError(
                f"field path {text!r}: cannot read it at character {pos + 1} ({rest[pos:]!r}); write dotted keys "
                'and [i] indices, e.g. choices[0].message.content, or ["a.b"] for a key with dots'
            )
        if m.group(1) is not None:
            parts.append(int(m.group(1)))
        elif m.group(2) is not None:
            parts.append(re.sub(r"\\(.)", r"\1", m.group(2)))
        else:
            parts.append(m.group(4))
        pos = m.end()
    return tuple(parts)


def _env_references(text: str, where: str) -> None:
    """``text`` uses ``${VAR}`` only in its well-formed shape; raises ConfigError naming ``where``."""
    if "${" in ENV_REFERENCE.sub("", text):
        raise ConfigError(
            f"{where}: a '${{' that is not a ${{VAR}} reference (a letter or '_', then letters, digits, _)"
        )


def _body_placeholders(value: Any, where: str, found: set) -> None:
    """Check the placeholders of a body template, collecting the names used into ``found``."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ConfigError(f"{where}: key {key!r} is not text (JSON object keys are)")
            _body_placeholders(item, f"{where}.{key}", found)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _body_placeholders(item, f"{where}[{i}]", found)
    elif isinstance(value, str):
        stripped = value.strip()
        if stripped in WHOLE_PLACEHOLDERS and stripped != value:
            raise ConfigError(f"{where}: {value!r} has spaces around the placeholder; write {stripped!r}")
        if value in WHOLE_PLACEHOLDERS:
            found.add(value)
        elif re.fullmatch(r"\{[A-Za-z_]+\}", value):
            raise ConfigError(f"{where}: unknown placeholder {value!r}; known: {', '.join(WHOLE_PLACEHOLDERS)}")
        elif "{messages}" in value:
            raise ConfigError(f"{where}: {{messages}} (a list of {{role, content}}) must be the whole value, not text")
        else:
            found.update("{" + m.group(1) + "}" for m in INLINE_PLACEHOLDER.finditer(value))
    elif value is not None and not isinstance(value, (bool, int, float)):
        raise ConfigError(f"{where}: a {type(value).__name__} is not a JSON value; quote it")


def _http_headers(headers: Any, where: str) -> dict:
    if headers is None:
        return {}
    if not isinstance(headers, dict):
        raise ConfigError(f"{where}: expected a mapping of header name to value")
    out = {}
    for key, value in headers.items():
        if not isinstance(key, str) or not _HEADER_NAME.fullmatch(key):
            raise ConfigError(f"{where}: {key!r} is not a valid header name")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            # the value is not shown: it may be a secret
            raise ConfigError(f"{where}.{key}: the value must be text (a {type(value).__name__} is given)")
        value = str(value)
        if "\n" in value or "\r" in value:
            raise ConfigError(f"{where}.{key}: the value holds a line break")
        _env_references(value, f"{where}.{key}")
        out[key] = value
    return out


def _http_url(url: Any, where: str) -> str:
    if not isinstance(url, str) or not url.strip():
        raise ConfigError(f"{where}: needed, the endpoint's URL (it may hold ${{VAR}} references)")
    url = url.strip()
    _env_references(url, where)
    if not url.startswith("${") and urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise ConfigError(f"{where}: {shown_url(url)!r} is not an http:// or https:// URL")
    return url


def _http_request(request: Any, where: str) -> tuple[set, dict]:
    """The placeholders its body uses, and ``url``, ``method``, ``headers`` and ``body`` of a
    checked ``request`` mapping."""
    if not isinstance(request, dict):
        raise ConfigError(f"{where}: needed, a mapping with url, method, headers and body")
    unknown = sorted(set(map(str, request)) - set(HTTP_REQUEST_FIELDS))
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {unknown}; known: {list(HTTP_REQUEST_FIELDS)}")
    method = str(request.get("method") or "POST").upper()
    if method not in HTTP_METHODS:
        raise ConfigError(f"{where}.method: {method!r} cannot carry the prompt in a body; use one of {HTTP_METHODS}")
    if "body" not in request:
        raise ConfigError(f"{where}.body: needed, the JSON body template holding {{messages}} or {{prompt}}")
    found: set = set()
    _body_placeholders(request["body"], f"{where}.body", found)
    if not found & {"{messages}", "{prompt}"}:
        raise ConfigError(f"{where}.body: holds neither {{messages}} nor {{prompt}}: the prompt would never be sent")
    return found, {
        "url": _http_url(request.get("url"), f"{where}.url"),
        "method": method,
        "headers": _http_headers(request.get("headers"), f"{where}.headers"),
        "body": request["body"],
    }


def _number(entry: dict, key: str, where: str, *, integer: bool, positive: bool, default):
    """``entry[key]`` checked: a (whole) number, more than 0 when ``positive``, else 0 or more."""
    value = entry.get(key)
    if value is None:
        return default
    kind = "a whole number" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where} {key}: {value!r} is not {kind}")
    if value < 0 or (positive and value == 0):
        raise ConfigError(f"{where} {key}: {value!r} must be {'more than 0' if positive else '0 or more'}")
    return value


def http_spec(entry: dict, where: str) -> HTTPSpec:
    """The :class:`HTTPSpec` of a ``backend: http`` registry entry; raises ConfigError naming
    ``where`` (the registry and the model) and the field."""
    if entry.get("base_url"):
        raise ConfigError(f"{where}: backend http takes its endpoint from request.url; remove base_url")
    placeholders, request = _http_request(entry.get("request"), f"{where}, field request")
    response = entry.get("response")
    if not isinstance(response, str) or not response.strip():
        raise ConfigError(f"{where}, field response: needed, the field path of the answer's text, e.g. output.text")
    try:
        path = parse_field_path(response)
    except ValueError as exc:
        raise ConfigError(f"{where}, field response: {exc}") from None
    fields = f"{where}, field"
    return HTTPSpec(
        response=response.strip(),
        response_path=path,
        timeout_s=_number(entry, "timeout_s", fields, integer=False, positive=True, default=None),
        max_concurrency=_number(entry, "max_concurrency", fields, integer=True, positive=True, default=4),
        requests_per_minute=float(
            _number(entry, "requests_per_minute", fields, integer=False, positive=False, default=0)
        ),
        placeholders=frozenset(placeholders),
        **request,
    )


def load_model_registry(path: str | Path = MODEL_REGISTRY) -> dict[str, ModelSpec]:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"model registry {path} not found")
    try:
        doc = load_yaml(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "unknown line"
        problem = ": ".join(str(x) for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x)
        raise ConfigError(f"model registry {path}, {where}: not valid YAML ({problem or exc})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"model registry {path} cannot be read: {exc}") from None
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, dict) or not models:
        raise ConfigError(f"{path}: expected a non-empty 'models:' mapping")
    out = {}
    known = set(ModelSpec.__dataclass_fields__) - {"name", "extra", "http"}
    for name, entry in models.items():
        if "|" in str(name):
            raise ConfigError(
                f"{path}: model name {name!r} contains '|', which separates model and template in "
                "partition keys; rename it"
            )
        if not isinstance(entry, dict) or not entry.get("source"):
            raise ConfigError(f"{path}: model {name!r} needs at least a 'source' (HF id, local path or URL)")
        backend = entry.get("backend", "transformers")
        if backend not in BACKENDS:
            raise ConfigError(f"{path}: model {name!r} has unknown backend {backend!r}; use one of {BACKENDS}")
        http = http_spec(entry, f"{path}: model {name!r}") if backend == "http" else None
        kwargs = {k: v for k, v in entry.items() if k in known}
        if "parts" in kwargs:
            kwargs["parts"] = tuple(kwargs["parts"] or ())
        taken = known | (set(HTTP_FIELDS) if http is not None else set())
        extra = {k: v for k, v in entry.items() if k not in taken}
        out[str(name)] = ModelSpec(name=str(name), extra=extra, http=http, **kwargs)
    return out
