"""``tf.app`` of TF1: ``tf.app.run()`` parses the command-line flags (``tf.app.flags``) and calls
the program's ``main`` with the arguments that are not flags, exiting with what it returns."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from . import flags as flags

__all__ = ["flags", "run"]


def run(main: Callable[[list[str]], Any] | None = None, argv: Sequence[str] | None = None) -> NoReturn:
    """Parse ``argv`` (default ``sys.argv``) into ``flags.FLAGS``, then ``sys.exit(main(rest))``;
    ``main`` defaults to the ``main`` of the program's ``__main__`` module."""
    rest = flags.FLAGS(list(sys.argv if argv is None else argv))
    if main is None:
        main = getattr(sys.modules["__main__"], "main", None)
        if main is None:
            raise ValueError("tf.app.run: no main given and the __main__ module defines none")
    sys.exit(main(rest))
