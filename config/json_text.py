"""JSON text from files antcolony reads (resource config, status file): bounded, linear time.

A config file is written by another program, so it may be hostile or broken in ways a
well-behaved writer never produces: nested 200,000 levels deep, or holding 65,536 unknown keys.
Everything here costs time linear in the text, once per text, and raises ``ConfigError`` rather
than ``RecursionError``.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from typing import Any

from antcolony.errors import ConfigError

__all__ = ["MAX_DEPTH", "KeyLocator", "check_depth", "load_json", "nesting_depth"]

MAX_DEPTH = 64
"""Deepest nesting of objects and lists accepted (the config schema needs 3 levels)."""

# A JSON string (a key when a colon follows), or a run of text outside strings. Alternating the
# two keeps every match aligned with the string boundaries, so one left-to-right pass suffices.
# An unterminated string runs to the end of the text: were it to fail instead, every later quote
# would start another scan to the end (quadratic on hostile text).
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*(?:"(\s*:)?|\\?\Z)|[^"]+', re.S)
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.S)
_BRACKETS = {ord("{"): "(", ord("["): "(", ord("}"): ")", ord("]"): ")"}
_STEP = {"(": 1, ")": -1}


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``{``/``[`` outside strings (0 for a scalar); linear time."""
    outside = _STRINGS.sub("", text)
    brackets = re.sub(r"[^()]", "", outside.translate(_BRACKETS))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def check_depth(text: str, source: str, limit: int = MAX_DEPTH) -> None:
    """Raise ``ConfigError`` naming ``source`` when ``text`` nests deeper than ``limit``."""
    depth = nesting_depth(text)
    if depth > limit:
        raise ConfigError(
            f"{source}: the JSON is nested {depth} levels deep; at most {limit} are accepted "
            f"(this file's schema needs 3): remove the extra nesting"
        )


def load_json(text: str, source: str, **options: Any) -> Any:
    """``json.loads(text, **options)`` with the depth checked first; ``JSONDecodeError`` and
    ``ConfigError`` (from hooks in ``options``) propagate, anything else the decoder raises on
    hostile text becomes a ``ConfigError`` naming ``source``."""
    check_depth(text, source)
    try:
        return json.loads(text, **options)
    except (json.JSONDecodeError, ConfigError):
        raise
    except RecursionError:  # unreachable after the depth check, whatever the decoder's limit
        raise ConfigError(f"{source}: the JSON is nested too deeply; remove the extra nesting") from None
    except ValueError as exc:  # a number longer than Python converts (sys.get_int_max_str_digits)
        raise ConfigError(
            f"{source}: a number in the JSON is too long to read ({exc}); write it with fewer digits"
        ) from None


class KeyLocator:
    """``:line:col`` of object keys in a JSON text, for messages; built in one pass on first use.

    ``locate(("a", "b"))`` finds the first key ``"a"``, then the first key ``"b"`` after it, as a
    hint for the reader (it is not a parse: with duplicate names in different objects it may
    point at another object's key).
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._keys: dict[str, list[int]] | None = None
        self._lines: list[int] | None = None

    def _index(self) -> dict[str, list[int]]:
        if self._keys is None:
            keys: dict[str, list[int]] = {}
            for m in _TOKENS.finditer(self._text):
                if m.group(1) is None:
                    continue
                raw = self._text[m.start() : m.start(1)]
                if "\\" in raw:
                    try:
                        key = json.loads(raw)
                    except ValueError:
                        continue
                else:
                    key = raw[1:-1]
                keys.setdefault(key, []).append(m.start())  # in increasing order
            self._keys = keys
        return self._keys

    def _line_col(self, pos: int) -> tuple[int, int]:
        if self._lines is None:
            self._lines = [m.end() for m in re.finditer("\n", self._text)]
        line = bisect.bisect_right(self._lines, pos)
        start = self._lines[line - 1] if line else 0
        return line + 1, pos - start + 1

    def locate(self, path: tuple[Any, ...]) -> str:
        """``":line:col"`` of the last key of ``path``, or ``""`` when it cannot be found."""
        if not path:
            return ""
        keys = self._index()
        pos, found = 0, -1
        for key in path:
            positions = keys.get(key) if isinstance(key, str) else None
            if not positions:
                return ""
            i = bisect.bisect_left(positions, pos)
            if i == len(positions):
                return ""
            found = positions[i]
            pos = found + 1
        line, col = self._line_col(found)
        return f":{line}:{col}"
