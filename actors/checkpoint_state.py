"""The ``checkpoint`` state file of a checkpoint directory, in TF's text format, and the queries
on it (``latest_checkpoint``, ``get_checkpoint_state``).

The file looks like TF's, so tools that read it keep working::

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"

Paths are written relative to the directory (the checkpoints live next to the file), so a moved
directory still restores; relative paths read back are taken relative to the directory.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re

from antcolony.config.atomic_file import write_file_atomic

logger = logging.getLogger(__name__)

CHECKPOINT_SUFFIX = ".safetensors"
STATE_FILENAME = "checkpoint"

_LINE = re.compile(r'^\s*(\w+)\s*:\s*"((?:[^"\\]|\\.)*)"\s*$')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}


@dataclasses.dataclass
class CheckpointState:
    """What the state file records: the newest checkpoint and every one still kept (oldest first)."""

    model_checkpoint_path: str
    all_model_checkpoint_paths: list[str] = dataclasses.field(default_factory=list)


def data_path(prefix: str) -> str:
    """The tensor file of checkpoint ``prefix``."""
    return prefix if prefix.endswith(CHECKPOINT_SUFFIX) else prefix + CHECKPOINT_SUFFIX


def checkpoint_exists(prefix: str) -> bool:
    return os.path.isfile(data_path(prefix))


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _unquote(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc[0] in "01234567":
            return chr(int(esc, 8))
        return _ESCAPES.get(esc, esc)

    return re.sub(r"\\([0-7]{1,3}|.)", repl, text)


def write_state(
    directory: str, latest: str, all_paths: list[str], latest_filename: str | None = None
) -> None:
    """Record ``latest`` and ``all_paths`` (checkpoint prefixes) in the directory's state file."""

    def rel(p: str) -> str:
        return (
            os.path.relpath(p, directory)
            if os.path.dirname(os.path.abspath(p)) == os.path.abspath(directory)
            else p
        )

    lines = [f"model_checkpoint_path: {_quote(rel(latest))}"]
    lines += [f"all_model_checkpoint_paths: {_quote(rel(p))}" for p in all_paths]
    write_file_atomic(
        os.path.join(directory, latest_filename or STATE_FILENAME), ("\n".join(lines) + "\n").encode()
    )


def get_checkpoint_state(checkpoint_dir: str, latest_filename: str | None = None) -> CheckpointState | None:
    """The directory's state, or None when it has no (readable) state file, as TF."""
    path = os.path.join(checkpoint_dir, latest_filename or STATE_FILENAME)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("cannot read checkpoint state %s: %s", path, exc)
        return None
    latest = ""
    kept: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if m is None:
            logger.warning('%s:%d is not a `key: "value"` line; ignoring the state file', path, number)
            return None
        key, value = m.group(1), _unquote(m.group(2))
        if not os.path.isabs(value):
            value = os.path.join(checkpoint_dir, value)
        if key == "model_checkpoint_path":
            latest = value
        elif key == "all_model_checkpoint_paths":
            kept.append(value)
    if not latest:
        return None
    return CheckpointState(latest, kept or [latest])


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the directory's newest checkpoint (pass it to ``Saver.restore``), or None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    if checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    logger.warning("the checkpoint state names %s, whose data file is missing", state.model_checkpoint_path)
    return None
