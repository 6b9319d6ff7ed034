"""The cluster demo and benchmark run end to end on the package's two-node local Ray cluster (the
``cluster`` fixture, conftest.py, passed to them with --address). Skipped without Ray; slow."""

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
        # watched until 6 s after the guaranteed job is back on target (the opportunistic job
        # beside it resumes meanwhile), 30 s at most (a busy 2-core machine can take that long)
        [
            sys.executable,
            str(ROOT / "scripts" / "cluster_demo.py"),
            "--before",
            "4",
            "--seconds",
            "30",
            "--settle",
            "6",
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
    # resumed at a low share as soon as the guaranteed job's baseline is known
    assert (
        "opp0: maxDeviceMem 64 MiB, perfControl 20: resumed at 20: baseline of guaranteed job guar" in text
    ), tail
    figures = text.split("\nfigures:\n")[1]
    assert "guaranteed job guar: baseline alone" in figures and " recovered " in figures, tail
    assert "sim_gpu_0: busy fraction while a guaranteed job holds it:" in figures, tail
    assert "sim_gpu_0: opportunistic job opp0:" in figures and "of its" in figures, tail
    assert "sim_gpu_0: opportunistic jobs together did " in figures, tail
    assert "sim_gpu_1: no guaranteed job with a baseline: sharing figures n/a" in figures, tail
    assert "device memory in use" in figures, tail
    assert (tmp_path / "demo.png").exists()


def test_the_benchmark_runs_its_schedule_and_reports_every_figure(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "cluster_bench.py"),
            "--minutes",
            "0.5",
            "--out",
            str(tmp_path / "bench.png"),
            "--address",
            cluster["address"],
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
        env={**os.environ},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    tail = text[-4000:]
    for name in ("oppA", "oppB", "guarA", "guarB", "oppC", "guarC"):
        assert f"submitted {name}: " in text, tail
    for name in ("guarA", "guarB", "oppC"):
        assert f" {name} left" in text, tail
    figures = text.split("\nfigures:\n")[1]
    # a figure line (or a MISSED) for each guaranteed job and each GPU (names unlike
    # test_ray_cluster.py's jobs: both run on the package's cluster, whose job directories remain)
    for name in ("guarA", "guarB", "guarC"):
        assert f"guaranteed job {name}: " in figures, tail
    for gpu in ("sim_gpu_0", "sim_gpu_1"):
        assert f"{gpu}: device memory in use" in figures, tail
    assert (tmp_path / "bench.png").exists()
