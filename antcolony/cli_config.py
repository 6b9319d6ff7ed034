"""``antcolony config check FILE`` and ``antcolony status FILE``.

``config check`` validates a resource-config file (``GPU_CONFIG_FILE``) the way a running job
would: exit 0 when valid (the normalised config on stdout, a summary and any warnings on
stderr), 1 when invalid (the error, naming the line/column and key, on stderr), 2 when the file
cannot be read. ``status`` prints a status file (``GPU_STATUS_FILE``) as a table: exit 0, 1 when
its content is invalid, 2 when it cannot be read.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, TextIO

from antcolony.config.bounded_read import MAX_CONFIG_BYTES, read_regular_file
from antcolony.config.resource_config import parse_resource_config_bytes
from antcolony.config.status_file import parse_status
from antcolony.errors import ConfigError, FileRefusedError

__all__ = ["add_parsers", "cmd_config_check", "cmd_status", "format_status_table"]

_MIB = 1 << 20


def _read_bytes(prog: str, path: str, err: TextIO, what: str) -> bytes | None:
    try:
        return read_regular_file(path, MAX_CONFIG_BYTES, what=what)[1]
    except FileNotFoundError:
        print(f"{prog}: no such file: {printable(path)}", file=err)
    except FileRefusedError as exc:
        print(f"{prog}: cannot read {printable(str(exc))}", file=err)
    except OSError as exc:
        print(f"{prog}: cannot read {printable(path)}: {exc.strerror or exc}", file=err)
    return None


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_IN_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with control characters (terminal escapes among them) shown as ``\\xNN``: a
    file's content must not drive the terminal it is printed on. Tabs and newlines stay,
    unless ``one_line`` (a table cell)."""
    pattern = _CONTROL_IN_LINE if one_line else _CONTROL
    return pattern.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


def cmd_config_check(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    prog = "antcolony config check"
    data = _read_bytes(prog, args.file, err, "resource config")
    if data is None:
        return 2
    try:
        config = parse_resource_config_bytes(data, args.file)
    except ConfigError as exc:
        print(f"{prog}: invalid: {printable(str(exc))}", file=err)
        return 1
    print(config.to_json(), file=out)
    limits = ", ".join(f"{key} {value / _MIB:.1f} MiB" for key, value in config.gpu_limits.items())
    perf = "unchanged" if config.perf_control is None else f"{config.perf_control}%"
    print(
        f"{prog}: {printable(args.file)} is valid: maxDeviceMem: {limits or 'none'}; perfControl: {perf}",
        file=err,
    )
    for warning in config.warnings:
        print(f"warning: {printable(warning)}", file=err)
    return 0


def _mib(value: Any) -> str:
    return f"{value / _MIB:.1f}"


def _ms(us: Any) -> str:
    return f"{us / 1000:.3f} ms"


def format_status_table(status: dict[str, Any]) -> str:
    """A status object as text: one row per GPU (MiB), then the step durations (ms)."""
    headers = [
        "GPU",
        "devUsedMax",
        "devUsedMin",
        "devPool",
        "devStable",
        "hostUsedMax",
        "hostUsedMin",
        "hostPool",
        "swapReason",
        "nvidiaUsed",
    ]
    rows: list[list[str]] = []
    for bus_id, f in status["gpuUsageInfo"].items():
        nvidia = f["deviceMemUsedNvidia"]
        rows.append(
            [
                printable(str(bus_id), one_line=True),
                _mib(f["deviceMemUsedMax"]),
                _mib(f["deviceMemUsedMin"]),
                _mib(f["deviceMemPoolSize"]),
                _mib(f["deviceMemStable"]),
                _mib(f["hostMemUsedMax"]),
                _mib(f["hostMemUsedMin"]),
                _mib(f["hostMemPoolSize"]),
                f["swapReason"] or "-",
                "n/a" if nvidia < 0 else _mib(nvidia),
            ]
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i in (0, 8) else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        )

    lines = ["GPU memory (MiB):", line(headers)]
    lines += [line(r) for r in rows] if rows else ["(no GPUs)"]
    lines += _limit_lines(status["gpuUsageInfo"])
    lines.append("")
    lines.append(f"miniBatchDuration: {_ms(status['miniBatchDuration'])}")
    durations = status["Durations"]
    if durations:
        lines.append("Durations:")
        shown = {
            printable(str(key), one_line=True): f"{value / 1000:.3f}" for key, value in durations.items()
        }
        width = max(len(k) for k in shown)
        num = max(len(v) for v in shown.values())
        lines += [f"  {key.ljust(width)}  {text.rjust(num)} ms" for key, text in shown.items()]
    else:
        lines.append("Durations: (none)")
    return "\n".join(lines)


def _limit_lines(gpus: dict[str, Any]) -> list[str]:
    """The memory limit each GPU's config asked for and the one in force, with why they differ."""
    lines = []
    for bus_id, f in gpus.items():
        if "deviceMemLimit" not in f:
            continue
        asked, reached = f.get("deviceMemLimitAsked", 0), f["deviceMemLimit"]
        text = f"{bus_id}: memory limit {_mib(reached)} MiB"
        if asked and asked != reached:
            text += f" (asked {_mib(asked)} MiB"
            text += f": {f['deviceMemLimitReason']})" if f.get("deviceMemLimitReason") else ")"
        if "hostFallbacks" in f:
            text += f"; {f['hostFallbacks']} allocation(s) placed in host memory"
        lines.append(text)
    return lines


def cmd_status(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    prog = "antcolony status"
    data = _read_bytes(prog, args.file, err, "status file")
    if data is None:
        return 2
    try:
        text = data.decode("utf-8-sig")
        status = parse_status(text, args.file)
    except UnicodeDecodeError:
        print(f"{prog}: invalid: {printable(args.file)} is not UTF-8 text", file=err)
        return 1
    except ConfigError as exc:
        print(f"{prog}: invalid: {printable(str(exc))}", file=err)
        return 1
    print(format_status_table(status), file=out)
    return 0


def add_parsers(sub: Any) -> None:
    """Add the ``config`` (with ``check``) and ``status`` subcommands to ``sub``."""
    config = sub.add_parser("config", help="work with resource-config files (GPU_CONFIG_FILE)")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    check = config_sub.add_parser(
        "check",
        help="validate a resource-config file and explain errors",
        description="Validate a resource-config file. Exit 0: valid (normalised JSON on stdout); "
        "1: invalid; 2: the file cannot be read.",
    )
    check.add_argument("file", help="path of the config file")
    check.set_defaults(func=cmd_config_check)
    status = sub.add_parser(
        "status",
        help="print a status file (GPU_STATUS_FILE) as a table",
        description="Print a status file as a table (memory in MiB, durations in ms). Exit 0: "
        "printed; 1: invalid content; 2: the file cannot be read.",
    )
    status.add_argument("file", help="path of the status file")
    status.set_defaults(func=cmd_status)
