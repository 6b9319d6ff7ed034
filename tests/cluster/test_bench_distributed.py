"""scripts/bench_distributed.py runs on its own local Ray with tiny sizes and prints one row per
transport and size with its ratio to the plain Ray object round trip. Slow; skipped without Ray."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("ray")

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run scripts/NAME on its own local Ray (none of a test's cluster), asserting it succeeds."""
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    cmd = [sys.executable, str(ROOT / "scripts" / name), *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return out


def test_bench_distributed_prints_every_transport_and_size() -> None:
    out = _script("bench_distributed.py", "--sizes", "1024,65536", "--reps", "3")
    rows = re.findall(
        r"^\s*(\d+ KiB)\s+(ray object|wire tcp|wire objstore)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)x$",
        out.stdout,
        re.M,
    )
    assert {(size, transport) for size, transport, *_ in rows} == {
        (size, transport)
        for size in ("1 KiB", "64 KiB")
        for transport in ("ray object", "wire tcp", "wire objstore")
    }, out.stdout
    for size, transport, median, best, _, ratio in rows:
        assert 0 < float(best) <= float(median), (size, transport)
        if transport == "ray object":
            assert float(ratio) == 1.0


def test_bench_distributed_steps_on_a_local_ray_cluster_places_tasks_through_submit() -> None:
    out = _script(
        "bench_distributed_steps.py",
        "--ray",
        "--steps",
        "10",
        "--ps",
        "1",
        "--workers",
        "2",
        "--models",
        "digits",
    )
    assert "local Ray cluster: 2 nodes" in out.stdout
    row = re.search(
        r"digits: 1 ps, 2 worker\(s\): +([0-9.]+) steps/s in total \(([0-9.]+), ([0-9.]+) per worker",
        out.stdout,
    )
    assert row is not None, out.stdout
    assert all(float(x) > 0 for x in row.groups())
