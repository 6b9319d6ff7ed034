"""Creating a new file that is appended to over time (event files): never through a planted link.

``config/atomic_file.py`` replaces whole files; an event file is a stream written for the
whole run, so it cannot be renamed into place. It is created with ``O_CREAT | O_EXCL |
O_NOFOLLOW``: if anything already exists at the path (a symlink planted to make us overwrite
another file, a FIFO, an old file), the open fails instead of writing through it, and the
descriptor then stays bound to the file we created.
"""

from __future__ import annotations

import os
from typing import BinaryIO

__all__ = ["create_new_file"]

_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | os.O_APPEND
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def create_new_file(path: str | os.PathLike[str]) -> BinaryIO:
    """A binary append stream on a file created now at ``path``; ``FileExistsError`` when
    anything (a symlink included) is already there. Permissions are 0o666 & ~umask, as open()."""
    fd = os.open(os.fspath(path), _FLAGS, 0o666)
    try:
        return os.fdopen(fd, "ab")
    except BaseException:
        os.close(fd)
        raise
