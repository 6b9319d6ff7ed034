"""``tf.logging`` of the TF1 face: TF's verbosity names over Python's logging.

Messages go to this module's logger. ``set_verbosity`` sets its level and, when nothing in the
program has configured logging, attaches a stderr handler, as TF does, so that
``tf.logging.set_verbosity(tf.logging.INFO)`` makes training logs visible.
"""

from __future__ import annotations

import logging as _logging
import sys as _sys
from typing import Any as _Any

__all__ = [
    "DEBUG",
    "ERROR",
    "FATAL",
    "INFO",
    "WARN",
    "debug",
    "error",
    "fatal",
    "get_verbosity",
    "info",
    "log",
    "log_every_n",
    "log_first_n",
    "log_if",
    "set_verbosity",
    "vlog",
    "warn",
    "warning",
]

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARNING
ERROR = _logging.ERROR
FATAL = _logging.CRITICAL

_logger = _logging.getLogger(__name__)
_counts: dict[_Any, int] = {}


def _ensure_handler() -> None:
    if not _logger.hasHandlers():
        handler = _logging.StreamHandler(_sys.stderr)
        handler.setFormatter(_logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
        _logger.addHandler(handler)


def set_verbosity(v: int) -> None:
    _ensure_handler()
    _logger.setLevel(v)


def get_verbosity() -> int:
    return _logger.getEffectiveLevel()


def log(level: int, msg: _Any, *args: _Any, **kwargs: _Any) -> None:
    _logger.log(level, msg, *args, **kwargs)


def debug(msg: _Any, *args: _Any, **kwargs: _Any) -> None:
    _logger.debug(msg, *args, **kwargs)


def info(msg: _Any, *args: _Any, **kwargs: _Any) -> None:
    _logger.info(msg, *args, **kwargs)


def warning(msg: _Any, *args: _Any, **kwargs: _Any) -> None:
    _logger.warning(msg, *args, **kwargs)


warn = warning


def error(msg: _Any, *args: _Any, **kwargs: _Any) -> None:
    _logger.error(msg, *args, **kwargs)


def fatal(msg: _Any, *args: _Any, **kwargs: _Any) -> None:
    _logger.critical(msg, *args, **kwargs)


def vlog(level: int, msg: _Any, *args: _Any, **kwargs: _Any) -> None:
    _logger.log(level, msg, *args, **kwargs)


def log_every_n(level: int, msg: _Any, n: int, *args: _Any) -> None:
    """Log on the 1st, (n+1)th, (2n+1)th ... call from the same place in the program."""
    caller = _sys._getframe(1)
    key = (caller.f_code.co_filename, caller.f_lineno)
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    if count % max(int(n), 1) == 0:
        _logger.log(level, msg, *args)


def log_first_n(level: int, msg: _Any, n: int, *args: _Any) -> None:
    """Log only the first n calls from the same place in the program."""
    caller = _sys._getframe(1)
    key = ("first", caller.f_code.co_filename, caller.f_lineno)
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    if count < n:
        _logger.log(level, msg, *args)


def log_if(level: int, msg: _Any, condition: bool, *args: _Any) -> None:
    if condition:
        _logger.log(level, msg, *args)
