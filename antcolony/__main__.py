"""The ``antcolony`` command line: ``antcolony run SCRIPT [ARGS...]``, ``config check``, ``status``,
``submit`` and ``cluster status|stop``."""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from collections.abc import Sequence


def _install_uvloop_policy() -> str:
    try:
        import uvloop
    except ImportError:
        return "asyncio"
    # A script's own asyncio.run / ac.run then gets a uvloop loop.
    import asyncio

    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return "uvloop"


def _unrunnable(script: str) -> str | None:
    """Why ``script`` cannot be run, as runpy would fail on it with a traceback; None if it can.

    A directory runs when it holds ``__main__.py`` (as ``python DIR``); a FIFO or device is
    refused, since reading one could wait forever."""
    if os.path.isdir(script):
        if os.path.isfile(os.path.join(script, "__main__.py")):
            return None
        return (
            "is a directory without a __main__.py; give a Python script (or a directory holding __main__.py)"
        )
    if not os.path.isfile(script):
        return "is not a regular file; give a Python script"
    return None


def _cmd_run(args: argparse.Namespace) -> int:
    script = args.script
    if not os.path.exists(script):
        print(f"antcolony run: no such file: {script}", file=sys.stderr)
        return 2
    problem = _unrunnable(script)
    if problem:
        print(f"antcolony run: {script} {problem}", file=sys.stderr)
        return 2
    loop_kind = _install_uvloop_policy()
    if args.verbose:
        print(f"antcolony run: {script} under {loop_kind}", file=sys.stderr)
    sys.argv = [script, *args.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)  # sys.exit("message"), as the interpreter does
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="antcolony", description="antcolony command line")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a Python script under uvloop (when installed)")
    run.add_argument("-v", "--verbose", action="store_true", help="say which event loop is used")
    run.add_argument("script", help="path of the script to run")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    run.set_defaults(func=_cmd_run)
    from antcolony import cli_config  # `config check FILE` and `status FILE`

    cli_config.add_parsers(sub)
    from antcolony.cluster import cli as cluster_cli  # `submit` and `cluster status|stop`; Ray only when run

    cluster_cli.add_parsers(sub)
    return parser


def _split_script_args(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """Split ``run|submit [OPTIONS] SCRIPT ARGS...`` after SCRIPT, so ARGS reach the script verbatim
    (argparse.REMAINDER would drop a leading ``--``). ``run``'s options take no values."""
    if not argv or argv[0] not in ("run", "submit"):
        return argv, None
    from antcolony.cluster.cli import SUBMIT_VALUE_OPTIONS

    takes_value = SUBMIT_VALUE_OPTIONS if argv[0] == "submit" else frozenset()
    # A value option and its value become `--opt=value`, so a value starting with "-" (argparse
    # would take `--gpu-memory -1GiB` for two options) reaches the option and its own check.
    own = argv[:1]
    i = 1
    while i < len(argv):
        if argv[i] == "--":
            return own + argv[i : i + 2], argv[i + 2 :]
        if not argv[i].startswith("-") or argv[i] == "-":
            return own + argv[i : i + 1], argv[i + 1 :]
        if argv[i] in takes_value and i + 1 < len(argv):
            own.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            own.append(argv[i])
            i += 1
    return own, None


def main(argv: Sequence[str] | None = None) -> int:
    own, script_args = _split_script_args(list(sys.argv[1:] if argv is None else argv))
    args = build_parser().parse_args(own)
    if script_args is not None:
        args.args = script_args
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
