"""The config listener against hostile files: FIFOs, huge key counts, absurd nesting."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from antcolony.actors import Runtime, get_runtime
from antcolony.config import GetStats, Poll, spawn_file_listener

LOGGER = "antcolony.config.file_listener"


@pytest.fixture
async def runtime() -> Runtime:
    return get_runtime()


async def _max_loop_gap_while(awaitable: object) -> tuple[object, float]:
    """Run ``awaitable`` while a ticker measures the longest time the loop was unavailable, in
    CPU seconds of the loop's thread: a turn that computes shows at full length, while time the
    thread spends descheduled on a loaded machine (or idle between ticks) does not count."""
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.thread_time())
            await asyncio.sleep(0.002)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    try:
        result = await awaitable  # type: ignore[misc]
    finally:
        ticks.append(time.thread_time())
        task.cancel()
    return result, max(b - a for a, b in itertools.pairwise(ticks))


@pytest.mark.slow
async def test_a_config_with_65536_unknown_keys_is_applied_without_freezing_the_loop(
    runtime: Runtime, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    obj: dict[str, object] = {f"u{i}": 1 for i in range(65536)}
    obj["perfControl"] = 40
    path = tmp_path / "config.json"
    path.write_text(json.dumps(obj))  # ~840 KB: under the 1 MiB cap
    ref = spawn_file_listener(path, 60.0)
    snapshot, gap = await _max_loop_gap_while(ref.ask(Poll(), timeout=60))
    assert snapshot is not None and snapshot.config.perf_control == 40
    # Before: a regex compile and a scan from the start of the text per unknown key (35-94 s).
    assert gap < 0.25, f"the event loop was blocked {gap:.3f} s"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "unknown key" in r.getMessage()]
    assert 1 <= len(warnings) <= 21  # listed up to a limit, then counted
    assert any("65516 more unknown keys" in r.getMessage() for r in caplog.records)
    await ref.stop()


async def test_a_200k_deep_config_is_rejected_once_without_a_traceback(
    runtime: Runtime, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    path = tmp_path / "config.json"
    path.write_text('{"perfControl": 50, "x": ' + "[" * 200_000 + "]" * 200_000 + "}")
    ref = spawn_file_listener(path, 0.01)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while (await ref.ask(GetStats(), timeout=5)).polls < 5:
        assert loop.time() < deadline, "the listener stopped polling"
        await asyncio.sleep(0.01)
    assert await ref.ask(Poll(), timeout=5) is None
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage()[:200] for r in errors]
    assert errors[0].exc_info is None and "nested 200001 levels deep" in errors[0].getMessage()
    assert str(path) in errors[0].getMessage()
    assert not any("RecursionError" in r.getMessage() for r in caplog.records)
    await ref.stop()


async def test_a_fifo_at_the_config_path_is_reported_and_polling_goes_on(
    runtime: Runtime, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, LOGGER)
    path = tmp_path / "config.json"
    os.mkfifo(path)
    ref = spawn_file_listener(path, 0.01)
    assert await ref.ask(Poll(), timeout=5) is None
    assert any("FIFO" in r.getMessage() and "not a regular file" in r.getMessage() for r in caplog.records)
    await ref.stop()


_SWAP_SCRIPT = textwrap.dedent(
    """
    import logging, os, sys
    import antcolony as ac
    from antcolony.config import Poll, spawn_file_listener
    from antcolony.config import file_listener as fl

    logging.basicConfig(level=logging.WARNING)
    fifo, regular = sys.argv[1], sys.argv[2]
    os.mkfifo(fifo)
    real_stat = fl._stat_file
    # The path is swapped between the listener's stat (a regular file) and its open (a FIFO).
    fl._stat_file = lambda path: real_stat(regular)

    async def main():
        ref = spawn_file_listener(fifo, 0.05, read_timeout=1.0)
        await ref.ask(Poll(), timeout=10)
        await ref.stop()

    ac.run(main())
    print("ac.run returned", flush=True)
    """
)


@pytest.mark.slow
def test_a_config_swapped_for_a_fifo_never_hangs_a_thread_or_the_exit(tmp_path: Path) -> None:
    regular = tmp_path / "regular.json"
    regular.write_text('{"perfControl": 50}')
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _SWAP_SCRIPT, str(tmp_path / "config.json"), str(regular)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("ac.run() did not return: a worker thread hangs in the open of the FIFO")
    assert proc.returncode == 0, proc.stderr
    assert "ac.run returned" in proc.stdout
    assert "FIFO" in proc.stderr
