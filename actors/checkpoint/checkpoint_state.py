"""The ``checkpoint`` state file of a checkpoint directory, in TF's text format, and the queries
on it (``latest_checkpoint``, ``get_checkpoint_state``).

The file looks like TF's, so tools that read it keep working::

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"

Paths are written relative to the directory (the checkpoints live next to the file), so a moved
directory still restores; relative paths read back are taken relative to the directory. The
state file is read with the bounded reader: a FIFO, a device or an oversize file there is
ignored with a warning (as TF ignores a state file it cannot read), never waited on or read
without end.

Files are written atomically (a temporary renamed over the target); a save killed midway leaves
its temporary, which the next save of the same checkpoint prefix removes.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import os
import re
import threading
from collections.abc import Iterator

from antcolony.config.atomic_file import write_file_atomic
from antcolony.config.bounded_read import read_regular_file
from antcolony.errors import FileRefusedError

from .file_errors import op_error_from_os_error

logger = logging.getLogger(__name__)

#: Largest state file read: one line of ~100 bytes per kept checkpoint.
MAX_STATE_BYTES = 16 << 20

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


def write_file_for_user(path: str, data: bytes, what: str) -> None:
    """``write_file_atomic``, its OS errors raised as the ``tf.errors`` class TF would raise
    (a full disk: ResourceExhaustedError; a directory at ``path``: FailedPreconditionError)."""
    try:
        write_file_atomic(path, data)
    except OSError as exc:
        raise op_error_from_os_error(exc, f"cannot write {what} {path}") from None


# Saves in flight in this process per (directory, prefix base): a temporary is stale only when
# no save of its prefix is running here (saves of one prefix from two processes would overwrite
# each other's checkpoints anyway; that is not supported, as in TF).
_saving: collections.Counter[tuple[str, str]] = collections.Counter()
_saving_lock = threading.Lock()


@contextlib.contextmanager
def remove_stale_temporaries(directory: str, base: str) -> Iterator[None]:
    """Around one save of checkpoint prefix ``base`` (``model.ckpt``, the part before any
    ``-<step>``) in ``directory``: first remove the temporaries that killed saves of that prefix
    left, unless another save of it is running in this process."""
    key = (os.path.abspath(directory), base)
    with _saving_lock:
        if not _saving[key]:
            _remove_temporaries(directory, base)
        _saving[key] += 1
    try:
        yield
    finally:
        with _saving_lock:
            _saving[key] -= 1
            if not _saving[key]:
                del _saving[key]


def _remove_temporaries(directory: str, base: str) -> None:
    # atomic_file's temporaries are ".<target name>.<12 hex digits>.tmp".
    pattern = re.compile(
        r"\." + re.escape(base) + r"(?:-\d+)?" + re.escape(CHECKPOINT_SUFFIX) + r"\.[0-9a-f]{12}\.tmp\Z"
    )
    try:
        with os.scandir(directory) as it:
            stale = [e for e in it if pattern.match(e.name) and e.is_file(follow_symlinks=False)]
    except OSError as exc:
        logger.warning("cannot look for stale checkpoint temporaries in %s: %s", directory, exc)
        return
    for entry in stale:
        try:
            os.unlink(entry.path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            logger.warning("cannot remove stale checkpoint temporary %s: %s", entry.path, exc)
            continue
        logger.info("removed %s, left by an interrupted save", entry.path)


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
    write_file_for_user(
        os.path.join(directory, latest_filename or STATE_FILENAME),
        ("\n".join(lines) + "\n").encode(),
        "checkpoint state file",
    )


def get_checkpoint_state(checkpoint_dir: str, latest_filename: str | None = None) -> CheckpointState | None:
    """The directory's state, or None when it has no (readable) state file, as TF."""
    path = os.path.join(checkpoint_dir, latest_filename or STATE_FILENAME)
    try:
        text = read_regular_file(path, MAX_STATE_BYTES, what="checkpoint state file")[1].decode("utf-8")
    except FileNotFoundError:
        return None
    except FileRefusedError as exc:
        logger.warning("checkpoint state file %s %s; ignoring it", path, exc.reason)
        return None
    except (OSError, ValueError) as exc:
        logger.warning("cannot read checkpoint state %s: %s; ignoring it", path, exc)
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
