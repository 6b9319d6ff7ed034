"""Tests of the status file: schema builder, validation, atomic writes (no torn reads), reading."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from antcolony.config import (
    GPU_USAGE_FIELDS,
    build_status,
    load_status,
    parse_status,
    read_status,
    status_file_from_env,
    write_status_atomic,
)
from antcolony.errors import ConfigError
from tests.waiting import until


def usage(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "deviceMemUsedMax": 3 << 20,
        "deviceMemUsedMin": 1 << 20,
        "deviceMemPoolSize": 4 << 20,
        "deviceMemStable": 2 << 20,
        "hostMemUsedMax": 0,
        "hostMemUsedMin": 0,
        "hostMemPoolSize": 64 << 30,
        "swapReason": "",
        "deviceMemUsedNvidia": -1,
    }
    fields.update(overrides)
    return fields


def test_build_status_produces_exactly_antmans_schema() -> None:
    status = build_status({"0000:00:04.0": usage()}, 12345.6, {7: 12000, "graph_9": 15000.4})
    assert list(status) == ["gpuUsageInfo", "miniBatchDuration", "Durations"]
    assert list(status["gpuUsageInfo"]) == ["00:04.0"]
    assert list(status["gpuUsageInfo"]["00:04.0"]) == list(GPU_USAGE_FIELDS)
    assert status["miniBatchDuration"] == 12346
    assert status["Durations"] == {"graph_7": 12000, "graph_9": 15000}
    assert json.loads(json.dumps(status)) == status


def test_build_status_accepts_numpy_integers_and_writes_plain_ints() -> None:
    status = build_status({"00:04.0": usage(deviceMemUsedMax=np.int64(7))}, np.float64(5.0), {})
    value = status["gpuUsageInfo"]["00:04.0"]["deviceMemUsedMax"]
    assert value == 7 and type(value) is int
    json.dumps(status)


@pytest.mark.parametrize("field", GPU_USAGE_FIELDS)
def test_a_missing_gpu_field_is_an_error_naming_it(field: str) -> None:
    fields = usage()
    del fields[field]
    with pytest.raises(ConfigError, match=field):
        build_status({"00:04.0": fields}, 1, {})


@pytest.mark.parametrize(
    "overrides, words",
    [
        ({"extra": 1}, "unknown fields extra"),
        ({"deviceMemUsedMax": -1}, "deviceMemUsedMax is -1"),
        ({"deviceMemUsedMax": 1.5}, "deviceMemUsedMax"),
        ({"hostMemPoolSize": True}, "boolean"),
        ({"deviceMemUsedNvidia": -2}, "deviceMemUsedNvidia is -2"),
        ({"swapReason": "SWAP"}, "swapReason"),
    ],
)
def test_bad_gpu_fields_are_rejected(overrides: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        build_status({"00:04.0": usage(**overrides)}, 1, {})


def test_bad_bus_ids_and_durations_are_rejected() -> None:
    with pytest.raises(ConfigError, match="names no GPU"):
        build_status({"gpu zero": usage()}, 1, {})
    with pytest.raises(ConfigError, match="twice"):
        build_status({"00:04.0": usage(), "0000:00:04.0": usage()}, 1, {})
    with pytest.raises(ConfigError, match="miniBatchDuration"):
        build_status({}, float("nan"), {})
    with pytest.raises(ConfigError, match="graph_1"):
        build_status({}, 1, {1: -5})


@pytest.mark.parametrize("reason", ["", "OOM", "FRAGMENT"])
def test_every_documented_swap_reason_is_accepted(reason: str) -> None:
    assert (
        build_status({"00:04.0": usage(swapReason=reason)}, 1, {})["gpuUsageInfo"]["00:04.0"]["swapReason"]
        == reason
    )


async def test_an_atomic_write_reads_back_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "pai2sche.json"
    status = build_status({"00:04.0": usage()}, 100, {1: 100})
    await write_status_atomic(path, status)
    assert await read_status(path) == status
    assert load_status(path) == status
    await write_status_atomic(path, build_status({}, 5, {}), sync_dir=True)
    assert (await read_status(path))["miniBatchDuration"] == 5
    assert sorted(os.listdir(tmp_path)) == ["pai2sche.json"]


async def test_a_status_file_is_readable_by_other_users(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    old = os.umask(0o022)
    try:
        await write_status_atomic(path, build_status({}, 1, {}))
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


async def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    await write_status_atomic(path, {"a": 1})
    with pytest.raises(ValueError):
        await write_status_atomic(path, {"a": float("nan")})
    with pytest.raises(TypeError):
        await write_status_atomic(path, {"a": object()})
    with pytest.raises(FileNotFoundError):
        await write_status_atomic(tmp_path / "no-dir" / "status.json", {"a": 1})
    assert json.loads(path.read_text()) == {"a": 1}
    assert os.listdir(tmp_path) == ["status.json"]


async def test_a_cancelled_write_leaves_the_old_or_new_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    await write_status_atomic(path, {"v": 0})
    big = {"v": 1, "pad": "x" * 2_000_000}
    for delay in (0, 0.0005, 0.001, 0.002, 0.005):
        task = asyncio.create_task(write_status_atomic(path, big))
        await asyncio.sleep(delay)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        # a write already handed to a thread finishes (or cleans up) there: wait for it
        await until(lambda: os.listdir(tmp_path) == ["status.json"], "the temporary file gone")
        assert json.loads(path.read_text())["v"] in (0, 1)


def _large_status(i: int) -> dict[str, Any]:
    """A status of a varying, large size (many graphs), so a torn read would be likely."""
    gpus = {f"00:{g:02x}.0": usage(deviceMemUsedMax=i * 1000 + g) for g in range(8)}
    return build_status(gpus, i, {n: i * 10 + n for n in range(1000 + 400 * (i % 7))})


class _Reader(threading.Thread):
    """Reads and json-parses the file in a loop until stopped; counts reads and failures."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.stop = threading.Event()
        self.reads = 0
        self.torn: list[str] = []

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                text = self.path.read_text()
            except FileNotFoundError:
                continue
            try:
                json.loads(text)
            except ValueError as exc:
                self.torn.append(f"{len(text)} chars: {exc}")
            self.reads += 1


@pytest.mark.slow
async def test_a_concurrent_reader_never_sees_a_torn_status_file(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    await write_status_atomic(path, _large_status(0))
    thread = _Reader(path)
    thread.start()
    async_reads = 0
    async_errors: list[str] = []

    async def async_reader() -> None:
        nonlocal async_reads
        while True:
            try:
                await read_status(path)  # aiofiles read + json parse + schema validation
            except ConfigError as exc:
                async_errors.append(str(exc))
            async_reads += 1
            await asyncio.sleep(0)

    reader_task = asyncio.create_task(async_reader())
    try:
        for i in range(1, 26):
            await write_status_atomic(path, _large_status(i), indent=None if i % 2 else 2)
    finally:
        reader_task.cancel()
        await asyncio.gather(reader_task, return_exceptions=True)
        thread.stop.set()
        await asyncio.to_thread(thread.join, 5)
    assert thread.reads > 20 and async_reads > 5
    assert thread.torn == [] and async_errors == []
    assert (await read_status(path))["miniBatchDuration"] == 25


async def test_the_torn_read_check_does_catch_an_in_place_writer(tmp_path: Path) -> None:
    """Control for the test above: AntMan's truncate-and-rewrite is caught by the same reader."""
    path = tmp_path / "status.json"
    path.write_text(json.dumps(_large_status(0)))
    thread = _Reader(path)
    thread.start()
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        i = 0
        while not thread.torn and loop.time() < deadline:
            i += 1
            data = json.dumps(_large_status(i))
            with open(path, "w") as f:
                for start in range(0, len(data), 16384):
                    f.write(data[start : start + 16384])
                    f.flush()
            await asyncio.sleep(0)
    finally:
        thread.stop.set()
        await asyncio.to_thread(thread.join, 5)
    assert thread.torn, "an in-place writer was never caught mid-write"


def test_parse_status_names_the_file_and_the_problem() -> None:
    with pytest.raises(ConfigError, match=r"^s\.json:1:2: invalid JSON"):
        parse_status("{x", "s.json")
    with pytest.raises(ConfigError, match=r"^s\.json: Durations is missing"):
        parse_status('{"gpuUsageInfo": {}, "miniBatchDuration": 1}', "s.json")
    with pytest.raises(ConfigError, match=r"swapReason"):
        parse_status(
            json.dumps(
                {"gpuUsageInfo": {"00:04.0": usage(swapReason=3)}, "miniBatchDuration": 1, "Durations": {}}
            ),
            "s.json",
        )


def test_an_explicit_status_path_wins_over_gpu_status_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_STATUS_FILE", "/tmp/antman/pod_pai2sche.json")
    assert status_file_from_env("/mine.json") == "/mine.json"
    assert status_file_from_env(None) == "/tmp/antman/pod_pai2sche.json"
    monkeypatch.delenv("GPU_STATUS_FILE")
    assert status_file_from_env(None) is None
