"""Two jobs as two OS processes on one simulated GPU: its memory is one budget for both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Each test starts job processes sharing a simulated GPU: slow.
pytestmark = pytest.mark.slow

MiB = 1 << 20
JOB = Path(__file__).with_name("sim_gpu_job.py")


class Job:
    def __init__(self, tmp: Path, name: str, mib: int, sim_mib: int = 64, vmem: bool = True) -> None:
        self.ready, self.status, self.stop = (
            tmp / f"{name}.{kind}" for kind in ("ready", "status.json", "stop")
        )
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "antcolony",
                "run",
                str(JOB),
                "--mib",
                str(mib),
                "--sim-memory-mib",
                str(sim_mib),
                "--vmem",
                str(int(vmem)),
                "--status",
                str(self.status),
                "--ready",
                str(self.ready),
                "--stop",
                str(self.stop),
            ],
            env=dict(os.environ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def wait_ready(self, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while not self.ready.exists():
            if self.proc.poll() is not None:
                raise AssertionError(f"job exited with {self.proc.returncode}: {self.proc.stdout.read()}")
            if time.monotonic() > deadline:
                raise AssertionError("job not ready in time")
            time.sleep(0.05)
        return json.loads(self.ready.read_text())

    def gpu_status(self) -> dict | None:
        try:
            status = json.loads(self.status.read_text())
        except (OSError, ValueError):
            return None
        return next(iter(status["gpuUsageInfo"].values()), None)

    def finish(self) -> int:
        self.stop.touch()
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        return self.proc.returncode


def _until(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def test_a_second_process_falls_back_to_host_memory_and_both_status_files_show_the_device_total(tmp_path):
    # Each job's variable needs a copy-in buffer and the variable itself on the device: job A
    # (12 MiB) grows a 32 MiB pool, job B (24 MiB) would need 64 MiB more of the 64 MiB device.
    a = Job(tmp_path, "a", mib=12)
    try:
        fa = a.wait_ready()
        assert fa["bytes_in_use"] >= 12 * MiB and fa["host_bytes_in_use"] == 0, fa
        b = Job(tmp_path, "b", mib=24)
        try:
            fb = b.wait_ready()
            # the device is full across both processes: the second job's variable went to host memory
            assert fb["host_bytes_in_use"] >= 24 * MiB and fb["num_host_fallbacks"] >= 1, fb
            assert fa["pool_bytes"] + fb["pool_bytes"] <= 64 * MiB

            def both_show_total():
                # the device total as both see it: both pools (the first job's after it handed its
                # free memory back, told by the ledger that the second job was refused)
                sa, sb = a.gpu_status(), b.gpu_status()
                return (
                    sa
                    and sb
                    and sa["deviceMemPoolSize"] < fa["pool_bytes"]
                    and sa["deviceMemUsedNvidia"]
                    == sb["deviceMemUsedNvidia"]
                    == sa["deviceMemPoolSize"] + sb["deviceMemPoolSize"]
                    and (sa, sb)
                )

            sa, sb = _until(both_show_total)
            assert sb["hostMemUsedMax"] >= 24 * MiB and sa["hostMemUsedMax"] == 0
            assert 12 * MiB <= sa["deviceMemPoolSize"] < fa["pool_bytes"]
        finally:
            assert b.finish() == 0
        # the second job's exit gave its device memory back: the first job's status shows it alone
        _until(lambda: (st := a.gpu_status() or {}).get("deviceMemUsedNvidia") == st.get("deviceMemPoolSize"))
    finally:
        assert a.finish() == 0


def test_with_vmem_off_the_second_process_gets_resource_exhausted(tmp_path):
    a = Job(tmp_path, "a", mib=12)
    try:
        a.wait_ready()
        b = Job(tmp_path, "b", mib=24, vmem=False)
        result = b.wait_ready()
        assert b.proc.wait(timeout=30) == 3
        assert result["error"] == "ResourceExhaustedError"
        assert "simulated GPU 0000:01:00.0 is full" in result["message"], result
        assert "hold/Assign" in result["message"], result  # the node that could not allocate
    finally:
        assert a.finish() == 0


def test_a_killed_process_frees_its_share_of_the_device(tmp_path):
    a = Job(tmp_path, "a", mib=12)
    a.wait_ready()
    a.proc.kill()
    a.proc.wait(timeout=30)
    b = Job(tmp_path, "b", mib=24, vmem=False)  # fits only with the killed job's 32 MiB back
    try:
        fb = b.wait_ready()
        assert "error" not in fb and fb["host_bytes_in_use"] == 0, fb
    finally:
        assert b.finish() == 0


def test_an_unusable_runtime_directory_leaves_the_gpu_to_the_process_with_a_warning(tmp_path):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    env = {**os.environ, "ANTCOLONY_RUNTIME_DIR": str(blocker / "run")}
    code = (
        "import asyncio, logging, antcolony as ac\nlogging.basicConfig()\n"
        "async def main():\n"
        "    g = ac.Graph()\n"
        "    with g.as_default(), ac.device('/gpu:0'):\n"
        "        v = ac.Variable(ac.zeros([1024]))\n"
        "    async with ac.Session(g, config=ac.SessionConfig(gpu_backend='sim', sim_gpu_count=1)) as s:\n"
        "        await s.run(v.initializer)\n"
        "        print('in use', s.memory_stats('/gpu:0').bytes_in_use)\n"
        "ac.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split("in use ")[1]) >= 4096  # the variable is on the (process-local) device
    assert "cannot use the machine-wide memory ledger" in out.stderr and "ANTCOLONY_RUNTIME_DIR" in out.stderr


def test_a_process_that_closed_its_sessions_hands_its_pool_back_to_the_device(tmp_path):
    code = (
        "import asyncio, json, sys, antcolony as ac\n"
        "async def main():\n"
        "    g = ac.Graph()\n"
        "    with g.as_default(), ac.device('/gpu:0'):\n"
        "        v = ac.Variable(ac.ones([24 << 18]))\n"
        "    config = ac.SessionConfig(gpu_backend='sim', sim_gpu_count=1, sim_gpu_memory=64 << 20, vmem=False)\n"
        "    async with ac.Session(g, config=config) as s:\n"
        "        await s.run(v.initializer)\n"
        "    print('closed', flush=True)\n"
        "    await asyncio.to_thread(sys.stdin.readline)\n"  # the runtime (and its pool) lives on
        "ac.run(main())\n"
    )
    a = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert a.stdout is not None and a.stdout.readline().strip() == "closed"
        ledger = Path(os.environ["ANTCOLONY_RUNTIME_DIR"]) / "simgpu-0000_01_00.0.json"

        def held() -> int:
            try:
                return sum(json.loads(ledger.read_text())["holders"].values())
            except (OSError, ValueError):
                return -1

        # the 24 MiB variable and its 24 MiB initial value grew a pool of 64 MiB; closed, it goes back
        _until(lambda: held() == 0, timeout=60)
        b = Job(tmp_path, "b", mib=24, vmem=False)  # needs 48 MiB of the 64
        try:
            fb = b.wait_ready()
            assert "error" not in fb and fb["host_bytes_in_use"] == 0, fb
        finally:
            assert b.finish() == 0
    finally:
        a.kill()
        a.wait(timeout=30)
