"""OS errors of file work done for a user (checkpoints) as the ``tf.errors`` class TF raises.

TF turns an ``errno`` into a status code in one table (``NOT_FOUND`` for ``ENOENT``,
``RESOURCE_EXHAUSTED`` for ``ENOSPC``, ``PERMISSION_DENIED`` for ``EACCES`` ...), so TF1 code
catching ``tf.errors.ResourceExhaustedError`` around ``saver.save`` on a full disk keeps working.
An errno not in the table is ``UnknownError``. The message names the file and the OS's reason.
"""

from __future__ import annotations

import errno

from antcolony.errors import (
    AbortedError,
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    OutOfRangeError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnavailableError,
    UnimplementedError,
    UnknownError,
)

__all__ = ["op_error_from_os_error"]

_BY_CLASS: dict[type[OpError], tuple[str, ...]] = {
    NotFoundError: ("ENOENT", "ENODEV", "ENXIO", "ESRCH"),
    AlreadyExistsError: ("EEXIST",),
    PermissionDeniedError: ("EACCES", "EPERM", "EROFS"),
    ResourceExhaustedError: ("ENOSPC", "EDQUOT", "EMFILE", "ENFILE", "ENOMEM", "EMLINK", "ENOBUFS"),
    FailedPreconditionError: ("EISDIR", "ENOTDIR", "ENOTEMPTY", "EBUSY", "ETXTBSY", "ELOOP"),
    InvalidArgumentError: ("EINVAL", "ENAMETOOLONG", "ESPIPE", "EBADF"),
    OutOfRangeError: ("EFBIG", "EOVERFLOW", "ERANGE"),
    UnimplementedError: ("ENOSYS", "ENOTSUP", "EOPNOTSUPP"),
    UnavailableError: ("EAGAIN", "EINTR", "ENOLCK", "EIO"),
    AbortedError: ("EDEADLK", "ESTALE"),
}
_BY_ERRNO: dict[int, type[OpError]] = {
    getattr(errno, name): cls for cls, names in _BY_CLASS.items() for name in names if hasattr(errno, name)
}


def op_error_from_os_error(exc: OSError, what: str) -> OpError:
    """``exc`` as an OpError whose message is ``what`` (which names the file) and the OS reason;
    the OSError is kept as ``__cause__``."""
    cls = _BY_ERRNO.get(exc.errno or 0, UnknownError)
    reason = exc.strerror or str(exc)
    filename = f" ({exc.filename})" if exc.filename and str(exc.filename) not in what else ""
    err = cls(None, None, f"{what}{filename}: {reason} [errno {exc.errno}]")
    err.__cause__ = exc
    return err
