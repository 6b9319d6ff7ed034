"""The command line against hostile files: devices, FIFOs, terminal escapes, directories."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from antcolony.__main__ import main
from antcolony.config.status_file import build_status


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m antcolony ARGS`` with 1 GiB of address space and 20 s: reading without a limit
    fails fast instead of taking the machine's memory, and a hang fails the test."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    try:
        return subprocess.run(
            [sys.executable, "-m", "antcolony", *args],
            capture_output=True,
            text=True,
            timeout=20,
            preexec_fn=limit,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"antcolony {' '.join(args)} did not finish in 20 s")


@pytest.mark.slow
@pytest.mark.parametrize("command", [["config", "check"], ["status"]])
def test_a_device_is_refused_with_a_clear_message(command: list[str]) -> None:
    proc = _cli(*command, "/dev/zero")
    assert proc.returncode == 2, proc.stderr[-500:]
    assert "/dev/zero is a character device, not a regular file" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


@pytest.mark.slow
@pytest.mark.parametrize("command", [["config", "check"], ["status"]])
def test_a_fifo_is_refused_at_once(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    proc = _cli(*command, str(fifo))
    assert proc.returncode == 2 and "FIFO" in proc.stderr and "not a regular file" in proc.stderr


def test_a_config_over_one_mib_is_refused_naming_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "config.json"
    big.write_text(json.dumps({"perfControl": 10, "name": "x" * (1 << 20)}))
    assert main(["config", "check", str(big)]) == 2
    err = capsys.readouterr().err
    assert str(big) in err and "larger than 1048576 bytes" in err


def test_config_check_of_a_deeply_nested_file_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = tmp_path / "config.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["config", "check", str(deep)]) == 1
    assert "nested 100000 levels deep" in capsys.readouterr().err


def _usage(**kw: object) -> dict[str, object]:
    fields = {
        "deviceMemUsedMax": 1,
        "deviceMemUsedMin": 1,
        "deviceMemPoolSize": 1,
        "deviceMemStable": 1,
        "hostMemUsedMax": 0,
        "hostMemUsedMin": 0,
        "hostMemPoolSize": 0,
        "swapReason": "",
        "deviceMemUsedNvidia": -1,
    }
    fields.update(kw)
    return fields


def test_status_prints_no_terminal_escapes_from_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = build_status({"00:04.0": _usage()}, 10, {1: 10})
    status["gpuUsageInfo"]["\x1b]0;owned\x07"] = _usage()
    status["Durations"]["graph_\x1b[2J\x9b31m\r"] = 5
    path = tmp_path / "status.json"
    path.write_text(json.dumps(status))
    assert main(["status", str(path)]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\x07\x9b\r")
    assert "\\x1b]0;owned\\x07" in out and "graph_\\x1b[2J\\x9b31m\\x0d" in out


def test_status_errors_print_no_terminal_escapes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "status.json"
    path.write_text(json.dumps({"gpuUsageInfo": {"\x1b[31m": {}}, "miniBatchDuration": 1, "Durations": {}}))
    assert main(["status", str(path)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "lacks" in err


def test_run_of_a_directory_explains_instead_of_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path} is a directory without a __main__.py" in err


@pytest.mark.slow
def test_run_of_a_directory_with_main_runs_it(tmp_path: Path) -> None:
    (tmp_path / "__main__.py").write_text("print('ran as a package directory')\n")
    proc = subprocess.run(
        [sys.executable, "-m", "antcolony", "run", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "ran as a package directory" in proc.stdout
