"""The machine-wide runtime directory of antcolony: where simulated GPUs keep their ledgers.

Whatever is in it decides how much memory other processes believe a simulated GPU has left, so
it must be this user's alone. The default lives in ``/dev/shm``, which every local user can
write: another user could create ``antcolony-<uid>`` first and then read, forge or plant FIFOs
in every ledger. The directory is therefore created 0700, and an existing one is refused (a
``PermissionError`` naming the directory, what is wrong with it and how to fix it) unless it is
a directory owned by this user that neither group nor others can write.

Path: env ``ANTCOLONY_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/antcolony``, else
``/dev/shm/antcolony-<uid>``, else ``<tempdir>/antcolony-<uid>``.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["RUNTIME_DIR_ENV", "check_private_dir", "runtime_dir"]

RUNTIME_DIR_ENV = "ANTCOLONY_RUNTIME_DIR"


def runtime_dir() -> Path:
    """The directory holding the machine's simulated-GPU ledgers, created private on first use.

    Raises ``PermissionError`` when it exists but is not private to this user (see
    :func:`check_private_dir`) and other ``OSError`` when it cannot be created.
    """
    env = os.environ.get(RUNTIME_DIR_ENV, "").strip()
    if env:
        path = Path(env)
    elif os.environ.get("XDG_RUNTIME_DIR"):
        path = Path(os.environ["XDG_RUNTIME_DIR"]) / "antcolony"
    elif os.path.isdir("/dev/shm"):
        path = Path(f"/dev/shm/antcolony-{os.getuid()}")
    else:
        path = Path(tempfile.gettempdir()) / f"antcolony-{os.getuid()}"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    check_private_dir(path)
    return path


def check_private_dir(path: Path) -> None:
    """Raise ``PermissionError`` unless ``path`` is a directory of this user's that only this
    user can write (a link to one is followed: what matters is the directory written into)."""
    st = os.stat(path)
    where = os.fspath(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "the antcolony runtime directory is not a directory", where)
    uid = os.getuid()
    if st.st_uid != uid:
        raise PermissionError(
            errno.EPERM,
            f"the antcolony runtime directory belongs to uid {st.st_uid}, not to this user (uid {uid}): "
            f"its owner could read or forge the ledgers in it. Remove it or set {RUNTIME_DIR_ENV} to a "
            "directory of your own",
            where,
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = (
            "group and others"
            if st.st_mode & stat.S_IWGRP and st.st_mode & stat.S_IWOTH
            else ("its group" if st.st_mode & stat.S_IWGRP else "others")
        )
        raise PermissionError(
            errno.EPERM,
            f"the antcolony runtime directory is writable by {who} (mode {stat.S_IMODE(st.st_mode):o}): "
            f"they could replace the ledgers in it. Run `chmod 700` on it or set {RUNTIME_DIR_ENV} to a "
            "private directory",
            where,
        )
