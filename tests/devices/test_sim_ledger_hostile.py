"""The simulated GPU's machine-wide ledger under hostile or broken files, through the public API.

Whatever sits at the ledger's path (a FIFO, a link to a device, an oversize file, garbage), the
GPU step succeeds with a warning; holders that cannot hold memory (pid <= 0, a zombie) do not
count; a runtime directory another user could write is refused; processes that disagree on the
capacity do not over-commit it. Cases where the old code hung run in a child process with a
timeout.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import antcolony as ac
from antcolony.devices.sim_ledger import RUNTIME_DIR_ENV

MiB = 1 << 20
LEDGER = "simgpu-0000_01_00.0.json"
LOCK = "simgpu-0000_01_00.0.lock"


def _graph(mib: int) -> tuple[ac.Graph, ac.Variable]:
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:0"):
        v = ac.Variable(ac.ones([mib * MiB // 4]), name="hold")
    return g, v


async def _step(mib: int = 1, sim_mib: int = 64, vmem: bool = False) -> float:
    """Initialise a ``mib`` MiB variable on the simulated GPU and read back its sum."""
    g, v = _graph(mib)
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=sim_mib * MiB, vmem=vmem)
    async with ac.Session(g, config=config) as sess:
        await sess.run(v.initializer)
        return float(np.sum(await sess.run(v)))


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "run"
    path.mkdir(mode=0o700)
    monkeypatch.setenv(RUNTIME_DIR_ENV, str(path))
    return path


def _holders(run_dir: Path) -> dict[str, int]:
    return json.loads((run_dir / LEDGER).read_text())["holders"]


GARBAGE = {
    "holders_a_list": json.dumps({"holders": [1, 2, 3]}),
    "holders_a_string": json.dumps({"holders": "everything"}),
    "not_an_object": json.dumps([{"holders": {}}]),
    "deeply_nested": "[" * 200_000 + "]" * 200_000,
    "not_json": "\x00\xff garbage {",
    "oversize": json.dumps({"holders": {}, "pad": "x" * (2 << 20)}),
}


@pytest.mark.parametrize("content", GARBAGE.values(), ids=GARBAGE.keys())
async def test_a_garbage_ledger_is_replaced_with_a_warning_and_the_step_succeeds(run_dir, content, caplog):
    (run_dir / LEDGER).write_text(content, encoding="utf-8", errors="surrogateescape")
    with caplog.at_level(logging.WARNING):
        assert await _step(1) == MiB // 4
    assert "starting it afresh" in caplog.text and LEDGER in caplog.text
    # the next write replaced the garbage with a valid ledger of this process's memory
    assert all(k.startswith(f"{os.getpid()}:") for k in _holders(run_dir))


async def test_malformed_holders_are_dropped_and_pid_zero_or_negative_never_counts(run_dir, caplog):
    # 3 x 60 MiB of bogus holders on a 64 MiB device: counted, nothing would fit
    bogus = {"0:1:1": 60 * MiB, "-1:1:1": 60 * MiB, "abc:1:1": 60 * MiB, "12:1:1": "60", "13:1:1": True}
    (run_dir / LEDGER).write_text(json.dumps({"capacity": 64 * MiB, "holders": bogus}))
    with caplog.at_level(logging.WARNING):
        assert await _step(20, sim_mib=64, vmem=False) == 20 * MiB // 4
    assert "dropped 5 malformed holder entries" in caplog.text
    assert all(k.startswith(f"{os.getpid()}:") for k in _holders(run_dir))


async def test_a_directory_at_the_ledger_path_is_a_warning_not_a_failed_step(run_dir, caplog):
    (run_dir / LEDGER).mkdir()
    with caplog.at_level(logging.WARNING):
        assert await _step(1) == MiB // 4
    assert "unusable" in caplog.text and "cannot write its ledger" in caplog.text


def _child(run_dir: Path, code: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, RUNTIME_DIR_ENV: str(run_dir)}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
    )


STEP = (
    "import logging, numpy as np, antcolony as ac\nlogging.basicConfig(level=logging.WARNING)\n"
    "async def main():\n"
    "    g = ac.Graph()\n"
    "    with g.as_default(), ac.device('/gpu:0'):\n"
    "        v = ac.Variable(ac.ones([1 << 18]))\n"
    "    config = ac.SessionConfig(gpu_backend='sim', sim_gpu_count=1, sim_gpu_memory=64 << 20, vmem=False)\n"
    "    async with ac.Session(g, config=config) as s:\n"
    "        await s.run(v.initializer)\n"
    "        print('sum', int(np.sum(await s.run(v))))\n"
    "ac.run(main())\n"
)


@pytest.mark.parametrize("plant", ["fifo", "dev_zero_link", "lock_is_fifo"])
def test_a_fifo_or_device_at_the_ledger_path_neither_hangs_nor_fails_the_step(run_dir, plant):
    if plant == "fifo":
        os.mkfifo(run_dir / LEDGER)
    elif plant == "dev_zero_link":
        (run_dir / LEDGER).symlink_to("/dev/zero")
    else:
        os.mkfifo(run_dir / LOCK)
    out = _child(run_dir, STEP)
    assert out.returncode == 0, out.stderr
    assert "sum 262144" in out.stdout
    assert "WARNING" in out.stderr and ("ledger" in out.stderr), out.stderr


def test_a_lock_held_for_ever_by_another_process_is_given_up_on_with_a_warning(run_dir):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(run_dir / LOCK)!r}, os.O_RDWR | os.O_CREAT, 0o600)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        out = _child(run_dir, STEP)
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert out.returncode == 0, out.stderr
    assert "sum 262144" in out.stdout
    assert "has been held for" in out.stderr, out.stderr


HOLD = (
    "import sys, time, antcolony as ac\n"
    "async def main():\n"
    "    g = ac.Graph()\n"
    "    with g.as_default(), ac.device('/gpu:0'):\n"
    "        v = ac.Variable(ac.ones([int(sys.argv[1]) << 18]))\n"
    "    config = ac.SessionConfig(gpu_backend='sim', sim_gpu_count=1, sim_gpu_memory=int(sys.argv[2]) << 20,"
    " vmem=False)\n"
    "    async with ac.Session(g, config=config) as s:\n"
    "        await s.run(v.initializer)\n"
    "        print('ready', flush=True)\n"
    "        time.sleep(600)\n"
    "ac.run(main())\n"
)


def _holding_child(run_dir: Path, mib: int, sim_mib: int) -> subprocess.Popen[str]:
    env = {**os.environ, RUNTIME_DIR_ENV: str(run_dir)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(mib), str(sim_mib)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if line != "ready":
        proc.kill()
        proc.wait(timeout=30)
        raise AssertionError(f"holding child did not get ready (exit {proc.poll()})")
    return proc


async def test_a_killed_but_unreaped_process_holds_no_memory(run_dir):
    child = _holding_child(run_dir, 24, 64)  # 24 MiB variable + its 24 MiB initial value
    try:
        assert any(k.startswith(f"{child.pid}:") for k in _holders(run_dir))
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "child did not become a zombie"
            time.sleep(0.02)
        # the zombie's 64 MiB pool is back: 40 MiB of 64 fit with vmem off
        assert await _step(20, sim_mib=64, vmem=False) == 20 * MiB // 4
    finally:
        child.kill()
        child.wait(timeout=30)


async def test_processes_that_disagree_on_the_capacity_share_the_smallest_and_are_told(run_dir, caplog):
    child = _holding_child(run_dir, 12, 64)  # a 64 MiB device, 32 MiB of it taken
    try:
        with (
            caplog.at_level(logging.WARNING),
            pytest.raises(ac.errors.ResourceExhaustedError, match="of 67108864"),
        ):
            await _step(20, sim_mib=1024, vmem=False)  # 40 MiB more: fits 1 GiB, not 64 MiB
        assert "configured with 1073741824 bytes but the processes sharing it with 67108864" in caplog.text
        assert await _step(8, sim_mib=1024, vmem=False) == 8 * MiB // 4  # 16 MiB more still fit
    finally:
        child.kill()
        child.wait(timeout=30)


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
async def test_a_runtime_directory_others_can_write_is_refused_for_private_accounting(run_dir, mode, caplog):
    os.chmod(run_dir, mode)
    with caplog.at_level(logging.WARNING):
        assert await _step(1) == MiB // 4
    assert "cannot use the machine-wide memory ledger" in caplog.text
    assert "writable by" in caplog.text and str(run_dir) in caplog.text
    assert not (run_dir / LEDGER).exists() and not (run_dir / LOCK).exists()


@pytest.mark.skipif(os.getuid() != 0, reason="giving a directory to another user needs root")
async def test_a_runtime_directory_another_user_owns_is_refused(run_dir, caplog):
    os.chown(run_dir, 65534, -1)
    with caplog.at_level(logging.WARNING):
        assert await _step(1) == MiB // 4
    assert "belongs to uid 65534, not to this user" in caplog.text and str(run_dir) in caplog.text
    assert not (run_dir / LEDGER).exists()


async def test_a_new_runtime_directory_is_created_private(tmp_path, monkeypatch):
    path = tmp_path / "fresh" / "run"
    monkeypatch.setenv(RUNTIME_DIR_ENV, str(path))
    assert await _step(1) == MiB // 4
    assert path.stat().st_mode & 0o777 == 0o700
    assert (path / LEDGER).exists()


def test_once_a_lock_wait_runs_out_the_next_updates_wait_briefly_until_the_lock_is_had_again(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process holding the lock for ever costs each job one full wait, not one per growth or
    shrink; once the lock is free again, a later stuck holder gets the full wait again. Time is
    virtual: ``time.sleep`` in the ledger advances the clock ``time.monotonic`` reads."""
    import fcntl

    from antcolony.devices import sim_ledger

    clock = [1000.0]
    monkeypatch.setattr(sim_ledger.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(sim_ledger.time, "sleep", lambda s: clock.__setitem__(0, clock[0] + s))
    ledger = sim_ledger.SimGpuLedger("0000:01:00.0", 64 << 20, run_dir)
    holder = ledger.new_holder()

    def waited(update: Any) -> float:
        start = clock[0]
        update()
        return clock[0] - start

    other = os.open(run_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o600)  # another open file: flock excludes it
    try:
        fcntl.flock(other, fcntl.LOCK_EX)
        first = waited(lambda: ledger.reserve(holder, 1 << 20))
        later = [waited(lambda: ledger.reserve(holder, 1 << 20)) for _ in range(3)]
        fcntl.flock(other, fcntl.LOCK_UN)
        free = waited(lambda: ledger.release(holder, 1 << 20))
        fcntl.flock(other, fcntl.LOCK_EX)
        stuck_again = waited(lambda: ledger.release(holder, 1 << 20))
    finally:
        os.close(other)
    assert first >= sim_ledger.LOCK_TIMEOUT_S
    assert all(w <= 2 * sim_ledger.STUCK_LOCK_TIMEOUT_S for w in later), later
    assert free == 0.0
    assert stuck_again >= sim_ledger.LOCK_TIMEOUT_S
    assert ledger.used_bytes() == 2 << 20  # every update went ahead: 4 reserves and 2 releases of 1 MiB
