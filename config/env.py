"""The environment as a settings source: one typed reader per kind of value, one error wording.

Every ``ANTCOLONY_*``, ``TF_*`` and ``GPU_*`` variable the project reads goes through these
readers (``SessionConfig`` for sessions; the engine and allocators only when built on their own,
outside a session), so a variable has one meaning and one way to fail. A reader returns None
when the variable is unset or empty.
"""

from __future__ import annotations

import os

from antcolony.errors import ConfigError

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def env_str(name: str) -> str | None:
    raw = os.environ.get(name, "").strip()
    return raw or None


def env_int(name: str, minimum: int | None = None) -> int | None:
    raw = env_str(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"environment variable {name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ConfigError(f"environment variable {name}={raw!r} must be an integer >= {minimum}")
    return value


def env_bool(name: str) -> bool | None:
    raw = env_str(name)
    if raw is None:
        return None
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise ConfigError(f"environment variable {name}={raw!r} is not a boolean (use true/false)")


def env_float(name: str) -> float | None:
    raw = env_str(name)
    if raw is None:
        return None
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"environment variable {name}={raw!r} is not a number of seconds") from None


def env_mib(name: str) -> int | None:
    """A size given in MiB, in bytes."""
    mib = env_int(name, minimum=0)
    return None if mib is None else mib << 20
