"""Tests of the StatisticsDumper actor (AntMan's status file) and the NvmlReader."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from antcolony.actors import ActorRef, get_runtime
from antcolony.actors.services import (
    DumperStats,
    Flush,
    GetStats,
    GetStatus,
    GpuUsage,
    NvmlReader,
    Settle,
    StatisticsDumper,
    StepReport,
)
from antcolony.actors.services import statistics as st
from antcolony.config.status_file import GPU_USAGE_FIELDS, load_status
from antcolony.devices.allocator.stats import MemoryStats
from tests.manual_clock import ManualClock

BUS = "0000:01:00.0"
KEY = "01:00.0"
LOGGER = "antcolony.actors.services.statistics"


class NoNvml:
    """An NVML module whose init fails the way it does without a driver."""

    def nvmlInit(self) -> None:
        raise RuntimeError("NVML Shared Library Not Found")


class FakeNvml:
    def __init__(self, used: dict[str, int]) -> None:
        self.used, self.inits, self.shutdowns, self.lookups = used, 0, 0, []

    def nvmlInit(self) -> None:
        self.inits += 1

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlDeviceGetHandleByPciBusId(self, bus_id: str) -> str:
        self.lookups.append(bus_id)
        if bus_id not in self.used:
            raise RuntimeError(f"no GPU at {bus_id}")
        return bus_id

    def nvmlDeviceGetMemoryInfo(self, handle: str) -> Any:
        return SimpleNamespace(total=16 << 30, free=(16 << 30) - self.used[handle], used=self.used[handle])


def gpu(
    in_use: int = 1000,
    window_peak: int = 3000,
    peak: int | None = None,
    pool: int = 8000,
    stable: int = 4000,
    host_in_use: int = 0,
    host_peak: int = 0,
    fallbacks: int = 0,
    reason: str = "",
    bus: str = BUS,
) -> GpuUsage:
    return GpuUsage(
        bus,
        0,
        in_use,
        window_peak,
        window_peak if peak is None else peak,
        pool,
        stable,
        host_in_use,
        host_peak,
        1 << 20,
        fallbacks,
        reason,
    )


def report(us: float = 1000.0, graph: str = "graph_1", **kw: Any) -> StepReport:
    return StepReport(graph, us, {"/gpu:0": gpu(**kw)})


def start(path: Path, clock: ManualClock, nvml: NvmlReader | None = None, **kw: Any) -> ActorRef:
    return get_runtime().spawn(
        StatisticsDumper,
        str(path),
        clock=clock,
        nvml=nvml if nvml is not None else NvmlReader(NoNvml()),
        **kw,
    )


async def send(ref: ActorRef, message: StepReport) -> None:
    """Tell, and wait until it was handled (the dumper reads the clock when it handles a report)."""
    ref.tell(message)
    await ref.ask(GetStats(), timeout=5)


async def settle(ref: ActorRef) -> DumperStats:
    return await ref.ask(Settle(), timeout=5)


async def on_disk(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(1000.0)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "status.json"


async def test_the_first_report_writes_a_file_with_exactly_antmans_schema(
    path: Path, clock: ManualClock
) -> None:
    ref = start(path, clock)
    await send(ref, report(1234.4, in_use=1000, window_peak=3000, host_in_use=10, host_peak=20, fallbacks=0))
    assert (await settle(ref)).writes == 1
    written = await on_disk(path)
    assert written == {
        "gpuUsageInfo": {
            KEY: {
                "deviceMemUsedMax": 3000,
                "deviceMemUsedMin": 1000,
                "deviceMemPoolSize": 8000,
                "deviceMemStable": 4000,
                "hostMemUsedMax": 20,
                "hostMemUsedMin": 10,
                "hostMemPoolSize": 1 << 20,
                "swapReason": "",
                "deviceMemUsedNvidia": -1,
            }
        },
        "miniBatchDuration": 1234,
        "Durations": {"graph_1": 1234},
    }
    assert list(written["gpuUsageInfo"][KEY]) == list(GPU_USAGE_FIELDS)
    assert load_status(path) == written == await ref.ask(GetStatus())


async def test_nothing_is_written_within_the_interval_or_while_nothing_changes(
    path: Path, clock: ManualClock
) -> None:
    ref = start(path, clock, interval=10.0)
    for second in range(36):
        clock.now = 1000.0 + second
        await send(ref, report(1000.0))
    stats = await settle(ref)
    assert (stats.checks, stats.writes) == (4, 1)  # checks at 0, 10, 20, 30 s; only the first wrote


async def test_a_change_waits_for_the_next_check(path: Path, clock: ManualClock) -> None:
    ref = start(path, clock, interval=10.0)
    await send(ref, report(1000.0))
    clock.now += 5
    await send(ref, report(5000.0, in_use=2000))  # 5x slower and new memory figures, but no check is due
    assert (await settle(ref)).writes == 1
    clock.now += 5
    await send(ref, report(5000.0, in_use=2000))
    assert (await settle(ref)).writes == 2
    assert (await on_disk(path))["Durations"] == {"graph_1": round((1000 + 5000 + 5000) / 3)}


@pytest.mark.parametrize("factor", [10.0, 0.1])
async def test_a_step_ten_times_slower_or_faster_triggers_an_immediate_check_and_write(
    path: Path, clock: ManualClock, factor: float
) -> None:
    ref = start(path, clock, interval=10.0)
    for _ in range(9):
        await send(ref, report(1000.0))
    clock.now += 1
    await send(ref, report(1000.0 * 9))  # 9x: not a huge change
    assert (await settle(ref)).writes == 1
    clock.now += 1
    await send(ref, report(1000.0 * factor))
    stats = await settle(ref)
    assert (stats.checks, stats.writes) == (2, 2)
    samples = [1000.0] * 8 + [9000.0, 1000.0 * factor]  # the window holds the last 10 samples
    assert (await on_disk(path))["Durations"] == {"graph_1": round(sum(samples) / 10)}


async def test_a_mean_change_below_one_percent_does_not_write_and_one_percent_does(
    path: Path, clock: ManualClock
) -> None:
    ref = start(path, clock, interval=10.0)
    for _ in range(10):
        await send(ref, report(1000.0))
    clock.now += 10
    await send(ref, report(1060.0))  # mean 1006: +0.6 %
    assert (await settle(ref)).writes == 1
    assert (await on_disk(path))["Durations"] == {"graph_1": 1000}
    clock.now += 10
    await send(ref, report(1060.0))  # mean 1012: +0.6 % since the last check, +1.2 % since the last write
    stats = await settle(ref)
    assert (stats.checks, stats.writes) == (3, 2)
    assert (await on_disk(path))["Durations"] == {"graph_1": 1012}


async def test_a_graph_idle_longer_than_idle_after_leaves_minibatchduration_but_stays_in_durations(
    path: Path, clock: ManualClock
) -> None:
    ref = start(path, clock, interval=10.0, idle_after=100.0)
    await send(ref, report(5000.0, graph="graph_a"))
    start_time = clock.now
    for second in range(0, 96, 5):
        clock.now = start_time + second
        await send(ref, report(1000.0, graph="graph_b"))
    await settle(ref)
    assert (await on_disk(path))["miniBatchDuration"] == 5000
    clock.now = start_time + 100
    await send(ref, report(1000.0, graph="graph_b"))
    await settle(ref)
    written = await on_disk(path)
    assert written["miniBatchDuration"] == 1000
    assert written["Durations"] == {"graph_a": 5000, "graph_b": 1000}
    clock.now += 10
    await send(ref, report(1000.0, graph="graph_b"))
    assert (await settle(ref)).writes == 3  # idle since the last write: nothing new to say
    await send(ref, report(5000.0, graph="graph_a"))
    clock.now += 10
    await send(ref, report(1000.0, graph="graph_b"))
    assert (await settle(ref)).writes == 4
    assert (await on_disk(path))["miniBatchDuration"] == 5000  # back from idle


async def test_memory_figure_changes_trigger_a_write_at_the_next_check(
    path: Path, clock: ManualClock
) -> None:
    ref = start(path, clock, interval=10.0)
    await send(ref, report(in_use=1000, pool=8000))
    clock.now += 10
    await send(ref, report(in_use=1000, pool=8000))
    assert (await settle(ref)).writes == 1
    clock.now += 10
    await send(ref, report(in_use=1500, pool=16000, stable=12000))
    assert (await settle(ref)).writes == 2
    fields = (await on_disk(path))["gpuUsageInfo"][KEY]
    # The step at +10 s (1000 in use) wrote nothing, so it is still in the window of this write.
    assert (fields["deviceMemUsedMin"], fields["deviceMemPoolSize"], fields["deviceMemStable"]) == (
        1000,
        16000,
        12000,
    )
    clock.now += 10
    await send(ref, report(in_use=1500, pool=16000, stable=12000))
    assert (await settle(ref)).writes == 3
    assert (await on_disk(path))["gpuUsageInfo"][KEY]["deviceMemUsedMin"] == 1500


async def test_devicememusedmax_is_the_peak_of_the_window_since_the_last_write(
    path: Path, clock: ManualClock
) -> None:
    ref = start(path, clock, interval=10.0)
    await send(ref, report(in_use=1000, window_peak=8000))
    await settle(ref)
    for second, step_peak in enumerate([3000, 5000, 2000]):
        clock.now += 1 + second
        await send(ref, report(in_use=900 + second * 100, window_peak=step_peak, peak=8000))
    clock.now += 10
    await send(ref, report(in_use=1100, window_peak=2000, peak=8000))
    assert (await settle(ref)).writes == 2
    fields = (await on_disk(path))["gpuUsageInfo"][KEY]
    assert (fields["deviceMemUsedMax"], fields["deviceMemUsedMin"]) == (5000, 900)
    status = await ref.ask(GetStatus(extra=True))
    assert status["extra"]["gpus"][KEY]["deviceMemUsedMaxLifetime"] == 8000
    assert "extra" not in await on_disk(path) and "extra" not in await ref.ask(GetStatus())


async def test_swapreason_is_empty_without_a_host_fallback_in_the_window_else_the_allocators_reason(
    path: Path, clock: ManualClock
) -> None:
    ref = start(path, clock, interval=10.0)

    async def swap_reason_after(**kw: Any) -> str:
        clock.now += 10
        await send(ref, report(**kw))
        await settle(ref)
        return (await on_disk(path))["gpuUsageInfo"][KEY]["swapReason"]

    assert await swap_reason_after(fallbacks=0) == ""
    assert await swap_reason_after(fallbacks=1, reason="FRAGMENT", host_in_use=64, host_peak=64) == "FRAGMENT"
    assert await swap_reason_after(fallbacks=1, reason="FRAGMENT", host_in_use=64, host_peak=64) == ""
    assert await swap_reason_after(fallbacks=3, reason="OOM", host_in_use=64, host_peak=128) == "OOM"


async def test_devicememusednvidia_is_minus_one_without_nvml_and_nvmls_figure_with_it(
    path: Path,
    clock: ManualClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="antcolony.actors.services.nvml")
    ref = start(path, clock)
    await send(ref, report())
    await settle(ref)
    assert (await on_disk(path))["gpuUsageInfo"][KEY]["deviceMemUsedNvidia"] == -1
    assert sum("NVML is not usable" in r.getMessage() for r in caplog.records) == 1

    monkeypatch.setitem(sys.modules, "pynvml", None)  # the module is not installed
    assert await NvmlReader().read_used([BUS]) == {BUS: -1}

    fake = FakeNvml({BUS: 123456})
    other = tmp_path / "other.json"
    ref2 = start(other, clock, nvml=NvmlReader(fake))
    ref2.tell(StepReport("graph_1", 1000.0, {"a": gpu(), "b": gpu(bus="0000:02:00.0")}))
    assert await ref2.ask(Flush()) is True
    info = (await on_disk(other))["gpuUsageInfo"]
    assert (info[KEY]["deviceMemUsedNvidia"], info["02:00.0"]["deviceMemUsedNvidia"]) == (123456, -1)
    assert fake.inits == 1 and BUS in fake.lookups  # looked up by the full bus id


@pytest.mark.slow
async def test_a_torn_status_file_is_never_seen_by_a_concurrent_reader(
    path: Path, clock: ManualClock
) -> None:
    ref = start(path, clock)
    for graph in range(300):  # a file of some size, so a torn read would be likely
        await send(ref, report(1000.0 + graph, graph=f"graph_{graph}"))
    await settle(ref)
    stop, reads, torn = threading.Event(), [0], []

    def reader() -> None:
        while not stop.is_set():
            text = path.read_text()
            reads[0] += 1
            try:
                json.loads(text)
            except ValueError:
                torn.append(text)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for step in range(60):
            await send(ref, report(2000.0 + step))
            assert await ref.ask(Flush(), timeout=5) is True
    finally:
        stop.set()
        thread.join()
    assert torn == [] and reads[0] > 0
    assert (await settle(ref)).writes == 61


async def test_a_failing_write_is_logged_and_retried_at_the_next_check_while_the_actor_keeps_running(
    tmp_path: Path, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    target = tmp_path / "missing" / "status.json"
    ref = start(target, clock, interval=10.0)
    await send(ref, report(in_use=1000, window_peak=9000))
    stats = await settle(ref)
    assert (stats.writes, stats.write_failures) == (0, 1) and ref.is_alive
    [record] = [r for r in caplog.records if r.name == LOGGER]
    assert str(target) in record.getMessage() and "FileNotFoundError" in record.getMessage()
    target.parent.mkdir()
    clock.now += 5
    await send(ref, report(in_use=1000, window_peak=2000))
    assert (await settle(ref)).writes == 0  # not a check yet
    clock.now += 5
    await send(ref, report(in_use=1000, window_peak=2000))
    stats = await settle(ref)
    assert (stats.writes, stats.write_failures, stats.last_error) == (1, 1, None)
    assert (await on_disk(target))["gpuUsageInfo"][KEY]["deviceMemUsedMax"] == 9000  # failed window kept


async def test_the_dumper_never_blocks_the_loop_and_writes_one_at_a_time(
    path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first write's fsync is held on its thread until the test lets it go: the dumper
    answers (and takes five more reports) while that write is provably still in progress, so
    the write runs off the loop; the reports that came meanwhile are coalesced into one write."""
    real_fsync, in_fsync, release, active, most = os.fsync, threading.Event(), threading.Event(), [0], [0]
    loop_thread = threading.get_ident()

    def slow_fsync(fd: int) -> None:  # a slow disk: a write on the loop would stall it this long
        assert threading.get_ident() != loop_thread, "fsync on the event loop's thread"
        in_fsync.set()
        release.wait(10)
        real_fsync(fd)

    real_write = st.write_status_atomic

    async def counting_write(*args: Any, **kw: Any) -> None:
        active[0] += 1
        most[0] = max(most[0], active[0])
        try:
            await real_write(*args, **kw)
        finally:
            active[0] -= 1

    monkeypatch.setattr(os, "fsync", slow_fsync)
    monkeypatch.setattr(st, "write_status_atomic", counting_write)
    ref = start(path, clock)
    try:
        gpus = {f"/gpu:{i}": gpu(bus=f"0000:{i + 1:02x}:00.0") for i in range(8)}
        for graph in range(2000):  # a large status
            ref.tell(StepReport(f"graph_{graph}", 1000.0, gpus))
        assert await asyncio.to_thread(in_fsync.wait, 5)
        for step in range(5):  # huge changes: five write requests while the first write is held
            ref.tell(StepReport("graph_0", 1000.0 * 10 ** (step + 1), gpus))
        stats = await ref.ask(GetStats(), timeout=5)  # the mailbox is not held up by the write
        assert not release.is_set() and (stats.checks, stats.writes) == (6, 0)
    finally:
        release.set()
    stats = await settle(ref)
    assert most[0] == 1 and stats.writes == 2  # coalesced: the first write, then one for the rest
    assert (await on_disk(path))["Durations"]["graph_0"] == round((1000 + 1e4 + 1e5 + 1e6 + 1e7 + 1e8) / 6)


async def test_flush_writes_now_and_answers_whether_it_wrote(path: Path, clock: ManualClock) -> None:
    ref = start(path, clock)
    assert await ref.ask(Flush()) is False  # nothing reported yet
    assert await ref.ask(GetStatus()) is None
    await send(ref, report())
    assert await ref.ask(Flush()) is True
    assert (await settle(ref)).writes == 2


def test_gpuusage_takes_its_figures_from_the_allocators_memory_stats() -> None:
    stats = MemoryStats(
        bytes_in_use=1,
        peak_bytes_in_use=9,
        bytes_limit=100,
        pool_bytes=64,
        stable_bytes=32,
        host_bytes_in_use=5,
        host_peak_bytes_in_use=7,
        num_allocs=3,
        num_host_fallbacks=2,
        window_peak_bytes_in_use=4,
        host_window_peak_bytes_in_use=6,
        host_bytes_limit=1000,
        swap_reason="OOM",
    )
    assert GpuUsage.from_memory_stats(BUS, 0, stats) == GpuUsage(
        BUS, 0, 1, 4, 9, 64, 32, 5, 6, 1000, 2, "OOM"
    )


def test_nvmlreader_initialises_once_and_answers_minus_one_on_any_device_error() -> None:
    fake = FakeNvml({BUS: 42})
    reader = NvmlReader(fake)
    assert reader.available is None
    assert [reader.used_bytes(BUS), reader.used_bytes(BUS), reader.used_bytes("0000:09:00.0")] == [42, 42, -1]
    assert fake.inits == 1 and reader.available is True and fake.lookups.count(BUS) == 1  # handle cached
    reader.close()
    assert fake.shutdowns == 1
    broken = NvmlReader(NoNvml())
    assert broken.used_bytes(BUS) == -1 and broken.available is False
