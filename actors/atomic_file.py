"""Atomic file replacement: readers see the old file or the new one, never a torn one.

The data goes to a fresh temporary file in the target's directory, created with O_EXCL under a
random name (so a file or symlink planted at a guessable name is never opened, let alone written
through), flushed to disk, then renamed over the target. ``os.replace`` renames over a symlink
at the target rather than following it.
"""

from __future__ import annotations

import logging
import os
import secrets

logger = logging.getLogger(__name__)

_ATTEMPTS = 16


def _open_temp(path: str) -> tuple[int, str]:
    directory, base = os.path.split(os.path.abspath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(_ATTEMPTS):
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(8)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file next to {path} after {_ATTEMPTS} tries")


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (blocking: call it off the event loop)."""
    target = os.fspath(path)
    fd, tmp = _open_temp(target)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _sync_directory(os.path.dirname(os.path.abspath(target)))


def _sync_directory(directory: str) -> None:
    # The rename is durable only once the directory entry is: fsync the directory where allowed.
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        logger.debug("fsync of directory %s is not supported", directory)
    finally:
        os.close(fd)
