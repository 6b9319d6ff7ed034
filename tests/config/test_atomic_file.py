"""Every file antcolony writes goes through one atomic writer that never follows a planted link."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import stat
from pathlib import Path

import numpy as np
import pytest

import antcolony as ac
from antcolony.config.atomic_file import write_file_atomic, write_file_atomic_async
from antcolony.config.status_file import write_status_atomic


def _names(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def test_a_write_replaces_the_file_and_leaves_only_the_target(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    write_file_atomic(target, "old")
    write_file_atomic(target, b"new", sync_dir=True)
    assert target.read_bytes() == b"new"
    assert _names(tmp_path) == ["out.json"]


def test_a_symlink_planted_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    target = tmp_path / "out.json"
    target.symlink_to(victim)
    write_file_atomic(target, "data")
    assert victim.read_text() == "precious"
    assert not target.is_symlink() and target.read_text() == "data"


def test_a_link_planted_at_the_temporary_name_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    target = tmp_path / "status.json"
    # an attacker who guessed the first random name: it must be skipped, not opened
    names = iter(["guessed00000", "fresh0000000"])
    monkeypatch.setattr(secrets, "token_hex", lambda n: next(names))
    planted = tmp_path / ".status.json.guessed00000.tmp"
    planted.symlink_to(victim)
    write_file_atomic(target, "data")
    assert victim.read_text() == "precious"
    assert target.read_text() == "data" and not target.is_symlink()
    assert planted.is_symlink()  # someone else's file: left alone
    assert _names(tmp_path) == sorted([".status.json.guessed00000.tmp", "status.json", "victim"])


def test_a_failure_names_the_target_not_the_random_temporary(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "out.json"
    with pytest.raises(FileNotFoundError) as first:
        write_file_atomic(target, "x")
    with pytest.raises(FileNotFoundError) as second:
        write_file_atomic(target, "x")
    assert str(target) in str(first.value) and ".tmp" not in str(first.value)
    assert str(first.value) == str(second.value)  # one cause, one message


def test_a_directory_at_the_target_fails_and_leaves_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "out.json").mkdir()
    with pytest.raises(IsADirectoryError, match=r"out\.json"):
        write_file_atomic(tmp_path / "out.json", "x")
    assert _names(tmp_path) == ["out.json"]


def test_the_file_gets_the_usual_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_file_atomic(tmp_path / "f", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == 0o640


async def test_a_cancelled_async_write_leaves_the_old_or_new_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "big"
    await write_file_atomic_async(target, b"0")
    task = asyncio.create_task(write_file_atomic_async(target, b"1" * 5_000_000))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert target.read_bytes() in (b"0", b"1" * 5_000_000)
    assert _names(tmp_path) == ["big"]


async def test_the_status_writer_never_writes_through_a_planted_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    names = iter(["guessed00000", "fresh0000000"])
    monkeypatch.setattr(secrets, "token_hex", lambda n: next(names))
    (tmp_path / ".status.json.guessed00000.tmp").symlink_to(victim)
    await write_status_atomic(tmp_path / "status.json", {"a": 1})
    assert victim.read_text() == "precious"
    assert json.loads((tmp_path / "status.json").read_text()) == {"a": 1}


async def test_the_step_trace_never_writes_through_a_link_planted_at_its_old_temporary_name(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    trace = tmp_path / "trace.json"
    Path(f"{trace}.tmp").symlink_to(victim)
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2], name="x")
        y = x * 2.0
    async with ac.Session(g, config=ac.SessionConfig(trace_file=str(trace))) as sess:
        await sess.run(y, {x: np.ones(2, np.float32)})
    assert victim.read_text() == "precious"
    assert not trace.is_symlink()
    assert "traceEvents" in json.loads(trace.read_text())
