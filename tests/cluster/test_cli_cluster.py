"""``antcolony submit`` and ``antcolony cluster``: what a user sees without a cluster (no Ray needed)."""

from __future__ import annotations

import subprocess
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
    assert own == ["submit", "--gpu-memory=4GiB", "--perf=50", "--detach", "job.py"]
    assert rest == ["--perf", "9"]
    own, rest = _split_script_args(["submit", "--gpu-memory", "-1GiB", "job.py", "-x"])
    assert own == ["submit", "--gpu-memory=-1GiB", "job.py"] and rest == ["-x"]


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


@pytest.mark.parametrize(
    "options, message",
    [
        (["--sim-gpu-memory", "0"], "--sim-gpu-memory 0: must be at least 1048576 bytes"),
        (["--sim-gpu-memory", "512KiB"], "--sim-gpu-memory 512KiB: must be at least"),
        (["--gpu-memory", "-1GiB"], "--gpu-memory -1GiB: a size cannot be negative"),
        (["--gpu-memory", "0"], "--gpu-memory 0: must be at least 1 bytes"),
        (["--gpu-memory", "lots"], "--gpu-memory 'lots' is not a size"),
        (["--gpu-memory", "32GiB"], "--gpu-memory 32GiB is more than a simulated GPU of the local Ray has"),
        (["--perf", "101"], "--perf 101: perfControl is a percentage"),
        (["--perf", "-5"], "--perf -5: perfControl is a percentage"),
        (["--name", "../escape"], "--name '../escape': a job id is"),
        (["--sim-gpus", "0"], "--sim-gpus 0: a local Ray needs at least 1"),
        (["--connect-timeout", "0"], "--connect-timeout 0.0: give a positive number"),
        (["--ps", "1"], "--workers None: a distributed job (--ps) needs 1 worker or more"),
        (["--workers", "0"], "--workers 0: a distributed job (--ps) needs 1 worker or more"),
        (["--workers", "2", "--ps", "-1"], "--ps -1: give 0 parameter servers or more"),
        (["--spread"], "--spread places the tasks of a distributed job"),
    ],
)
def test_submit_arguments_are_checked_before_ray_and_blame_the_right_flag(
    no_ray: None, options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # no_ray: a check that came after starting Ray would print how to install Ray instead
    assert main(["submit", *options, JOB]) == 2
    err = capsys.readouterr().err
    assert message in err and "pip install" not in err, err


def test_submit_of_a_missing_script_names_it_before_ray(
    no_ray: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["submit", "no/such/job.py"]) == 2
    assert "no/such/job.py: no such file" in capsys.readouterr().err


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    "argv", [["cluster", "status"], ["cluster", "stop", "job-1"], ["submit", "--detach", JOB]]
)
def test_an_address_where_nothing_listens_is_an_error_naming_it_before_ray(
    no_ray: None, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    address = f"127.0.0.1:{_closed_port()}"
    assert main([*argv[:2], "--address", address, *argv[2:]]) == 2
    err = capsys.readouterr().err
    assert f"no Ray cluster answers at {address}" in err and "pip install" not in err, err


@pytest.mark.slow
@pytest.mark.parametrize("command", [["cluster", "status"], ["submit", "--detach"]])
def test_an_address_that_never_answers_ends_the_command_at_its_deadline(command: list[str]) -> None:
    pytest.importorskip("ray")
    import socket

    with socket.socket() as listener:  # accepts TCP connections, never says a word
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        argv = [*command, "--address", address, "--connect-timeout", "3"]
        if command[0] == "submit":
            argv.append(JOB)
        out = subprocess.run(
            [sys.executable, "-m", "antcolony", *argv], capture_output=True, text=True, timeout=120
        )
    assert out.returncode == 2, out.stderr[-2000:]
    assert address in out.stderr, out.stderr[-2000:]


JOB_SCRIPT = "import os, sys\nopen(sys.argv[1], 'w').write(os.environ['GPU_CONFIG_FILE'])\n"


@pytest.fixture(scope="module")
def local_submits(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[bool, tuple[Path, subprocess.CompletedProcess[str]]]:
    """``antcolony submit`` of a one-line job on a local Ray of its own, with and without
    --keep-files, both started together (tests/children.py: each starts its own Ray and waits on
    it): by keep, the folder (its job script, the file the job writes, the cluster directory) and
    the finished process."""
    pytest.importorskip("ray")
    import os

    from tests.children import Child, run_together

    folders: dict[bool, Path] = {}
    children = {}
    for keep in (False, True):
        folder = folders[keep] = tmp_path_factory.mktemp(f"submit_keep_{keep}")
        script = folder / "job.py"
        script.write_text(JOB_SCRIPT)
        root = folder / "cluster"
        env = {**os.environ, "ANTCOLONY_CLUSTER_DIR": str(root), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        argv = ["submit", "--sim-gpu-memory", "256MiB", "--gpu-memory", "64MiB", "--name", "cleanup-job"]
        command = [
            sys.executable,
            "-m",
            "antcolony",
            *argv,
            *(["--keep-files"] if keep else []),
            str(script),
            str(folder / "ran"),
        ]
        children[str(keep)] = Child(command, env=env, timeout=300)
    runs = run_together(children)
    return {keep: (folders[keep], runs[str(keep)]) for keep in (False, True)}


@pytest.mark.slow
@pytest.mark.parametrize("keep", [False, True])
def test_a_local_submit_removes_its_job_files_when_the_job_ends_unless_kept(
    local_submits: dict[bool, tuple[Path, subprocess.CompletedProcess[str]]], keep: bool
) -> None:
    folder, out = local_submits[keep]
    ran, root = folder / "ran", folder / "cluster"
    assert out.returncode == 0, out.stderr[-3000:]
    assert ran.read_text().startswith(str(root))  # the job ran, its files under the cluster dir
    left = list(root.glob("*/jobs/cleanup-job"))
    if keep:
        assert len(left) == 1 and (left[0] / "config.json").is_file()
    else:
        assert left == [] and list(root.iterdir()) == []
