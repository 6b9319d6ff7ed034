"""The tensor wire over TCP (cluster/tcp_wire.py), on loopback: tensors of every dtype and 64 MiB
arrive whole; a peer process that is killed fails the receives waiting on it, and sends to it,
with UnavailableError naming the task; a peer sending corrupt frames is cut off."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from antcolony.actors.tcp_wire import HELLO, HELLO_MAGIC, TcpWire
from antcolony.actors.tensor_wire import HEADER, encode_frame, rendezvous_key
from antcolony.errors import UnavailableError

from .test_tensor_wire import VALUES

PS, WORKER = "/job:ps/task:0", "/job:worker/task:1"


def _key(src: str, dst: str, name: str) -> str:
    return rendezvous_key(f"{src}/device:CPU:0", 1, f"{dst}/device:CPU:0", name)


async def _pair() -> tuple[TcpWire, TcpWire]:
    ps = await TcpWire.start(PS)
    worker = await TcpWire.start(WORKER)
    worker.add_peer(PS, ps.address)
    ps.add_peer(WORKER, f"{worker.address[0]}:{worker.address[1]}")
    return ps, worker


async def test_every_dtype_arrives_whole_in_either_order() -> None:
    await _every_dtype()


def test_every_dtype_under_uvloop() -> None:
    uvloop = pytest.importorskip("uvloop")
    uvloop.run(_every_dtype())


async def _every_dtype() -> None:
    ps, worker = await _pair()
    try:
        for step, name in enumerate(sorted(VALUES)):
            value = np.asarray(VALUES[name])
            key = _key(WORKER, PS, f"{name}:0")
            if step % 2:  # the receive first, then the send; else the other way round
                waiting = asyncio.ensure_future(ps.recv(key, step))
                await asyncio.sleep(0)
                await worker.send(PS, key, step, value)
                got = await waiting
            else:
                await worker.send(PS, key, step, value)
                got = await ps.recv(key, step)
            assert got.shape == value.shape, name
            np.testing.assert_array_equal(got, value)
        assert ps.mailbox.pending() == 0
    finally:
        await worker.close()
        await ps.close()


async def test_64_mib_and_many_small_tensors_interleaved() -> None:
    ps, worker = await _pair()
    try:
        big = np.random.default_rng(1).standard_normal(8 << 20)  # 64 MiB of float64
        small = [np.full((3,), i, dtype=np.int32) for i in range(50)]
        key_big, key_small = _key(WORKER, PS, "big:0"), _key(WORKER, PS, "small:0")
        sends = [worker.send(PS, key_big, 0, big)] + [
            worker.send(PS, key_small, i + 1, s) for i, s in enumerate(small)
        ]
        await asyncio.gather(*sends)
        got = await ps.recv(key_big, 0)
        np.testing.assert_array_equal(got, big)
        assert got.flags.writeable and got.flags.c_contiguous
        for i, s in enumerate(small):
            np.testing.assert_array_equal(await ps.recv(key_small, i + 1), s)
    finally:
        await worker.close()
        await ps.close()


async def _start_peer(ps: TcpWire) -> tuple[subprocess.Popen[str], int]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("wire_peer.py")),
            WORKER,
            PS,
            f"127.0.0.1:{ps.address[1]}",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
    return proc, int(line)


async def test_killed_peer_fails_waiting_and_later_receives_and_sends() -> None:
    ps = await TcpWire.start(PS)
    proc, port = await _start_peer(ps)
    try:
        ps.add_peer(WORKER, ("127.0.0.1", port))
        from_peer = rendezvous_key(f"{WORKER}/device:CPU:0", 7, f"{PS}/device:CPU:0", "hello:0")
        np.testing.assert_array_equal(
            await asyncio.wait_for(ps.recv(from_peer, 1), 60), np.arange(10, dtype=np.float32)
        )
        # A round trip through the peer process, then a receive it will never answer.
        to_peer = _key(PS, WORKER, "echo:0")
        await ps.send(WORKER, to_peer, 100, np.eye(3))
        np.testing.assert_array_equal(await asyncio.wait_for(ps.recv(from_peer, 1100), 60), np.eye(3))
        waiting = asyncio.ensure_future(ps.recv(from_peer, 1101))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        proc.send_signal(signal.SIGKILL)
        with pytest.raises(UnavailableError, match=f"task {WORKER} is unavailable"):
            await asyncio.wait_for(waiting, 30)
        with pytest.raises(UnavailableError, match=WORKER):
            await asyncio.wait_for(ps.recv(from_peer, 1102), 5)
        with pytest.raises(UnavailableError, match=WORKER):
            for step in range(200, 400):  # the first writes may still land in the socket buffer
                await asyncio.wait_for(ps.send(WORKER, to_peer, step, np.ones(1 << 16)), 30)
    finally:
        proc.kill()
        proc.wait()
        await ps.close()


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.mark.parametrize(
    "corrupt",
    ["huge_claim", "bad_dtype", "no_hello"],
)
async def test_peer_sending_corrupt_frames_is_cut_off(corrupt: str) -> None:
    ps = await TcpWire.start(PS, max_payload=1 << 20)
    key = _key(WORKER, PS, "x:0")
    waiting = asyncio.ensure_future(ps.recv(key, 5))
    head, payload = encode_frame(key, 5, np.ones(4, dtype=np.float32))
    frame = bytearray(bytes(head) + bytes(payload))
    if corrupt == "huge_claim":
        struct.pack_into("<Q", frame, HEADER.size - 8, 1 << 40)
    elif corrupt == "bad_dtype":
        struct.pack_into("<I", frame, 8, 99)
    name = WORKER.encode()
    hello = b"" if corrupt == "no_hello" else HELLO.pack(HELLO_MAGIC, len(name)) + name
    sock = socket.create_connection(ps.address)
    try:
        await asyncio.to_thread(sock.sendall, hello + bytes(frame))
        if corrupt == "no_hello":
            # An unknown sender cannot be blamed by name: its connection is dropped, nothing waits on it.
            assert await asyncio.wait_for(asyncio.to_thread(_closed, sock), 10)
            assert not waiting.done()
            waiting.cancel()
        else:
            with pytest.raises(
                UnavailableError, match=f"task {WORKER} is unavailable: it sent a corrupt tensor frame"
            ):
                await asyncio.wait_for(waiting, 10)
    finally:
        sock.close()
        await ps.close()


async def _reuse_after_send() -> None:
    ps, worker = await _pair()
    try:
        key = _key(WORKER, PS, "reused:0")
        buf = np.arange(4 << 20, dtype=np.float32)  # 16 MiB: more than a socket takes at once
        want = buf.copy()
        receive = asyncio.ensure_future(ps.recv(key, 0))
        await worker.send(PS, key, 0, buf)
        buf[:] = -1  # the sender's array is free to change once send returns
        np.testing.assert_array_equal(await receive, want)
    finally:
        await worker.close()
        await ps.close()


async def test_array_may_be_reused_once_send_returns() -> None:
    await _reuse_after_send()


def test_array_may_be_reused_once_send_returns_under_uvloop() -> None:
    uvloop = pytest.importorskip("uvloop")
    uvloop.run(_reuse_after_send())


async def test_a_send_cancelled_mid_frame_leaves_later_sends_whole() -> None:
    ps, worker = await _pair()
    try:
        key = _key(WORKER, PS, "c:0")
        cut = asyncio.ensure_future(worker.send(PS, key, 0, np.zeros(16 << 20)))  # 128 MiB
        await asyncio.sleep(0.01)
        cut.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cut
        # The next send reconnects and arrives whole. Until the receiver has seen the old
        # connection drop, that drop may still fail a receive waiting on the peer: retry then.
        for step in range(1, 50):
            try:
                await worker.send(PS, key, step, np.full(5, step))
                got = await asyncio.wait_for(ps.recv(key, step), 30)
                break
            except UnavailableError:
                await asyncio.sleep(0.05)
        np.testing.assert_array_equal(got, np.full(5, step))
    finally:
        await worker.close()
        await ps.close()
