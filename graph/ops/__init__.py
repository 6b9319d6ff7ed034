"""Op definitions: builder functions, shape rules and gradient rules, one module per family.

Importing this package registers every op type and gradient.
"""

from __future__ import annotations

from . import constant, control, math, reduction, array, slicing, nn, state, random  # noqa: F401
from . import rounding, trigonometry, masking, einsum, logging_ops, script_ops, summary_ops  # noqa: F401
