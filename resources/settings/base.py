"""What every part of the configuration shares: the error it raises and the hash it records."""

from __future__ import annotations

import hashlib
import json
from typing import Any


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names it."""


def stable_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]
