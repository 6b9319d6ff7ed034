"""Tests of the FileListener actor: hot reload, half-written files, bad configs, file states,
subscribers, and never blocking the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from antcolony.actors import Actor, ActorRef, Runtime, get_runtime
from antcolony.config import (
    ConfigSnapshot,
    FileListenerStats,
    GetSnapshot,
    GetStats,
    Poll,
    Subscribe,
    Unsubscribe,
    spawn_file_listener,
)
from antcolony.config import file_listener as fl

INTERVAL = 0.02
LOGGER = "antcolony.config.file_listener"


def config_text(perf: int | None = None, mem: int | None = None, **extra: Any) -> str:
    obj: dict[str, Any] = {}
    if mem is not None:
        obj["gpuConfigInfo"] = {"00:04.0": {"maxDeviceMem": mem}}
    if perf is not None:
        obj["perfControl"] = perf
    obj.update(extra)
    return json.dumps(obj, indent=2)


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


async def wait_until(predicate: Callable[[], bool], timeout: float = 3.0, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.005)


async def stats(ref: ActorRef) -> FileListenerStats:
    return await ref.ask(GetStats(), timeout=2)


async def wait_polls(ref: ActorRef, count: int) -> None:
    """Wait until the listener has made ``count`` more timer polls."""
    start = (await stats(ref)).polls
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 3
    while (await stats(ref)).polls < start + count:
        if loop.time() > deadline:
            pytest.fail(f"the listener did not poll {count} times in 3s")
        await asyncio.sleep(INTERVAL / 2)


class Collector:
    """A callback subscriber: records every snapshot delivered."""

    def __init__(self) -> None:
        self.snapshots: list[ConfigSnapshot] = []
        self.in_task: list[bool] = []

    def __call__(self, snapshot: ConfigSnapshot) -> None:
        self.in_task.append(asyncio.current_task() is not None)
        self.snapshots.append(snapshot)

    @property
    def perf(self) -> list[int | None]:
        return [s.config.perf_control for s in self.snapshots]


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    rt = get_runtime()
    yield rt
    await rt.shutdown()


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    return tmp_path / "sche2pai.json"


def listen(path: Path, collector: Collector | None = None, **options: Any) -> ActorRef:
    subscribers = (collector,) if collector is not None else ()
    return spawn_file_listener(path, INTERVAL, subscribers=subscribers, **options)


# -- publishing -----------------------------------------------------------------------------------


async def test_a_config_present_at_start_is_published_once_with_version_and_hash(
    runtime: Runtime, cfg: Path
) -> None:
    write_atomic(cfg, config_text(perf=60, mem=1 << 30))
    got = Collector()
    ref = listen(cfg, got)
    await wait_until(lambda: got.snapshots, what="the first snapshot")
    snap = got.snapshots[0]
    assert snap.version == 1 and snap.path == str(cfg)
    assert snap.config.perf_control == 60 and dict(snap.config.gpu_limits) == {"00:04.0": 1 << 30}
    assert len(snap.content_hash) == 64
    assert await ref.ask(GetSnapshot()) is snap
    await wait_polls(ref, 3)
    assert len(got.snapshots) == 1
    await ref.stop()


async def test_a_changed_config_is_published_as_a_new_version(runtime: Runtime, cfg: Path) -> None:
    write_atomic(cfg, config_text(perf=60))
    got = Collector()
    ref = listen(cfg, got)
    await wait_until(lambda: len(got.snapshots) == 1)
    write_atomic(cfg, config_text(perf=30))
    await wait_until(lambda: len(got.snapshots) == 2, what="the second snapshot")
    assert got.perf == [60, 30] and [s.version for s in got.snapshots] == [1, 2]
    s = await stats(ref)
    assert s.applied == 2 and s.rejected == 0
    await ref.stop()


async def test_the_same_content_rewritten_or_touched_is_not_republished(runtime: Runtime, cfg: Path) -> None:
    text = config_text(perf=70, mem=5)
    write_atomic(cfg, text)
    got = Collector()
    ref = listen(cfg, got)
    await wait_until(lambda: len(got.snapshots) == 1)
    reads = (await stats(ref)).reads
    write_atomic(cfg, text)  # new inode, new mtime, same bytes
    await wait_polls(ref, 3)
    cfg.write_text(text)  # in place, same bytes
    os.utime(cfg, ns=(time.time_ns(), time.time_ns() + 10**9))
    await wait_polls(ref, 3)
    s = await stats(ref)
    assert s.reads > reads, "the rewrites were noticed and read"
    assert len(got.snapshots) == 1 and s.applied == 1
    await ref.stop()


async def test_an_unchanged_file_is_only_stat_ed_not_read(runtime: Runtime, cfg: Path) -> None:
    write_atomic(cfg, config_text(perf=70))
    ref = listen(cfg)
    await ref.ask(Poll())
    before = await stats(ref)
    await wait_polls(ref, 5)
    after = await stats(ref)
    assert after.reads == before.reads and after.unchanged >= before.unchanged + 5
    await ref.stop()


async def test_a_periodic_content_check_catches_a_change_that_stat_cannot_see(
    runtime: Runtime, cfg: Path
) -> None:
    cfg.write_text(config_text(perf=10))
    got = Collector()
    ref = listen(cfg, got, content_check_interval=0.1)
    await wait_until(lambda: len(got.snapshots) == 1)
    st = cfg.stat()
    cfg.write_text(config_text(perf=20))  # same size; mtime put back as on a coarse-mtime filesystem
    os.utime(cfg, ns=(st.st_atime_ns, st.st_mtime_ns))
    await wait_until(lambda: len(got.snapshots) == 2, what="the content check")
    assert got.perf == [10, 20]
    await ref.stop()


# -- invalid content ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [150, -1])
async def test_perf_control_out_of_range_is_rejected_and_the_last_good_config_kept(
    runtime: Runtime, cfg: Path, caplog: pytest.LogCaptureFixture, bad: int
) -> None:
    write_atomic(cfg, config_text(perf=40, mem=1 << 20))
    got = Collector()
    ref = listen(cfg, got)
    await wait_until(lambda: len(got.snapshots) == 1)
    caplog.set_level(logging.INFO, LOGGER)
    write_atomic(cfg, config_text(perf=bad, mem=1 << 10))
    await wait_until(lambda: any(r.levelno == logging.ERROR for r in caplog.records), what="the error log")
    await wait_polls(ref, 5)
    snap = await ref.ask(GetSnapshot())
    assert (
        snap.version == 1 and snap.config.perf_control == 40 and snap.config.gpu_limits["00:04.0"] == 1 << 20
    )
    assert got.perf == [40]
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, "one log per bad content version, not one per poll"
    assert str(cfg) in errors[0] and f"perfControl is {bad}" in errors[0] and "0 to 100" in errors[0]
    assert "keeping the config in force (v1" in errors[0]
    assert (await stats(ref)).rejected == 1
    write_atomic(cfg, config_text(perf=90))
    await wait_until(lambda: len(got.snapshots) == 2, what="recovery after a good config")
    assert got.perf == [40, 90]
    await ref.stop()


async def test_each_new_bad_version_is_logged_once_with_line_and_column(
    runtime: Runtime, cfg: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, LOGGER)
    ref = listen(cfg)
    write_atomic(cfg, '{\n  "perfControl": 50,\n  "gpuConfigInfo" {}\n}')
    await wait_until(lambda: len(caplog.records) == 1)
    write_atomic(cfg, config_text(mem=-5))
    await wait_until(lambda: len(caplog.records) == 2)
    await wait_polls(ref, 4)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert f"{cfg}:3:19: invalid JSON" in messages[0]
    assert 'gpuConfigInfo["00:04.0"].maxDeviceMem is -5' in messages[1]
    assert "no config applied yet" in messages[1]
    assert await ref.ask(GetSnapshot()) is None
    await ref.stop()


async def test_content_back_to_the_config_in_force_is_not_republished(runtime: Runtime, cfg: Path) -> None:
    good = config_text(perf=55)
    write_atomic(cfg, good)
    got = Collector()
    ref = listen(cfg, got)
    await wait_until(lambda: len(got.snapshots) == 1)
    write_atomic(cfg, config_text(perf=555))
    await wait_polls(ref, 3)
    write_atomic(cfg, good)
    await wait_polls(ref, 3)
    s = await stats(ref)
    assert got.perf == [55] and s.rejected == 1 and s.applied == 1
    await ref.stop()


# -- half-written files ---------------------------------------------------------------------------


async def test_a_half_written_file_is_never_applied_only_the_completed_one(
    runtime: Runtime, cfg: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_atomic(cfg, config_text(perf=80))
    got = Collector()
    ref = listen(cfg, got)
    await wait_until(lambda: len(got.snapshots) == 1)
    full = config_text(perf=20, mem=3 << 20, name="job-a")
    with open(cfg, "w") as f:
        f.write(full[: len(full) // 2])
        f.flush()
        await wait_polls(ref, 4)  # the half file is seen, stable, and deferred as incomplete
        assert got.perf == [80]
        s = await stats(ref)
        assert s.incomplete >= 1 and s.applied == 1 and s.rejected == 0
        f.write(full[len(full) // 2 :])
    await wait_until(lambda: len(got.snapshots) == 2, what="the completed file")
    assert got.perf == [80, 20] and got.snapshots[1].config.name == "job-a"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "a short pause is not an error"
    await ref.stop()


async def test_a_file_written_in_small_pieces_only_ever_publishes_complete_configs(
    runtime: Runtime, cfg: Path
) -> None:
    write_atomic(cfg, config_text(perf=80))
    got = Collector()
    ref = listen(cfg, got)
    await wait_until(lambda: len(got.snapshots) == 1)
    final = config_text(perf=25, mem=7 << 20)
    with open(cfg, "w") as f:
        for start in range(0, len(final), 7):
            f.write(final[start : start + 7])
            f.flush()
            await asyncio.sleep(INTERVAL / 3)
    await wait_until(lambda: len(got.snapshots) == 2)
    await wait_polls(ref, 3)
    assert got.perf == [80, 25]
    assert got.snapshots[1].config.gpu_limits["00:04.0"] == 7 << 20
    await ref.stop()


async def test_content_that_changes_between_the_two_reads_is_not_parsed(
    runtime: Runtime, cfg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = fl._read_file
    versions = iter([config_text(perf=11), config_text(perf=12), config_text(perf=13)])

    def changing(path: str, max_bytes: int) -> Any:
        with contextlib.suppress(StopIteration):
            cfg.write_text(next(versions))  # a writer races every read
        return real(path, max_bytes)

    monkeypatch.setattr(fl, "_read_file", changing)
    got = Collector()
    cfg.write_text(config_text(perf=10))
    ref = listen(cfg, got)
    await wait_until(lambda: len(got.snapshots) == 1)
    assert got.perf == [13] and (await stats(ref)).unstable >= 1
    await ref.stop()


async def test_a_truncated_file_that_stays_truncated_is_reported_but_never_applied(
    runtime: Runtime, cfg: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, LOGGER)
    write_atomic(cfg, config_text(perf=80))
    got = Collector()
    ref = listen(cfg, got, incomplete_grace=0.1)
    await wait_until(lambda: len(got.snapshots) == 1)
    cfg.write_text('{"perfControl": 3')
    await wait_until(lambda: len(caplog.records) == 1, what="the incomplete file to be reported")
    assert "ends before the JSON is complete" in caplog.records[0].getMessage()
    await wait_polls(ref, 3)
    assert got.perf == [80] and len(caplog.records) == 1
    await ref.stop()


# -- file states ----------------------------------------------------------------------------------


async def test_a_file_missing_at_start_is_loaded_when_it_appears(
    runtime: Runtime, cfg: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    got = Collector()
    ref = listen(cfg, got)
    await wait_polls(ref, 3)
    assert await ref.ask(GetSnapshot()) is None and (await stats(ref)).missing >= 3
    assert sum("does not exist" in r.getMessage() for r in caplog.records) == 1
    write_atomic(cfg, config_text(perf=45))
    await wait_until(lambda: got.perf == [45])
    await ref.stop()


async def test_a_deleted_file_keeps_the_last_good_config_and_a_recreated_one_is_loaded(
    runtime: Runtime, cfg: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_atomic(cfg, config_text(perf=45))
    got = Collector()
    ref = listen(cfg, got)
    await wait_until(lambda: got.perf == [45])
    caplog.set_level(logging.WARNING, LOGGER)
    cfg.unlink()
    await wait_polls(ref, 3)
    assert (await ref.ask(GetSnapshot())).config.perf_control == 45
    assert sum("is gone" in r.getMessage() for r in caplog.records) == 1
    write_atomic(cfg, config_text(perf=46))
    await wait_until(lambda: got.perf == [45, 46])
    assert ref.is_alive
    await ref.stop()


async def test_files_renamed_over_the_config_are_each_picked_up(runtime: Runtime, cfg: Path) -> None:
    got = Collector()
    ref = listen(cfg, got)
    for perf in (10, 20, 30, 40):
        write_atomic(cfg, config_text(perf=perf))
        await wait_until(lambda perf=perf: got.perf[-1:] == [perf], what=f"perfControl {perf}")
    assert got.perf == [10, 20, 30, 40]
    await ref.stop()


def _chmod_blocks_reading(path: Path) -> bool:
    path.write_text("{}")
    path.chmod(0)
    try:
        with open(path, "rb"):
            return False  # root (or CAP_DAC_OVERRIDE) reads it anyway
    except PermissionError:
        return True
    finally:
        path.chmod(0o644)
        path.unlink()


async def test_an_unreadable_file_is_survived_and_read_once_permission_returns(
    runtime: Runtime, cfg: Path, caplog: pytest.LogCaptureFixture
) -> None:
    if not _chmod_blocks_reading(cfg.with_name("probe")):
        pytest.skip("chmod 000 does not stop this user from reading (running as root)")
    write_atomic(cfg, config_text(perf=45))
    got = Collector()
    ref = listen(cfg, got)
    await wait_until(lambda: got.perf == [45])
    caplog.set_level(logging.WARNING, LOGGER)
    cfg.write_text(config_text(perf=46))
    cfg.chmod(0)
    try:
        await wait_polls(ref, 3)
        assert got.perf == [45] and (await stats(ref)).read_errors >= 1
        assert sum("cannot be read" in r.getMessage() for r in caplog.records) == 1
    finally:
        cfg.chmod(0o644)  # no mtime change: the listener must still look again
    await wait_until(lambda: got.perf == [45, 46])
    await ref.stop()


async def test_read_errors_from_the_filesystem_are_survived(
    runtime: Runtime, cfg: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The same as the chmod test, but runs as root too: reads fail with EACCES, then recover."""
    write_atomic(cfg, config_text(perf=45))
    got = Collector()
    ref = listen(cfg, got)
    await wait_until(lambda: got.perf == [45])
    caplog.set_level(logging.INFO, LOGGER)
    real = fl._read_file

    def denied(path: str, max_bytes: int) -> Any:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(fl, "_read_file", denied)
    write_atomic(cfg, config_text(perf=46))
    await wait_polls(ref, 3)
    assert got.perf == [45] and ref.is_alive
    assert sum("cannot be read (Permission denied)" in r.getMessage() for r in caplog.records) == 1
    monkeypatch.setattr(fl, "_read_file", real)
    await wait_until(lambda: got.perf == [45, 46])
    assert any("readable now" in r.getMessage() for r in caplog.records)
    await ref.stop()


async def test_a_directory_or_an_oversized_file_at_the_path_is_reported_not_raised(
    runtime: Runtime, cfg: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, LOGGER)
    cfg.mkdir()
    got = Collector()
    ref = listen(cfg, got, max_bytes=1000)
    await wait_polls(ref, 3)
    assert sum("not a regular file" in r.getMessage() for r in caplog.records) == 1
    cfg.rmdir()
    cfg.write_text(config_text(perf=5, name="x" * 2000))
    await wait_polls(ref, 3)
    assert sum("larger than 1000 bytes" in r.getMessage() for r in caplog.records) == 1
    write_atomic(cfg, config_text(perf=6))
    await wait_until(lambda: got.perf == [6])
    await ref.stop()


# -- subscribers and the event loop ---------------------------------------------------------------


async def test_callbacks_run_outside_the_listener_turn_and_polls_never_block_the_loop(
    runtime: Runtime, cfg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every stat and read of the file waits, on its thread, until a coroutine on the loop has
    run while it was in progress: had a poll blocked the loop, that coroutine could not run and
    the wait would time out (a hung network filesystem, and the loop must not care)."""
    real_stat, real_read = fl._stat_file, fl._read_file
    loop_thread = threading.get_ident()
    in_progress, loop_ran = threading.Event(), threading.Event()
    waits: list[bool] = []

    def hung(call: Callable[..., Any], *args: Any) -> Any:
        assert threading.get_ident() != loop_thread, "file I/O on the event loop's thread"
        in_progress.set()
        waits.append(loop_ran.wait(5))
        loop_ran.clear()
        return call(*args)

    monkeypatch.setattr(fl, "_stat_file", lambda path: hung(real_stat, path))
    monkeypatch.setattr(fl, "_read_file", lambda path, max_bytes: hung(real_read, path, max_bytes))

    async def loop_side() -> None:
        while True:
            await wait_until(in_progress.is_set, timeout=60, what="a stat or read in progress")
            in_progress.clear()
            loop_ran.set()

    write_atomic(cfg, config_text(perf=33))
    got = Collector()
    helper = asyncio.create_task(loop_side())
    try:
        ref = listen(cfg, got)
        await wait_until(lambda: got.perf == [33])
        write_atomic(cfg, config_text(perf=34))
        await wait_until(lambda: got.perf == [33, 34])
    finally:
        helper.cancel()
    assert (await stats(ref)).reads >= 2
    assert waits and all(waits), (
        f"the loop was blocked during {waits.count(False)} of {len(waits)} file calls"
    )
    assert got.in_task == [False, False], "callbacks are loop callbacks, not run inside the listener's turn"
    await ref.stop()


async def test_a_raising_callback_is_logged_and_does_not_stop_deliveries(
    runtime: Runtime, cfg: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(snapshot: ConfigSnapshot) -> None:
        raise RuntimeError("subscriber bug")

    got = Collector()
    write_atomic(cfg, config_text(perf=1))
    ref = spawn_file_listener(cfg, INTERVAL, subscribers=(broken, got))
    await wait_until(lambda: got.perf == [1])
    write_atomic(cfg, config_text(perf=2))
    await wait_until(lambda: got.perf == [1, 2])
    s = await stats(ref)
    assert s.callback_errors == 2 and s.deliveries == 4 and ref.is_alive
    assert (
        sum(
            "subscriber bug" in (r.exc_text or "") or "raised" in r.getMessage()
            for r in caplog.records
            if r.levelno == logging.ERROR
        )
        == 2
    )
    await ref.stop()


async def test_async_callbacks_run_as_tasks_and_their_errors_are_counted(runtime: Runtime, cfg: Path) -> None:
    seen: list[int | None] = []

    async def slow_subscriber(snapshot: ConfigSnapshot) -> None:
        await asyncio.sleep(0.01)
        seen.append(snapshot.config.perf_control)
        if snapshot.config.perf_control == 1:
            raise ValueError("async subscriber bug")

    write_atomic(cfg, config_text(perf=1))
    ref = spawn_file_listener(cfg, INTERVAL, subscribers=(slow_subscriber,))
    await wait_until(lambda: seen == [1])
    write_atomic(cfg, config_text(perf=2))
    await wait_until(lambda: seen == [1, 2])
    assert (await stats(ref)).callback_errors == 1
    await ref.stop()


class ConfigInbox(Actor):
    def __init__(self) -> None:
        self.inbox: list[ConfigSnapshot] = []

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, ConfigSnapshot):
            self.inbox.append(message)
            return None
        if message == "get":
            return [s.config.perf_control for s in self.inbox]
        return super().on_receive(message)


async def test_actor_subscribers_get_snapshots_as_messages_and_late_ones_get_the_current_one(
    runtime: Runtime, cfg: Path
) -> None:
    write_atomic(cfg, config_text(perf=12))
    ref = listen(cfg)
    assert (await ref.ask(Poll())).config.perf_control == 12
    early = runtime.spawn(ConfigInbox)
    reply = await ref.ask(Subscribe(early))
    assert reply.config.perf_control == 12
    write_atomic(cfg, config_text(perf=13))
    await ref.ask(Poll())
    assert await early.ask("get") == [12, 13]
    late = runtime.spawn(ConfigInbox)
    ref.tell(Subscribe(late))
    ref.tell(Subscribe(late))  # subscribing twice delivers once
    quiet = runtime.spawn(ConfigInbox)
    ref.tell(Subscribe(quiet, replay=False))
    await ref.ask(GetSnapshot())
    assert await late.ask("get") == [13] and await quiet.ask("get") == []
    ref.tell(Unsubscribe(early))
    await early.stop()
    write_atomic(cfg, config_text(perf=14))
    await ref.ask(Poll())
    assert await late.ask("get") == [13, 14] and await quiet.ask("get") == [14]
    assert runtime.dead_letter_count == 0
    await ref.stop()


async def test_a_stopped_actor_subscriber_is_dropped(runtime: Runtime, cfg: Path) -> None:
    write_atomic(cfg, config_text(perf=12))
    ref = listen(cfg)
    inbox = runtime.spawn(ConfigInbox)
    await ref.ask(Subscribe(inbox))
    await inbox.stop()
    write_atomic(cfg, config_text(perf=13))
    await ref.ask(Poll())
    assert runtime.dead_letter_count == 0
    await ref.stop()


async def test_stop_ends_the_timer_task_and_polling(runtime: Runtime, cfg: Path) -> None:
    write_atomic(cfg, config_text(perf=12))
    tasks_before = runtime.stats().tasks_pending
    ref = listen(cfg)
    await ref.ask(Poll())
    assert runtime.stats().tasks_pending >= tasks_before + 1
    await asyncio.wait_for(ref.stop(), 2)
    await wait_until(lambda: runtime.stats().tasks_pending == tasks_before, what="the timer task to end")
    assert not ref.is_alive


async def test_runtime_shutdown_stops_a_listener_mid_poll(cfg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rt = get_runtime()
    real = fl._read_file

    reading = threading.Event()

    def slow_read(path: str, max_bytes: int) -> Any:
        reading.set()
        time.sleep(0.05)
        return real(path, max_bytes)

    monkeypatch.setattr(fl, "_read_file", slow_read)
    write_atomic(cfg, config_text(perf=12))
    ref = listen(cfg)
    await wait_until(reading.is_set, what="a read in progress")
    await asyncio.wait_for(rt.shutdown(), 3)
    assert not ref.is_alive and rt.stats().tasks_pending == 0


async def test_a_bad_poll_interval_is_refused_at_spawn(runtime: Runtime, cfg: Path) -> None:
    from antcolony.errors import ActorStartError, ConfigError

    with pytest.raises((ConfigError, ActorStartError)):
        spawn_file_listener(cfg, 0)
