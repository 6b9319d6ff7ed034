"""Device names: parse '/gpu:0', '/device:GPU:0', '/job:ps/replica:0/task:1/device:GPU:0', and merge
partial names as TF1's device scopes do."""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass

from antcolony.errors import GraphError

_PART = re.compile(r"^(job|replica|task|device|cpu|gpu):(.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class DeviceSpec:
    """A possibly partial device name; missing parts are None."""

    job: str | None = None
    task: int | None = None
    device_type: str | None = None
    index: int | None = None
    replica: int | None = None

    @classmethod
    def parse(cls, name: str) -> DeviceSpec:
        job = task = dtype = index = replica = None
        for part in filter(None, name.strip().split("/")):
            m = _PART.match(part)
            if not m:
                raise GraphError(
                    f"device name {name!r} is malformed at {part!r}; use '/gpu:0', '/device:GPU:0' "
                    "or '/job:worker/task:0/device:GPU:0'"
                )
            key, val = m.group(1).lower(), m.group(2)
            if key == "job":
                job = val
            elif key == "task":
                task = _int(val, name)
            elif key == "replica":
                replica = _int(val, name)
            else:
                if dtype is not None:
                    raise GraphError(f"device name {name!r} names more than one device type; keep one")
                if key == "device":
                    dtype, _, idx = val.partition(":")
                    dtype = dtype.upper()
                else:
                    dtype, idx = key.upper(), val
                index = _int(idx, name) if idx not in ("", "*") else None
        return cls(job, task, dtype, index, replica)

    def to_string(self) -> str:
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            parts.append(f"/device:{self.device_type}:{'*' if self.index is None else self.index}")
        return "".join(parts)

    def merged_with(self, other: DeviceSpec) -> DeviceSpec:
        """This spec with every part that ``other`` sets taken from ``other``, part by part (TF's
        ``make_merged_spec``: '/gpu:*' over '/cpu:0' is '/device:GPU:0')."""

        return DeviceSpec(
            job=other.job if other.job is not None else self.job,
            task=other.task if other.task is not None else self.task,
            device_type=other.device_type if other.device_type is not None else self.device_type,
            index=other.index if other.index is not None else self.index,
            replica=other.replica if other.replica is not None else self.replica,
        )

    def replace(self, **changes: object) -> DeviceSpec:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    @property
    def short(self) -> str:
        """'/gpu:0' style name used in messages and stats keys."""
        if self.device_type is None:
            return ""
        return f"/{self.device_type.lower()}:{0 if self.index is None else self.index}"


def _int(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise GraphError(f"device name {name!r}: {text!r} is not an index") from None


@functools.lru_cache(maxsize=1024)
def canonical_device(name: str | None) -> str:
    """Canonical partial name ('/device:GPU:0'); '' for no constraint."""
    if not name:
        return ""
    return DeviceSpec.parse(name).to_string()


@functools.lru_cache(maxsize=1024)
def merge_device_names(inner: str, outer: str) -> str:
    """The device an op gets from an enclosing scope ``outer`` when it already has ``inner``: the
    parts ``inner`` sets win, ``outer`` fills the rest (TF1's nested ``tf.device`` strings)."""
    if not outer:
        return inner
    if not inner:
        return outer
    return DeviceSpec.parse(outer).merged_with(DeviceSpec.parse(inner)).to_string()
