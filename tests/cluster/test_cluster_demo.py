"""The cluster demo runs end to end on the package's two-node local Ray cluster (the ``cluster``
fixture, conftest.py, passed to it with --address). Skipped without Ray; slow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Set before ray is imported (tests/cluster/conftest.py does it for the whole package too).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
pytest.importorskip("ray")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_reports_the_guaranteed_job_restored_and_the_coordinators_decisions(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    out = subprocess.run(
        # watched until 2 s after the guaranteed job is back on target, 30 s at most (a busy
        # 2-core machine can take that long: the coordinator learns its baseline first)
        [
            sys.executable,
            str(ROOT / "scripts" / "cluster_demo.py"),
            "--before",
            "4",
            "--seconds",
            "30",
            "--settle",
            "2",
            "--out",
            str(tmp_path / "demo.png"),
            "--address",
            cluster["address"],
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env={**os.environ},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    tail = text[-4000:]
    assert "--- submitted guar: guaranteed on sim_gpu_0" in text, tail
    # the opportunistic job sharing the guaranteed job's GPU was suspended when it arrived
    assert "opp0: maxDeviceMem 64 MiB, perfControl 0: suspended while the baseline step time" in text, tail
    assert "guaranteed job guar: step time within 1.25x its baseline" in text and "(MISSED)" not in text, tail
    assert "GPU memory in use across the cluster" in text, tail
    assert (tmp_path / "demo.png").exists()
