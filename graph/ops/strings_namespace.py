"""``ac.strings`` / ``tf.strings``: TF1's string functions under their names there."""

from __future__ import annotations

from .string_format import string_format as format
from .string_ops import (
    as_string,
    length,
    lower,
    reduce_join,
    regex_full_match,
    regex_replace,
    split,
    substr,
    upper,
)
from .string_ops import string_join as join
from .string_ops import string_strip as strip
from .string_ops import string_to_number as to_number

__all__ = [
    "as_string",
    "format",
    "join",
    "length",
    "lower",
    "reduce_join",
    "regex_full_match",
    "regex_replace",
    "split",
    "strip",
    "substr",
    "to_number",
    "upper",
]
