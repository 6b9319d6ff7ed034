"""Tests of ``antcolony config check FILE`` and ``antcolony status FILE``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from antcolony.__main__ import main
from antcolony.config import build_status


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_config_check_prints_the_normalised_config_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            {
                "name": "job",
                "gpuConfigInfo": {"0000:00:04.0": {"maxDeviceMem": 2 << 30}, "GPU:1": {"maxDeviceMem": 0}},
                "perfControl": 50,
            }
        )
    )
    code, out, err = run(capsys, "config", "check", str(path))
    assert code == 0
    assert json.loads(out) == {
        "name": "job",
        "gpuConfigInfo": {"00:04.0": {"maxDeviceMem": 2 << 30}, "gpu:1": {"maxDeviceMem": 0}},
        "perfControl": 50,
    }
    assert "is valid" in err and "00:04.0 2048.0 MiB" in err and "perfControl: 50%" in err
    assert "warning" not in err


def test_config_check_shows_warnings_for_unknown_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"perfControl": 100,\n "priority": 1}')
    code, out, err = run(capsys, "config", "check", str(path))
    assert code == 0 and json.loads(out) == {"gpuConfigInfo": {}, "perfControl": 100}
    assert f'warning: {path}:2:2: unknown key "priority" ignored' in err


@pytest.mark.parametrize(
    "text, words",
    [
        ('{"perfControl": 150}', "perfControl is 150; it must be an integer from 0 to 100"),
        ('{"perfControl": -1}', "perfControl is -1"),
        ('{"gpuConfigInfo": {"gpu0": {"maxDeviceMem": 1}}}', '"gpu0" names no GPU'),
        (
            '{"gpuConfigInfo": {"00:04.0": {"maxDeviceMem": 1.5}}}',
            'gpuConfigInfo["00:04.0"].maxDeviceMem is 1.5',
        ),
        ('{"perfControl": 50,\n "gpuConfigInfo": {', ":2:20: invalid JSON"),
    ],
)
def test_config_check_explains_an_invalid_config_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, words: str
) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    code, out, err = run(capsys, "config", "check", str(path))
    assert code == 1 and out == ""
    assert "invalid" in err and str(path) in err and words in err


def test_config_check_of_a_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "config", "check", str(tmp_path / "nope.json"))
    assert code == 2 and out == "" and "no such file" in err
    code, _, err = run(capsys, "config", "check", str(tmp_path))
    assert code == 2 and "directory" in err


def _status_file(tmp_path: Path) -> Path:
    status = build_status(
        {
            "0000:00:04.0": {
                "deviceMemUsedMax": 3 << 20,
                "deviceMemUsedMin": 1 << 20,
                "deviceMemPoolSize": 4 << 20,
                "deviceMemStable": 2 << 20,
                "hostMemUsedMax": 512 << 10,
                "hostMemUsedMin": 0,
                "hostMemPoolSize": 64 << 30,
                "swapReason": "OOM",
                "deviceMemUsedNvidia": -1,
            },
            "00:05.0": {
                "deviceMemUsedMax": 0,
                "deviceMemUsedMin": 0,
                "deviceMemPoolSize": 0,
                "deviceMemStable": 0,
                "hostMemUsedMax": 0,
                "hostMemUsedMin": 0,
                "hostMemPoolSize": 0,
                "swapReason": "",
                "deviceMemUsedNvidia": 300 << 20,
            },
        },
        12345,
        {17: 12345, 18: 2500.4},
    )
    path = tmp_path / "pai2sche.json"
    path.write_text(json.dumps(status))
    return path


def test_status_prints_a_table_in_mib_and_ms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "status", str(_status_file(tmp_path)))
    assert code == 0 and err == ""
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("GPU  "))
    assert header.split() == [
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
    row4 = next(line for line in lines if line.startswith("00:04.0")).split()
    assert row4 == ["00:04.0", "3.0", "1.0", "4.0", "2.0", "0.5", "0.0", "65536.0", "OOM", "n/a"]
    row5 = next(line for line in lines if line.startswith("00:05.0")).split()
    assert row5[-2:] == ["-", "300.0"]
    assert "miniBatchDuration: 12.345 ms" in out
    assert any(line.split() == ["graph_17", "12.345", "ms"] for line in lines)
    assert any(line.split() == ["graph_18", "2.500", "ms"] for line in lines)


def test_status_exit_codes_for_bad_and_missing_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"gpuUsageInfo": {}, "miniBatchDuration": 5}')
    code, out, err = run(capsys, "status", str(bad))
    assert code == 1 and out == "" and "Durations is missing" in err
    code, out, err = run(capsys, "status", str(tmp_path / "none.json"))
    assert code == 2 and "no such file" in err


@pytest.mark.slow
def test_the_commands_work_through_python_m_antcolony(tmp_path: Path) -> None:
    good = tmp_path / "c.json"
    good.write_text('{"perfControl": 30}')
    bad = tmp_path / "d.json"
    bad.write_text('{"perfControl": 150}')
    codes = [
        subprocess.run(
            [sys.executable, "-m", "antcolony", *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        for args in (
            ["config", "check", str(good)],
            ["config", "check", str(bad)],
            ["config", "check", str(tmp_path / "x")],
            ["status", str(_status_file(tmp_path))],
        )
    ]
    assert [c.returncode for c in codes] == [0, 1, 2, 0], [c.stderr for c in codes]
    assert json.loads(codes[0].stdout)["perfControl"] == 30
    assert "00:04.0" in codes[3].stdout


def test_config_without_a_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["config"])
    assert info.value.code == 2
