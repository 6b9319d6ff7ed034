"""``tf.flags`` / ``tf.app.flags`` of TF1: command-line flags declared where they are used
(``DEFINE_string("data_dir", "/tmp", "help")``) and read as ``FLAGS.data_dir``.

As TF1's (absl's) flags: ``--name=value`` or ``--name value``; booleans also ``--name`` and
``--noname``; reading a flag before ``tf.app.run`` parses ``sys.argv`` first; an undeclared
``--flag`` on the command line is an error naming it; ``--`` ends the flags. Flags are declared
once per process (a second declaration of a name is an error, as absl's).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FLAGS",
    "DEFINE_bool",
    "DEFINE_boolean",
    "DEFINE_enum",
    "DEFINE_float",
    "DEFINE_integer",
    "DEFINE_list",
    "DEFINE_string",
    "FlagValues",
    "UnrecognizedFlagError",
]


class UnrecognizedFlagError(ValueError):
    """A ``--flag`` on the command line that no DEFINE_* declared."""


@dataclass
class _Flag:
    name: str
    default: Any
    help: str
    parse: Callable[[str], Any]
    boolean: bool = False


def _parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "t", "1", "yes"):
        return True
    if lowered in ("false", "f", "0", "no"):
        return False
    raise ValueError(f"{text!r} is not a boolean (true/false, 1/0)")


class FlagValues:
    """The declared flags and their values; attribute access reads one (parsing ``sys.argv``
    first if nobody has yet), assignment sets one."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_parsed", False)

    def _declare(self, flag: _Flag) -> None:
        if flag.name in self._flags:
            raise ValueError(f"flag --{flag.name} is declared twice (each flag is declared once per process)")
        self._flags[flag.name] = flag
        self._values[flag.name] = flag.default

    def __getattr__(self, name: str) -> Any:
        if name not in self._flags:
            raise AttributeError(f"no flag --{name} is declared (declare it with tf.flags.DEFINE_*)")
        if not self._parsed:
            self(sys.argv)
        return self._values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._flags:
            raise AttributeError(f"no flag --{name} is declared (declare it with tf.flags.DEFINE_*)")
        self._values[name] = value

    def __contains__(self, name: str) -> bool:
        return name in self._flags

    def is_parsed(self) -> bool:
        return bool(self._parsed)

    def flag_values_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def __call__(self, argv: Sequence[str]) -> list[str]:
        """Parse the flags out of ``argv`` (its first item is the program); returns the program
        and the arguments that are not flags."""
        rest = [argv[0]] if argv else []
        items = list(argv[1:])
        i = 0
        while i < len(items):
            arg = items[i]
            i += 1
            if arg == "--":
                rest.extend(items[i - 1 :])  # absl keeps the "--" in what main gets
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            name, has_value, text = arg.lstrip("-").partition("=")
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and not has_value:
                negated = self._flags.get(name[2:])
                if negated is not None and negated.boolean:
                    self._values[negated.name] = False
                    continue
            if flag is None:
                raise UnrecognizedFlagError(
                    f"unknown command line flag {arg!r} (declared: {sorted(self._flags)})"
                )
            if not has_value:
                if flag.boolean:
                    self._values[name] = True
                    continue
                if i >= len(items):
                    raise ValueError(f"flag --{name} needs a value")
                text = items[i]
                i += 1
            try:
                self._values[name] = flag.parse(text)
            except ValueError as exc:
                raise ValueError(f"flag --{name}={text}: {exc}") from None
        object.__setattr__(self, "_parsed", True)
        return rest


FLAGS = FlagValues()


def _define(name: str, default: Any, help: str, parse: Callable[[str], Any], boolean: bool = False) -> None:
    FLAGS._declare(_Flag(name, default, help, parse, boolean))


def DEFINE_string(name: str, default: str | None, help: str, **_: Any) -> None:
    _define(name, default, help, str)


def DEFINE_integer(
    name: str, default: int | None, help: str, lower_bound: int | None = None, **_: Any
) -> None:
    def parse(text: str) -> int:
        value = int(text)
        if lower_bound is not None and value < lower_bound:
            raise ValueError(f"must be >= {lower_bound}")
        return value

    _define(name, default, help, parse)


def DEFINE_float(name: str, default: float | None, help: str, **_: Any) -> None:
    _define(name, default, help, float)


def DEFINE_boolean(name: str, default: bool | None, help: str, **_: Any) -> None:
    _define(name, default, help, _parse_bool, boolean=True)


DEFINE_bool = DEFINE_boolean


def DEFINE_list(name: str, default: Any, help: str, **_: Any) -> None:
    if isinstance(default, str):
        default = [x for x in default.split(",") if x]
    _define(name, default, help, lambda text: [x.strip() for x in text.split(",") if x.strip()])


def DEFINE_enum(name: str, default: str | None, enum_values: Sequence[str], help: str, **_: Any) -> None:
    allowed = list(enum_values)

    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"must be one of {allowed}")
        return text

    _define(name, default, help, parse)
