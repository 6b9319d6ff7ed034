"""The status file (AntMan's ``GPU_STATUS_FILE``): schema, atomic writes, reading.

The job reports its memory and step-time statistics for a scheduler to read::

    {"gpuUsageInfo": {"00:04.0": {"deviceMemUsedMax": ..., "deviceMemUsedMin": ...,
                                  "deviceMemPoolSize": ..., "deviceMemStable": ...,
                                  "hostMemUsedMax": ..., "hostMemUsedMin": ...,
                                  "hostMemPoolSize": ..., "swapReason": "",
                                  "deviceMemUsedNvidia": -1}},
     "miniBatchDuration": <us>,
     "Durations": {"graph_<id>": <us>}}

Memory figures are bytes; durations are microseconds; ``deviceMemUsedNvidia`` is -1 when NVML
cannot tell; ``swapReason`` is ``""``, ``"OOM"`` or ``"FRAGMENT"``.

``write_status_atomic`` writes a temporary file in the target's directory, fsyncs it and
renames it over the target (``os.replace``, atomic on POSIX), so a reader sees either the old
or the new file, never a torn one (AntMan truncated and rewrote the file in place). When to
write is the statistics dumper's business, not this module's.

The contract, and what is fixed relative to AntMan: docs/design.md section 6.
"""

from __future__ import annotations

import asyncio
import json
import math
import operator
import os
from collections.abc import Mapping
from typing import Any

from antcolony.errors import ConfigError

from .atomic_file import write_file_atomic_async
from .bounded_read import read_regular_file
from .json_text import load_json
from .resource_config import normalize_gpu_key

__all__ = [
    "GPU_USAGE_FIELDS",
    "STATUS_FILE_ENV",
    "SWAP_REASONS",
    "build_status",
    "load_status",
    "parse_status",
    "read_status",
    "status_file_from_env",
    "validate_status",
    "write_status_atomic",
]

STATUS_FILE_ENV = "GPU_STATUS_FILE"
"""Environment variable naming the status file (AntMan's name)."""

GPU_USAGE_FIELDS: tuple[str, ...] = (
    "deviceMemUsedMax",
    "deviceMemUsedMin",
    "deviceMemPoolSize",
    "deviceMemStable",
    "hostMemUsedMax",
    "hostMemUsedMin",
    "hostMemPoolSize",
    "swapReason",
    "deviceMemUsedNvidia",
)
"""The per-GPU fields of ``gpuUsageInfo``, in AntMan's order."""

SWAP_REASONS: tuple[str, ...] = ("", "OOM", "FRAGMENT")

OPTIONAL_GPU_FIELDS: tuple[str, ...] = (
    "deviceMemLimit",
    "deviceMemLimitAsked",
    "deviceMemLimitReason",
    "hostFallbacks",
)
"""Fields antcolony adds after AntMan's when it knows them: the memory limit in force and the one
the config asked for (bytes), why the asked limit is not reached yet (text, "" when it is), and
the number of allocations placed in host memory since the job started."""

_BYTE_FIELDS = tuple(f for f in GPU_USAGE_FIELDS if f not in ("swapReason", "deviceMemUsedNvidia"))


def status_file_from_env(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The status-file path: ``explicit`` (e.g. ``SessionConfig.statistics_file``) when given,
    else env ``GPU_STATUS_FILE`` when set and non-empty, else None (no status file)."""
    if explicit is not None and os.fspath(explicit) != "":
        return os.fspath(explicit)
    env = os.environ.get(STATUS_FILE_ENV, "").strip()
    return env or None


# -- building and validating ---------------------------------------------------------------------


def _integer(value: Any, where: str, minimum: int) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{where} is a boolean; it must be an integer >= {minimum}")
    try:
        number = operator.index(value)  # int, numpy integers; not floats
    except TypeError:
        raise ConfigError(f"{where} is {value!r}; it must be an integer >= {minimum}") from None
    if number < minimum:
        raise ConfigError(f"{where} is {number}; it must be >= {minimum}")
    return int(number)


def _microseconds(value: Any, where: str) -> int:
    if isinstance(value, bool) or (not isinstance(value, (int, float)) and not hasattr(value, "__float__")):
        raise ConfigError(f"{where} is {value!r}; it must be a number of microseconds")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ConfigError(f"{where} is {value!r}; it must be a finite number of microseconds >= 0")
    return round(number)


def _gpu_fields(fields: Mapping[str, Any], where: str, *, allow_extra: bool) -> dict[str, Any]:
    if not isinstance(fields, Mapping):
        raise ConfigError(f"{where} is {type(fields).__name__}; it must be a mapping of the status fields")
    missing = [f for f in GPU_USAGE_FIELDS if f not in fields]
    if missing:
        raise ConfigError(
            f"{where} lacks {', '.join(missing)}; every GPU needs all of {', '.join(GPU_USAGE_FIELDS)}"
        )
    extra = [f for f in fields if f not in GPU_USAGE_FIELDS and f not in OPTIONAL_GPU_FIELDS]
    if extra and not allow_extra:
        raise ConfigError(
            f"{where} has unknown fields {', '.join(map(str, extra))}; the schema is exactly "
            f"{', '.join(GPU_USAGE_FIELDS)}"
        )
    out: dict[str, Any] = {}
    for name in _BYTE_FIELDS:
        out[name] = _integer(fields[name], f"{where}.{name}", 0)
    reason = fields["swapReason"]
    if reason not in SWAP_REASONS:
        raise ConfigError(f"{where}.swapReason is {reason!r}; it must be one of {SWAP_REASONS}")
    out["swapReason"] = reason
    out["deviceMemUsedNvidia"] = _integer(fields["deviceMemUsedNvidia"], f"{where}.deviceMemUsedNvidia", -1)
    for name in OPTIONAL_GPU_FIELDS:
        if name not in fields:
            continue
        if name == "deviceMemLimitReason":
            if not isinstance(fields[name], str):
                raise ConfigError(f"{where}.{name} is {fields[name]!r}; it must be a string")
            out[name] = fields[name]
        else:
            out[name] = _integer(fields[name], f"{where}.{name}", 0)
    return {name: out[name] for name in (*GPU_USAGE_FIELDS, *OPTIONAL_GPU_FIELDS) if name in out}


def _graph_key(graph_id: Any) -> str:
    text = str(graph_id)
    return text if text.startswith("graph_") else f"graph_{text}"


def build_status(
    gpu_usage: Mapping[str, Mapping[str, Any]],
    mini_batch_duration_us: float,
    durations: Mapping[Any, float],
) -> dict[str, Any]:
    """The status-file object: exactly ``gpuUsageInfo`` / ``miniBatchDuration`` / ``Durations``.

    ``gpu_usage`` maps a bus id (any accepted form; normalised to ``00:04.0``) to exactly the
    nine ``GPU_USAGE_FIELDS``; ``durations`` maps a graph id to its mean step time in us (keys
    become ``graph_<id>``). Durations are rounded to whole microseconds. Raises ``ConfigError``
    naming the GPU and field when a field is missing, unknown or of the wrong type.
    """
    if not isinstance(gpu_usage, Mapping):
        raise ConfigError(f"gpu_usage is {type(gpu_usage).__name__}; it must map bus ids to fields")
    info: dict[str, Any] = {}
    for bus_id, fields in gpu_usage.items():
        try:
            key = normalize_gpu_key(bus_id)
        except ValueError as exc:
            raise ConfigError(f"gpuUsageInfo key {exc}") from None
        if key in info:
            raise ConfigError(f"gpuUsageInfo lists GPU {key} twice (as {bus_id!r} and another form)")
        info[key] = _gpu_fields(fields, f"gpuUsageInfo[{key!r}]", allow_extra=False)
    graphs: dict[str, int] = {}
    for graph_id, value in durations.items():
        key = _graph_key(graph_id)
        graphs[key] = _microseconds(value, f"Durations[{key!r}]")
    return {
        "gpuUsageInfo": info,
        "miniBatchDuration": _microseconds(mini_batch_duration_us, "miniBatchDuration"),
        "Durations": graphs,
    }


def validate_status(obj: Any, source: str = "<status>") -> dict[str, Any]:
    """Check a status object read from a file (extra keys tolerated, for newer writers);
    returns it. Raises ``ConfigError`` naming ``source`` and the bad field."""
    try:
        if not isinstance(obj, dict):
            raise ConfigError(f"the top level is {type(obj).__name__}, not a JSON object")
        for key in ("gpuUsageInfo", "miniBatchDuration", "Durations"):
            if key not in obj:
                raise ConfigError(f"{key} is missing")
        if not isinstance(obj["gpuUsageInfo"], dict):
            raise ConfigError("gpuUsageInfo is not an object")
        for bus_id, fields in obj["gpuUsageInfo"].items():
            _gpu_fields(fields, f"gpuUsageInfo[{bus_id!r}]", allow_extra=True)
        _microseconds(obj["miniBatchDuration"], "miniBatchDuration")
        if not isinstance(obj["Durations"], dict):
            raise ConfigError("Durations is not an object")
        for key, value in obj["Durations"].items():
            _microseconds(value, f"Durations[{key!r}]")
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return obj


def parse_status(text: str, source: str = "<status>") -> dict[str, Any]:
    """Parse and validate the text of a status file."""
    try:
        obj = load_json(text, source)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    return validate_status(obj, source)


def load_status(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a status file (blocking; for command-line tools). Raises
    ``FileRefusedError`` for anything but a regular file of at most 1 MiB."""
    return parse_status(_decode(read_regular_file(path, what="status file")[1], path), os.fspath(path))


async def read_status(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a status file without blocking the event loop (a worker thread).

    ``OSError`` (e.g. ``FileNotFoundError``) propagates; bad content, or anything but a regular
    file of at most 1 MiB, raises ``ConfigError``.
    """
    _, data = await asyncio.to_thread(read_regular_file, path, what="status file")
    return parse_status(_decode(data, path), os.fspath(path))


def _decode(data: bytes, path: str | os.PathLike[str]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{os.fspath(path)}: byte {exc.start} is not UTF-8; a status file is UTF-8 JSON"
        ) from None


# -- atomic write ----------------------------------------------------------------------------------


async def write_status_atomic(
    path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2, sync_dir: bool = False
) -> None:
    """Write ``obj`` as JSON to ``path`` atomically, without blocking the event loop.

    See ``atomic_file.write_file_atomic_async``: a new temporary file in ``path``'s directory,
    fsynced, renamed onto ``path``; readers see the old file or the new one, never a mix, and a
    planted symlink is never followed. Serialisation errors (NaN, non-JSON values) raise before
    the disk is touched.
    """
    data = json.dumps(obj, indent=indent, allow_nan=False) + "\n"
    await write_file_atomic_async(path, data, sync_dir=sync_dir)
