"""A status write that keeps failing is logged once per cause, again when the cause changes."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from antcolony.actors import get_runtime
from antcolony.actors.services import GetStats, GpuUsage, NvmlReader, Settle, StatisticsDumper, StepReport
from tests.manual_clock import ManualClock

LOGGER = "antcolony.actors.services.statistics"


class _NoNvml:
    def nvmlInit(self) -> None:
        raise RuntimeError("NVML Shared Library Not Found")


def _report(peak: int) -> StepReport:
    usage = GpuUsage("0000:01:00.0", 0, 1000, peak, peak, 8000, 4000, 0, 0, 1 << 20, 0, "")
    return StepReport("graph_1", 1000.0, {"/gpu:0": usage})


async def test_repeated_identical_write_failures_log_one_warning_per_cause(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    target = tmp_path / "missing" / "status.json"
    clock = ManualClock(1000.0)
    ref = get_runtime().spawn(
        StatisticsDumper, str(target), clock=clock, nvml=NvmlReader(_NoNvml()), interval=10.0
    )

    async def check(peak: int) -> None:
        clock.now += 10
        ref.tell(_report(peak))
        await ref.ask(GetStats(), timeout=5)
        await ref.ask(Settle(), timeout=5)

    def warnings() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]

    for peak in range(2000, 2005):  # five checks, one cause: the directory is missing
        await check(peak)
    stats = await ref.ask(GetStats(), timeout=5)
    assert stats.write_failures == 5
    assert len(warnings()) == 1 and "FileNotFoundError" in warnings()[0]
    target.parent.mkdir()
    target.mkdir()  # a new cause: the target is a directory
    await check(3000)
    await check(3001)
    assert len(warnings()) == 2 and "IsADirectoryError" in warnings()[1]
    target.rmdir()
    await check(4000)  # the cause clears: written
    assert target.is_file()
    target.unlink()
    target.mkdir()
    await check(5000)  # the same cause as before, after a success: worth a warning again
    assert len(warnings()) == 3
