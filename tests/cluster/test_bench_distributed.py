"""scripts/bench_distributed.py runs on its own local Ray with tiny sizes and prints one row per
transport and size with its ratio to the plain Ray object round trip. Slow; skipped without Ray."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

from tests.children import Child, run_together

pytest.importorskip("ray")

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs() -> dict[str, subprocess.CompletedProcess[str]]:
    """Both scripts, each on its own local Ray (none of a test's cluster), started together
    (tests/children.py: most of their time is Ray and their tasks starting)."""
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    commands = {
        "transports": ("bench_distributed.py", "--sizes", "1024,65536", "--reps", "3"),
        "steps": (
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
        ),
    }
    children = {
        name: Child(
            [sys.executable, str(ROOT / "scripts" / script), *args], env=env, cwd=str(ROOT), timeout=400
        )
        for name, (script, *args) in commands.items()
    }
    return run_together(children)


def _output(runs: dict[str, subprocess.CompletedProcess[str]], name: str) -> subprocess.CompletedProcess[str]:
    out = runs[name]
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return out


def test_bench_distributed_prints_every_transport_and_size(
    runs: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    out = _output(runs, "transports")
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


def test_bench_distributed_steps_on_a_local_ray_cluster_places_tasks_through_submit(
    runs: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    out = _output(runs, "steps")
    assert "local Ray cluster: 2 nodes" in out.stdout
    row = re.search(
        r"digits: 1 ps, 2 worker\(s\): +([0-9.]+) steps/s in total \(([0-9.]+), ([0-9.]+) per worker",
        out.stdout,
    )
    assert row is not None, out.stdout
    assert all(float(x) > 0 for x in row.groups())
