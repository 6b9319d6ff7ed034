"""scripts/soak.py, briefly: ten seconds of training with every kind of fault injected leaves no
device or host bytes, thread, actor or task behind, and training goes on."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
KINDS = {"kernel_error", "cancel", "close", "config", "timeout", "ledger", "fetch_write"}


@pytest.mark.slow
# ten seconds of wall time: how far the loss falls depends on the steps the CPU allows in them,
# and each figure must settle within --settle seconds
@pytest.mark.timing
def test_a_ten_second_soak_injects_every_fault_kind_and_finds_no_leak(tmp_path):
    summary = tmp_path / "soak.json"
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "soak.py"),
            "--seconds",
            "10",
            "--seed",
            "11",
            "--json",
            str(summary),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    report = json.loads(summary.read_text())
    assert report["leaks"] == [] and report["failures"] == [], out.stdout[-3000:]
    assert report["threads_after_exit"] == []
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert set(report["faults"]) == KINDS and min(report["faults"].values()) >= 1, report["faults"]
    faults = sum(report["faults"].values())
    # every figure was checked after every fault (the close check after every close)
    for figure in ("bytes_in_use", "host_bytes_in_use", "threads", "actors", "runtime tasks"):
        assert report["checks"][figure] == faults, (figure, report["checks"])
    assert report["checks"]["held after close"] >= report["faults"]["close"]  # + closes while suspended
    assert report["steps"] > faults  # a normal step after each fault, at least
    assert report["last_loss"] < report["first_loss"] / 10  # and training went on over every close
    assert "leaks found: 0" in out.stdout and "MISSED" not in out.stdout
