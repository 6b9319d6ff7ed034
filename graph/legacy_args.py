"""TF1's deprecated keyword spellings (``keep_dims``, ``reduction_indices``, ``dimension``, ``dim``),
accepted next to the current ones so TF1 programs run unchanged."""

from __future__ import annotations

from typing import Any

from antcolony.errors import GraphError


def resolve(value: Any, legacy: Any, name: str, legacy_name: str, default: Any = None) -> Any:
    """The argument given under either spelling; both at once (with different values) is an error."""
    if legacy is None:
        return default if value is None else value
    if value is not None and value != legacy:
        raise GraphError(f"pass only one of {name} and its deprecated spelling {legacy_name}")
    return legacy
