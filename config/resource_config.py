"""The resource-config file (AntMan's ``GPU_CONFIG_FILE``): schema, validation, normalisation.

The file is written by a cluster scheduler (or a person) and read by the job::

    {
      "name": "<free text, ignored>",
      "gpuConfigInfo": {"00:04.0": {"maxDeviceMem": 2147483648}},
      "perfControl": 50
    }

- ``gpuConfigInfo`` (optional) maps a GPU to its settings. A GPU is named by its PCI bus id
  without the domain (``00:04.0``, AntMan's form), with it (``0000:00:04.0`` or NVML's
  ``00000000:00:04.0``), or by index (``gpu:0``). Keys are normalised: bus ids to the short
  lowercase form, indexes to ``gpu:N``. ``maxDeviceMem`` is the GPU memory limit in bytes (a
  non-negative integer). A GPU not listed keeps its current limit.
- ``perfControl`` (optional) is the job's share of GPU time in percent, an integer 0..100
  (0 suspends the job at the next step boundary). Absent means "keep the current value".
- Unknown keys are reported as warnings (``ResourceConfig.warnings``), not errors, so a newer
  scheduler can add fields; the caller decides whether to log them.

Every error is a ``ConfigError`` whose message names the file, the line and column where it
can tell, the offending key, and what to write instead.

The contract, and what is fixed relative to AntMan: docs/design.md section 6.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from antcolony.errors import ConfigError, IncompleteConfigError

from .json_text import KeyLocator, load_json

__all__ = [
    "CONFIG_FILE_ENV",
    "FrozenMapping",
    "ResourceConfig",
    "config_file_from_env",
    "normalize_bus_id",
    "normalize_gpu_key",
    "parse_resource_config",
    "parse_resource_config_bytes",
]

CONFIG_FILE_ENV = "GPU_CONFIG_FILE"
"""Environment variable naming the resource-config file (AntMan's name)."""

_UINT64_MAX = 2**64 - 1
_KNOWN_TOP = ("name", "gpuConfigInfo", "perfControl")
_KNOWN_GPU = ("maxDeviceMem",)
_MAX_UNKNOWN_LISTED = 20  # one warning each; the rest are counted in one more

_SHORT_BUS_ID = re.compile(r"([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])")
_FULL_BUS_ID = re.compile(r"([0-9a-f]{4,8}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])")
_GPU_INDEX = re.compile(r"gpu:([0-9]{1,4})")


class FrozenMapping(Mapping[str, int]):
    """A read-only, hashable, picklable mapping (the limits of a frozen ``ResourceConfig``)."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, int] | None = None) -> None:
        self._data: dict[str, int] = dict(data or {})

    def __getitem__(self, key: str) -> int:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._data) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMapping({self._data!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMapping, (self._data,))


def normalize_bus_id(bus_id: str) -> str:
    """A PCI bus id in AntMan's short lowercase form: ``0000:00:04.0`` -> ``00:04.0``.

    Accepts the short form, the 4-digit-domain form and NVML's 8-digit-domain form, any case.
    Raises ``ValueError`` for anything else.
    """
    text = bus_id.strip().lower() if isinstance(bus_id, str) else None
    if text is None:
        raise ValueError(f"a PCI bus id must be a string, got {bus_id!r}")
    if m := _SHORT_BUS_ID.fullmatch(text):
        return f"{m[1]}:{m[2]}.{m[3]}"
    if m := _FULL_BUS_ID.fullmatch(text):
        return f"{m[2]}:{m[3]}.{m[4]}"
    raise ValueError(f"{bus_id!r} is not a PCI bus id (write 00:04.0 or 0000:00:04.0)")


def normalize_gpu_key(key: str) -> str:
    """A ``gpuConfigInfo`` key normalised: a short lowercase bus id, or ``gpu:N``.

    Raises ``ValueError`` naming the key when it is neither a bus id nor ``gpu:N``.
    """
    if isinstance(key, str):
        text = key.strip().lower()
        if m := _GPU_INDEX.fullmatch(text):
            return f"gpu:{int(m[1])}"
        try:
            return normalize_bus_id(text)
        except ValueError:
            pass
    shown = json.dumps(key) if isinstance(key, str) else repr(key)
    raise ValueError(
        f'{shown} names no GPU: use the PCI bus id without the domain ("00:04.0"), with it '
        f'("0000:00:04.0"), or the device index ("gpu:0")'
    )


@dataclass(frozen=True)
class ResourceConfig:
    """One validated resource config.

    gpu_limits: normalised GPU key (``"00:04.0"`` or ``"gpu:N"``) -> memory limit in bytes;
        GPUs not listed keep their current limit. Look a device up with ``limit_for``.
    perf_control: share of GPU time in percent (0 suspends), or None to keep the current value.
    name: the file's free-text ``name`` (ignored by antcolony, kept for logs).
    warnings: what was ignored (unknown keys), one sentence each.
    source: where the config came from (file path), for messages.
    """

    gpu_limits: FrozenMapping = field(default_factory=FrozenMapping)
    perf_control: int | None = None
    name: str | None = None
    warnings: tuple[str, ...] = ()
    source: str = "<config>"

    def __post_init__(self) -> None:
        if not isinstance(self.gpu_limits, FrozenMapping):
            object.__setattr__(self, "gpu_limits", FrozenMapping(self.gpu_limits))
        object.__setattr__(self, "warnings", tuple(self.warnings))

    def limit_for(self, bus_id: str | None = None, index: int | None = None) -> int | None:
        """The limit for the GPU with PCI ``bus_id`` (any accepted form) or device ``index``.

        A bus-id entry wins over a ``gpu:N`` entry for the same device. None: not listed.
        """
        if bus_id:
            try:
                key = normalize_bus_id(bus_id)
            except ValueError:
                key = None
            if key is not None and key in self.gpu_limits:
                return self.gpu_limits[key]
        if index is not None:
            return self.gpu_limits.get(f"gpu:{int(index)}")
        return None

    def to_json_obj(self) -> dict[str, Any]:
        """The normalised content in the file's own schema (unknown keys dropped)."""
        obj: dict[str, Any] = {}
        if self.name is not None:
            obj["name"] = self.name
        obj["gpuConfigInfo"] = {key: {"maxDeviceMem": value} for key, value in self.gpu_limits.items()}
        if self.perf_control is not None:
            obj["perfControl"] = self.perf_control
        return obj

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_json_obj(), indent=indent)


def config_file_from_env(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The resource-config path: ``explicit`` (e.g. ``SessionConfig.resource_config_file``)
    when given, else env ``GPU_CONFIG_FILE`` when set and non-empty, else None (disabled)."""
    if explicit is not None and os.fspath(explicit) != "":
        return os.fspath(explicit)
    env = os.environ.get(CONFIG_FILE_ENV, "").strip()
    return env or None


# -- parsing -------------------------------------------------------------------------------------


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"the string {json.dumps(value)}"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return json.dumps(value)


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.warnings: list[str] = []
        self.locator = KeyLocator(text)
        self.unknown = 0

    def error(self, path: tuple[str, ...], message: str) -> ConfigError:
        return ConfigError(f"{self.source}{self.locator.locate(path)}: {message}")

    def unknown_key(self, path: tuple[str, ...], message: str) -> None:
        # A scheduler may add a field or two; thousands of them must not become thousands of
        # log lines at every poll.
        self.unknown += 1
        if self.unknown <= _MAX_UNKNOWN_LISTED:
            self.warnings.append(f"{self.source}{self.locator.locate(path)}: {message}")

    def load(self) -> Any:
        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            obj: dict[str, Any] = {}
            for key, value in items:
                if key in obj:
                    raise ConfigError(
                        f"{self.source}: key {json.dumps(key)} appears twice in one object; "
                        f"keep only one (JSON readers disagree on which one wins)"
                    )
                obj[key] = value
            return obj

        def constant(name: str) -> Any:
            raise ConfigError(f"{self.source}: {name} is not valid JSON; write a number")

        if not self.text.strip():
            raise IncompleteConfigError(
                f"{self.source}:1:1: the file is empty (still being written?); "
                f'write a JSON object such as {{"perfControl": 100}}'
            )
        try:
            return load_json(self.text, self.source, object_pairs_hook=pairs, parse_constant=constant)
        except json.JSONDecodeError as exc:
            # Ends early: the error is at the end, or a string runs to the end of the text.
            if exc.pos >= len(self.text.rstrip()) or exc.msg.startswith("Unterminated string"):
                raise IncompleteConfigError(
                    f"{self.source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg} - the file ends "
                    f"before the JSON is complete (truncated, or still being written: write a "
                    f"temporary file and rename it over the config)"
                ) from None
            raise ConfigError(f"{self.source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None

    def parse(self) -> ResourceConfig:
        obj = self.load()
        if not isinstance(obj, dict):
            raise ConfigError(
                f"{self.source}: the top level is {_describe(obj)}, not a JSON object; write "
                f'{{"gpuConfigInfo": {{"00:04.0": {{"maxDeviceMem": <bytes>}}}}, "perfControl": <0..100>}}'
            )
        for key in obj:
            if key not in _KNOWN_TOP:
                self.unknown_key(
                    (key,), f"unknown key {json.dumps(key)} ignored (known keys: {', '.join(_KNOWN_TOP)})"
                )
        name = obj.get("name")
        if name is not None and not isinstance(name, str):
            self.warnings.append(f'{self.source}: "name" is {_describe(name)}, not a string; ignored')
            name = None
        limits = self.gpu_limits(obj)
        perf = self.perf_control(obj)
        if self.unknown > _MAX_UNKNOWN_LISTED:
            self.warnings.append(
                f"{self.source}: {self.unknown - _MAX_UNKNOWN_LISTED} more unknown keys ignored "
                f"({self.unknown} in all; only the first {_MAX_UNKNOWN_LISTED} are listed)"
            )
        if not limits and perf is None:
            self.warnings.append(
                f"{self.source}: the config sets nothing (no gpuConfigInfo entries, no perfControl); "
                f"current limits are kept"
            )
        return ResourceConfig(FrozenMapping(limits), perf, name, tuple(self.warnings), self.source)

    def gpu_limits(self, obj: dict[str, Any]) -> dict[str, int]:
        if "gpuConfigInfo" not in obj:
            return {}
        info = obj["gpuConfigInfo"]
        if not isinstance(info, dict):
            raise self.error(
                ("gpuConfigInfo",),
                f"gpuConfigInfo is {_describe(info)}; it must be an object mapping GPU bus ids to "
                f'settings, e.g. {{"00:04.0": {{"maxDeviceMem": 2147483648}}}}',
            )
        limits: dict[str, int] = {}
        origin: dict[str, str] = {}
        for key, entry in info.items():
            path = ("gpuConfigInfo", key)
            try:
                norm = normalize_gpu_key(key)
            except ValueError as exc:
                raise self.error(path, f"gpuConfigInfo key {exc}") from None
            if norm in limits:
                raise self.error(
                    path,
                    f"gpuConfigInfo keys {json.dumps(origin[norm])} and {json.dumps(key)} name the same GPU "
                    f"({norm}); keep one of them",
                )
            if not isinstance(entry, dict):
                raise self.error(
                    path,
                    f"gpuConfigInfo[{json.dumps(key)}] is {_describe(entry)}; it must be an object such as "
                    f'{{"maxDeviceMem": 2147483648}}',
                )
            for sub in entry:
                if sub not in _KNOWN_GPU:
                    self.unknown_key(
                        (*path, sub),
                        f"unknown key gpuConfigInfo[{json.dumps(key)}].{sub} ignored (known: {', '.join(_KNOWN_GPU)})",
                    )
            where = f"gpuConfigInfo[{json.dumps(key)}].maxDeviceMem"
            if "maxDeviceMem" not in entry:
                raise self.error(path, f"{where} is missing; give the GPU memory limit in bytes")
            value = entry["maxDeviceMem"]
            limits[norm] = self.byte_count(value, (*path, "maxDeviceMem"), where)
            origin[norm] = key
        return limits

    def byte_count(self, value: Any, path: tuple[str, ...], where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(
                path, f"{where} is {_describe(value)}; it must be a non-negative integer number of bytes"
            )
        if isinstance(value, float):
            hint = ""
            if math.isfinite(value) and value.is_integer() and value >= 0:
                hint = f" (write {int(value)})"
            raise self.error(
                path, f"{where} is {value!r}, not an integer; give a whole number of bytes{hint}"
            )
        if value < 0:
            raise self.error(
                path, f"{where} is {value}; a memory limit cannot be negative (use 0 or more bytes)"
            )
        if value > _UINT64_MAX:
            raise self.error(path, f"{where} is {value}; that is more than 2**64-1 bytes")
        return int(value)

    def perf_control(self, obj: dict[str, Any]) -> int | None:
        if "perfControl" not in obj:
            return None
        value = obj["perfControl"]
        path = ("perfControl",)
        if isinstance(value, bool) or not isinstance(value, int):
            hint = " (omit the key to keep the current value)" if value is None else ""
            raise self.error(
                path,
                f"perfControl is {_describe(value)}; it must be an integer from 0 to 100 "
                f"(percent of GPU time; 0 suspends the job){hint}",
            )
        if not 0 <= value <= 100:
            raise self.error(
                path,
                f"perfControl is {value}; it must be an integer from 0 to 100 (percent of GPU time; "
                f"100 = unthrottled, 0 suspends the job)",
            )
        return int(value)


def parse_resource_config(text: str, source: str = "<config>") -> ResourceConfig:
    """Parse and validate the text of a resource-config file named ``source`` (for messages).

    Raises ``ConfigError`` naming ``source``, the line and column where known, the offending
    key, and the fix. Unknown keys end up in ``ResourceConfig.warnings`` (not logged here).
    """
    return _Parser(text, source).parse()


def parse_resource_config_bytes(data: bytes, source: str = "<config>") -> ResourceConfig:
    """``parse_resource_config`` of raw file bytes (UTF-8, a leading BOM allowed)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{source}: byte {exc.start} is not UTF-8 ({exc.reason}); save the file as UTF-8 JSON"
        ) from None
    return parse_resource_config(text, source)
