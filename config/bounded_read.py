"""Reading a file that another program controls: never blocks, never reads without limit.

A config or status path may be swapped for a FIFO (an ``open`` that waits for a writer forever),
a device (``/dev/zero`` never ends) or a huge file. ``read_regular_file`` opens with
``O_NONBLOCK``, checks the opened file itself (``fstat``: no race with a swap after a ``stat``),
refuses anything but a regular file and reads at most ``max_bytes``.
"""

from __future__ import annotations

import os
import stat

from antcolony.errors import FileRefusedError

__all__ = ["MAX_CONFIG_BYTES", "file_kind", "read_regular_file"]

MAX_CONFIG_BYTES = 1 << 20
"""Largest resource-config or status file accepted: both are small JSON objects."""

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, for messages: "a FIFO (named pipe)", "a directory", ..."""
    return next((name for test, name in _KINDS if test(mode)), "not a plain file")


def read_regular_file(
    path: str | os.PathLike[str],
    max_bytes: int = MAX_CONFIG_BYTES,
    *,
    what: str = "file",
    follow_links: bool = True,
) -> tuple[os.stat_result, bytes]:
    """The stat (of the file actually opened) and the bytes of the regular file at ``path``.

    Blocking but bounded: run it in a worker thread from async code. Raises ``OSError``
    (``FileNotFoundError``, ``PermissionError``, ...) when it cannot be opened, and
    ``FileRefusedError`` when it is not a regular file or holds more than ``max_bytes``.
    ``what`` names the file's role in messages ("resource config", "status file").
    ``follow_links=False`` refuses a symbolic link at ``path`` itself (``OSError`` ``ELOOP``): for
    files only this program writes, where a link can only have been planted.
    """
    name = os.fspath(path)
    fix = f"point it at a {what} (a JSON file)"
    fd = os.open(name, _FLAGS if follow_links else _FLAGS | getattr(os, "O_NOFOLLOW", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefusedError(name, f"is {file_kind(st.st_mode)}, not a regular file", fix)
        too_big = FileRefusedError(
            name, f"is larger than {max_bytes} bytes", f"a {what} is a small JSON object; check the path"
        )
        if st.st_size > max_bytes:
            raise too_big
        chunks: list[bytes] = []
        left = max_bytes + 1  # one byte more tells a file that grew past the limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise too_big
        return st, b"".join(chunks)
    finally:
        os.close(fd)
