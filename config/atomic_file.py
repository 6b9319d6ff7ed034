"""Atomic file writes: the one way antcolony writes a file (status file, step trace, ...).

The data goes to a new file with a random name in the target's directory, created with
``O_CREAT | O_EXCL | O_NOFOLLOW``: nothing planted there (a symlink, a FIFO, another file) is
ever opened, let alone written through. The file is flushed and fsynced, then renamed over the
target with ``os.replace``, which replaces a symlink planted at the target itself instead of
following it. A reader sees the old file or the new one, never a torn one, and a failure leaves
the old file and no temporary behind.

Errors name the target, never the temporary (its random name would make every failure look
new to a caller that logs each distinct cause once).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets

__all__ = ["write_file_atomic", "write_file_atomic_async"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_TRIES = 8  # random names colliding this often means someone is racing us on purpose


def _temporary_name(target: str) -> str:
    directory, base = os.path.split(target)
    return os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")


def _open_new(target: str) -> tuple[int, str]:
    for _ in range(_TRIES):
        tmp = _temporary_name(target)
        try:
            # 0o666 & ~umask, as open(..., "w") would: a scheduler running as another user must be
            # able to read the status file (mkstemp would create it 0600).
            return os.open(tmp, _FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"{_TRIES} random temporary names were all taken", target)


def _renamed(exc: OSError, target: str) -> OSError:
    """The same error with the target's name in place of the temporary's."""
    if exc.errno is None:
        return exc
    return type(exc)(exc.errno, exc.strerror, target)


def write_file_atomic(path: str | os.PathLike[str], data: bytes | str, *, sync_dir: bool = False) -> None:
    """Replace ``path`` with ``data`` (str is written as UTF-8) atomically; blocking.

    ``sync_dir`` also fsyncs the directory, so the rename itself survives a power loss. Raises
    ``OSError`` naming ``path`` (e.g. ``FileNotFoundError`` for a missing directory,
    ``IsADirectoryError`` when ``path`` is a directory).
    """
    target = os.path.abspath(os.fspath(path))
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    try:
        fd, tmp = _open_new(target)
    except OSError as exc:
        raise _renamed(exc, target) from None
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise _renamed(exc, target) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync_dir:
        _fsync_dir(os.path.dirname(target))


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


async def write_file_atomic_async(
    path: str | os.PathLike[str], data: bytes | str, *, sync_dir: bool = False
) -> None:
    """``write_file_atomic`` in a worker thread, so the event loop never waits on the disk.

    If the caller is cancelled, the write already handed to the thread still finishes (a
    thread cannot be interrupted), so the target is the old or the new file and no temporary
    is left; the cancellation is then re-raised.
    """
    inner = asyncio.ensure_future(asyncio.to_thread(write_file_atomic, path, data, sync_dir=sync_dir))
    try:
        await asyncio.shield(inner)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await inner
        raise
