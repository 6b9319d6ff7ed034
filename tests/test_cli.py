"""Tests of ``ac.run`` and of the ``antcolony run SCRIPT [ARGS]`` command line."""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import antcolony as ac
from antcolony.actors import Actor, get_runtime

try:
    import uvloop  # noqa: F401

    HAVE_UVLOOP = True
except ImportError:
    HAVE_UVLOOP = False

needs_uvloop = pytest.mark.skipif(not HAVE_UVLOOP, reason="uvloop is not installed")


def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


# -- ac.run ------------------------------------------------------------------------------


def test_run_returns_the_coroutines_value() -> None:
    async def answer() -> dict[str, int]:
        await asyncio.sleep(0)
        return {"answer": 42}

    assert ac.run(answer()) == {"answer": 42}


@needs_uvloop
def test_run_uses_uvloop_when_installed() -> None:
    assert ac.run(_async_loop_module()).startswith("uvloop")


def test_run_without_uvloop_uses_asyncio() -> None:
    assert ac.run(_async_loop_module(), use_uvloop=False).startswith("asyncio")


async def _async_loop_module() -> str:
    return _loop_module()


class _Echo(Actor):
    def __init__(self) -> None:
        self.stopped = False

    def on_receive(self, message: Any) -> Any:
        return message

    def on_stop(self) -> None:
        self.stopped = True


def test_run_shuts_the_runtime_down() -> None:
    seen: dict[str, Any] = {}

    async def work() -> str:
        rt = get_runtime()
        seen["runtime"] = rt
        ref = rt.spawn(_Echo, name="echo")
        seen["ref"] = ref
        seen["task"] = rt.create_task(asyncio.sleep(3600), name="sleeper")
        seen["loop"] = asyncio.get_running_loop()
        return await ref.ask("hello")

    assert ac.run(work()) == "hello"
    rt, task = seen["runtime"], seen["task"]
    assert rt.closed
    assert not seen["ref"].is_alive
    assert task.done() and task.cancelled()
    assert rt.stats().actors_alive == 0 and rt.stats().tasks_pending == 0
    assert seen["loop"].is_closed()


def test_run_shuts_down_after_a_session() -> None:
    seen: dict[str, Any] = {}

    async def work() -> float:
        g = ac.Graph()
        with g.as_default():
            x = ac.placeholder(ac.float32, [None])
            y = ac.reduce_sum(x * 2.0)
        async with ac.Session(g) as sess:
            seen["runtime"] = get_runtime()
            return float(await sess.run(y, {x: [1.0, 2.0, 3.0]}))

    assert ac.run(work()) == 12.0
    assert seen["runtime"].closed


def test_run_propagates_exceptions_and_still_shuts_down() -> None:
    seen: dict[str, Any] = {}

    class Boom(Exception):
        pass

    async def fail() -> None:
        rt = get_runtime()
        seen["runtime"] = rt
        seen["task"] = rt.create_task(asyncio.sleep(3600))
        await asyncio.sleep(0)
        raise Boom("from inside")

    with pytest.raises(Boom, match="from inside"):
        ac.run(fail())
    assert seen["runtime"].closed
    assert seen["task"].cancelled()


def test_run_propagates_op_errors() -> None:
    async def bad_feed() -> None:
        g = ac.Graph()
        with g.as_default():
            x = ac.placeholder(ac.float32, [2])
            y = x + 1.0
        async with ac.Session(g) as sess:
            await sess.run(y, {x: [1.0, 2.0, 3.0]})  # wrong shape

    with pytest.raises(ac.errors.OpError):
        ac.run(bad_feed())


def test_run_back_to_back_gets_fresh_runtimes() -> None:
    async def runtime_id() -> int:
        return id(get_runtime())

    async def closed_flag() -> bool:
        return get_runtime().closed

    ac.run(runtime_id())
    assert ac.run(closed_flag()) is False


async def test_run_inside_a_running_loop_is_an_error() -> None:
    async def never() -> None:  # pragma: no cover - must not run
        raise AssertionError("ran")

    coro = never()
    with pytest.raises(RuntimeError, match="running event loop"):
        ac.run(coro)
    assert coro.cr_frame is None  # closed, so no "never awaited" warning


def test_run_rejects_a_non_coroutine() -> None:
    with pytest.raises(ValueError, match="coroutine"):
        ac.run(42)  # type: ignore[arg-type]


# -- the command line ----------------------------------------------------------------------

PROBE = textwrap.dedent(
    """
    import asyncio
    import json
    import sys

    import helper_module  # next to the script: its directory is on sys.path

    async def loop_module():
        return type(asyncio.get_running_loop()).__module__

    import antcolony as ac

    print(json.dumps({
        "argv": sys.argv,
        "name": __name__,
        "asyncio_run_loop": asyncio.run(loop_module()),
        "ac_run_loop": ac.run(loop_module()),
        "helper": helper_module.VALUE,
    }))
    if len(sys.argv) > 2 and sys.argv[1] == "exit":
        code = sys.argv[2]
        sys.exit(int(code) if code.lstrip("-").isdigit() else code)
    if len(sys.argv) > 1 and sys.argv[1] == "raise":
        raise KeyError("probe failure")
    """
)


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    (tmp_path / "helper_module.py").write_text("VALUE = 'helper ok'\n")
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    return script


@functools.cache
def _console_script() -> str | None:
    """The ``antcolony`` console script on PATH, if it runs (it exists after ``pip install -e .``)."""
    exe = shutil.which("antcolony")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return exe if out.returncode == 0 and "usage: antcolony" in out.stdout else None


# Each test run through a launcher starts an interpreter (about a second): slow.
@pytest.fixture(
    params=[
        pytest.param("python-m", marks=pytest.mark.slow),
        pytest.param("console-script", marks=pytest.mark.slow),
    ]
)
def antcolony_cmd(request: pytest.FixtureRequest) -> list[str]:
    """Both launchers: ``python -m antcolony`` always, the console script when on PATH."""
    if request.param == "python-m":
        return [sys.executable, "-m", "antcolony"]
    exe = _console_script()
    if exe is None:
        pytest.skip("the console script `antcolony` is not on PATH (pip install -e . installs it)")
    return [exe]


def _run(cmd: list[str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120, cwd=cwd, check=False)


def _probe_output(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    line = proc.stdout.strip().splitlines()[-1]
    return json.loads(line)


@pytest.mark.parametrize(
    "args",
    [
        ["alpha", "--flag", "value", "-v", "--help", "--", "last"],
        ["--", "-x"],  # a leading "--" belongs to the script too
        [],
    ],
    ids=["options", "leading-dashdash", "none"],
)
def test_run_script_gets_its_arguments_and_uvloop(
    antcolony_cmd: list[str], probe: Path, args: list[str]
) -> None:
    proc = _run(antcolony_cmd, "run", str(probe), *args)
    assert proc.returncode == 0, proc.stderr
    out = _probe_output(proc)
    assert out["argv"] == [str(probe), *args]
    assert out["name"] == "__main__"
    assert out["helper"] == "helper ok"
    expected = "uvloop" if HAVE_UVLOOP else "asyncio"
    assert out["asyncio_run_loop"].startswith(expected)
    assert out["ac_run_loop"].startswith(expected)


def test_run_verbose_names_the_loop(antcolony_cmd: list[str], probe: Path) -> None:
    proc = _run(antcolony_cmd, "run", "-v", str(probe), "x")
    assert proc.returncode == 0, proc.stderr
    assert _probe_output(proc)["argv"] == [str(probe), "x"]
    assert "uvloop" in proc.stderr if HAVE_UVLOOP else "asyncio" in proc.stderr


def test_run_relative_script_path(antcolony_cmd: list[str], probe: Path) -> None:
    proc = _run(antcolony_cmd, "run", probe.name, "rel", cwd=probe.parent)
    assert proc.returncode == 0, proc.stderr
    assert _probe_output(proc)["argv"] == [probe.name, "rel"]


@pytest.mark.parametrize("code", [3, 255])
def test_run_passes_the_exit_status_through(antcolony_cmd: list[str], probe: Path, code: int) -> None:
    proc = _run(antcolony_cmd, "run", str(probe), "exit", str(code))
    assert proc.returncode == code, proc.stderr


def test_run_exit_with_a_message(antcolony_cmd: list[str], probe: Path) -> None:
    proc = _run(antcolony_cmd, "run", str(probe), "exit", "something went wrong")
    assert proc.returncode == 1
    assert "something went wrong" in proc.stderr


def test_run_uncaught_exception_fails_with_traceback(antcolony_cmd: list[str], probe: Path) -> None:
    proc = _run(antcolony_cmd, "run", str(probe), "raise")
    assert proc.returncode == 1
    assert "KeyError" in proc.stderr and "probe failure" in proc.stderr


def test_run_missing_script(antcolony_cmd: list[str], tmp_path: Path) -> None:
    missing = tmp_path / "no_such_script.py"
    proc = _run(antcolony_cmd, "run", str(missing), "arg")
    assert proc.returncode == 2
    assert "no such file" in proc.stderr and str(missing) in proc.stderr
    assert proc.stdout == ""


def test_help(antcolony_cmd: list[str]) -> None:
    proc = _run(antcolony_cmd, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "usage: antcolony" in proc.stdout and "run" in proc.stdout
    proc = _run(antcolony_cmd, "run", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "script" in proc.stdout


def test_no_command_is_a_usage_error(antcolony_cmd: list[str]) -> None:
    proc = _run(antcolony_cmd)
    assert proc.returncode == 2
    assert "usage: antcolony" in proc.stderr


# -- in-process, without a subprocess --------------------------------------------------------


def test_main_missing_script_in_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from antcolony.__main__ import main

    assert main(["run", str(tmp_path / "absent.py")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_script_arguments_are_split_after_the_script() -> None:
    from antcolony.__main__ import _split_script_args

    assert _split_script_args(["run", "s.py", "--", "-v"]) == (["run", "s.py"], ["--", "-v"])
    assert _split_script_args(["run", "-v", "s.py", "a"]) == (["run", "-v", "s.py"], ["a"])
    assert _split_script_args(["run", "--", "-odd.py", "a"]) == (["run", "--", "-odd.py"], ["a"])
    assert _split_script_args(["--help"]) == (["--help"], None)
