"""``antcolony submit`` and ``antcolony cluster``: what a user sees without a cluster (no Ray needed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from antcolony.__main__ import _split_script_args, main
from antcolony.cluster.cli import format_cluster, parse_size
from antcolony.errors import ConfigError

JOB = str(Path(__file__).resolve().parents[2] / "scripts" / "share_gpu_job.py")


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")


@pytest.mark.parametrize(
    "text, size",
    [("4GiB", 4 << 30), ("512MiB", 512 << 20), ("1.5G", 3 << 29), ("1000", 1000), ("2 mb", 2_000_000)],
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_a_bad_size_says_how_to_write_one() -> None:
    with pytest.raises(ConfigError, match=r"write e\.g\. 4GiB"):
        parse_size("4 bananas")


def test_submit_options_stop_at_the_script_whose_own_options_pass_through() -> None:
    own, rest = _split_script_args(
        ["submit", "--gpu-memory", "4GiB", "--perf", "50", "--detach", "job.py", "--perf", "9"]
    )
    assert own == ["submit", "--gpu-memory", "4GiB", "--perf", "50", "--detach", "job.py"]
    assert rest == ["--perf", "9"]


@pytest.mark.parametrize(
    "argv", [["submit", "--gpu-memory", "1GiB", JOB], ["cluster", "status"], ["cluster", "stop", "job-1"]]
)
def test_without_ray_the_cluster_commands_say_how_to_install_it(
    no_ray: None, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert "pip install 'antcolony[ray]'" in capsys.readouterr().err


def test_detach_needs_an_address(no_ray: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "--detach", JOB]) == 2
    assert "--detach needs --address" in capsys.readouterr().err


def test_cluster_table_shows_jobs_limits_step_times_and_a_node_gone() -> None:
    nodes = [
        {
            "node_id": "a" * 56,
            "address": "127.0.0.1",
            "alive": True,
            "gpus": {"sim_gpu_0": 128 << 20},
            "jobs": [
                {
                    "job_id": "g1",
                    "gpu": "sim_gpu_0",
                    "priority": "guaranteed",
                    "perf": 100,
                    "gpu_memory": 80 << 20,
                    "config": {"maxDeviceMem": 80 << 20, "perfControl": 100},
                    "baseline_us": 7000,
                    "status": {
                        "miniBatchDuration": 7400,
                        "deviceMemLimit": 64 << 20,
                        "deviceMemUsedMax": 1 << 20,
                        "hostFallbacks": 3,
                    },
                }
            ],
            "decisions": [
                {"t": 0.0, "job": "o", "perfControl": 0, "maxDeviceMem": 48 << 20, "reason": "suspended: x"}
            ],
        },
        {
            "node_id": "b" * 56,
            "address": "127.0.0.1",
            "alive": False,
            "gpus": {},
            "jobs": [],
            "decisions": [],
            "lost_jobs": [
                {
                    "job_id": "o3",
                    "node_id": "b" * 56,
                    "gpu": "sim_gpu_2",
                    "priority": "opportunistic",
                    "gpu_memory": 32 << 20,
                    "perf": 100,
                }
            ],
        },
        {
            "node_id": "c" * 56,
            "address": "127.0.0.1",
            "alive": True,
            "gpus": {},
            "jobs": [],
            "decisions": [],
            "error": "its coordinator did not answer (GetTimeoutError); it restarts by itself",
        },
    ]
    text = format_cluster(nodes)
    job = next(line for line in text.splitlines() if "g1" in line)
    for part in (
        "perf 100",
        "mem asked 80.0M",
        "config 80.0M",
        "reached 64.0M",
        "step 7.4 ms (baseline 7.0 ms)",
        "host fallbacks 3",
    ):
        assert part in job, (part, job)
    assert "o: perfControl 0, maxDeviceMem 48.0M: suspended: x" in text
    lines = text.splitlines()
    gone = next(i for i, line in enumerate(lines) if line.startswith("node bbbbbbbbbbbb"))
    assert "127.0.0.1 GONE (its jobs went with it)" in lines[gone]
    lost = lines[gone + 1]  # the jobs it took, listed under it
    for part in (
        "sim_gpu_2",
        "opportunistic",
        "LOST with its node",
        "asked 32.0M",
        "antcolony cluster stop o3",
    ):
        assert part in lost, (part, lost)
    assert (
        "node cccccccccccc 127.0.0.1 alive: no GPU\n  its coordinator did not answer (GetTimeoutError)"
        in text
    )
