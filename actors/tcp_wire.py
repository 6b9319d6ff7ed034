"""The tensor wire over direct TCP connections between task processes (asyncio, any loop).

Each task listens on one port; to send, it connects to the peer's port once and introduces
itself (``b"ACTH" | u16 length | task name``), then writes frames (tensor_wire.py) with
``loop.sock_sendall`` straight from the array's memory, one frame at a time. The receiving
side is a ``BufferedProtocol``: it asks the socket for exactly the bytes of the next field, so a
numeric payload is read straight into the preallocated array that the receive returns, and a
frame's claims are checked before that array exists. A dropped connection marks the peer down
in the mailbox (its waiting receives fail with UnavailableError naming it).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import struct
from typing import Any, cast

import numpy as np

from antcolony.errors import DataLossError, UnavailableError

from .tensor_wire import (
    DEFAULT_MAX_PAYLOAD,
    HEADER,
    FrameHeader,
    encode_frame,
    parse_header,
    parse_rest,
    strings_from_payload,
)
from .wire_mailbox import TensorWire, task_name

__all__ = ["TcpWire"]

logger = logging.getLogger(__name__)

HELLO = struct.Struct("<4sH")
HELLO_MAGIC = b"ACTH"
MAX_TASK_NAME = 1024


class _Receiver(asyncio.BufferedProtocol):
    """One incoming connection: hello, then frames, each field read into its own buffer."""

    def __init__(self, wire: TcpWire) -> None:
        self._wire = wire
        self._peer: str | None = None
        self._transport: asyncio.Transport | None = None
        self._header: FrameHeader | None = None
        self._rest_parsed: tuple[str, tuple[int, ...]] | None = None
        self._payload: Any = None
        self._stage = "hello"
        self._need(HELLO.size)

    def _need(self, n: int, into: Any = None) -> None:
        self._buf = memoryview(bytearray(n)) if into is None else into
        self._got = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio.Transport
        self._wire._receivers.add(self)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buf[self._got :]

    def buffer_updated(self, nbytes: int) -> None:
        self._got += nbytes
        self._wire.bytes_received += nbytes
        if self._got < len(self._buf):
            return
        try:
            self._field_done()
        except DataLossError as exc:
            self._fail(exc)

    def _field_done(self) -> None:
        stage = self._stage
        if stage == "hello":
            magic, n = HELLO.unpack(self._buf)
            if magic != HELLO_MAGIC or not 0 < n <= MAX_TASK_NAME:
                raise DataLossError(None, None, "a connection to the tensor wire did not introduce itself")
            self._stage = "name"
            self._need(n)
        elif stage == "name":
            try:
                self._peer = task_name(bytes(self._buf).decode())
            except Exception:
                raise DataLossError(
                    None, None, "a connection to the tensor wire sent a bad task name"
                ) from None
            self._wire.mailbox.peer_up(self._peer)
            self._next_frame()
        elif stage == "header":
            self._header = parse_header(self._buf, self._wire.max_payload)
            self._stage = "rest"
            self._need(self._header.rest)
        elif stage == "rest":
            assert self._header is not None
            self._rest_parsed = parse_rest(self._header, self._buf)
            if self._header.dtype == np.dtype(object):
                self._payload = memoryview(bytearray(self._header.payload_len))
                buf = self._payload
            else:
                self._payload = np.empty(self._rest_parsed[1], dtype=self._header.dtype)
                buf = self._payload.reshape(-1).view(np.uint8).data
            if self._header.payload_len == 0:
                self._frame_done()
            else:
                self._stage = "payload"
                self._need(0, buf)
        else:
            self._frame_done()

    def _frame_done(self) -> None:
        assert self._header is not None and self._rest_parsed is not None
        key, shape = self._rest_parsed
        value = self._payload
        if self._header.dtype == np.dtype(object):
            value = strings_from_payload(key, shape, value)
        step_id = self._header.step_id
        self._header = self._rest_parsed = self._payload = None
        self._next_frame()
        self._wire.mailbox.deliver(step_id, key, value)

    def _next_frame(self) -> None:
        self._stage = "header"
        self._need(HEADER.size)

    def _fail(self, exc: DataLossError) -> None:
        logger.error(
            "tensor wire of %s: dropping the connection from %s: %s", self._wire.task, self._peer, exc
        )
        if self._peer is not None:
            self._wire.mailbox.peer_down(self._peer, f"it sent a corrupt tensor frame ({exc.message})")
            self._peer = None  # already reported: connection_lost adds nothing
        if self._transport is not None:
            self._transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._wire._receivers.discard(self)
        # A peer that has already reconnected (its new hello may beat this notice) is not down.
        live = any(r._peer == self._peer for r in self._wire._receivers)
        if self._peer is not None and not self._wire.closing and not live:
            why = f"its connection dropped ({exc})" if exc else "it closed its connection"
            self._wire.mailbox.peer_down(self._peer, why)
            self._wire.drop_idle_sender(self._peer)


async def _resolve(loop: asyncio.AbstractEventLoop, host: str, port: int) -> tuple[int, Any]:
    """Family and socket address; a numeric address skips the resolver (a thread-pool call)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        return infos[0][0], infos[0][4]
    return (socket.AF_INET6, (host, port)) if ip.version == 6 else (socket.AF_INET, (host, port))


class _Sender:
    """One outgoing connection: a non-blocking socket written with ``loop.sock_sendall``, which
    sends from the caller's buffers as the socket drains (no copy, and the buffer is done with
    when the call returns, so the caller may reuse its array)."""

    def __init__(self, peer: str, sock: socket.socket) -> None:
        self.peer = peer
        self.sock = sock
        self._lock = asyncio.Lock()
        self.lost: BaseException | None = None

    async def write(self, buffers: list[Any]) -> None:
        async with self._lock:  # one frame at a time: frames must not interleave
            if self.lost is not None:
                raise self._unavailable()
            loop = asyncio.get_running_loop()
            try:
                for b in buffers:
                    if len(b):
                        await loop.sock_sendall(self.sock, b)
            except asyncio.CancelledError:
                # Half a frame may be on the wire: nothing after it could be parsed. Drop the
                # connection (the next send opens a new one) and let the cancellation through.
                self.close(ConnectionAbortedError("a send was cancelled mid-frame"))
                raise
            except OSError as exc:
                self.close(exc)
                raise self._unavailable() from exc

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    def _unavailable(self) -> UnavailableError:
        return UnavailableError(None, None, f"task {self.peer} is unavailable: connection lost ({self.lost})")

    def close(self, why: BaseException | None = None) -> None:
        if self.lost is None:
            self.lost = why or ConnectionAbortedError("closed")
        self.sock.close()


class TcpWire(TensorWire):
    """``await TcpWire.start("/job:ps/task:0")``; ``wire.address`` is what peers connect to."""

    def __init__(self, task: str, max_payload: int = DEFAULT_MAX_PAYLOAD) -> None:
        super().__init__(task)
        self.max_payload = max_payload
        self.closing = False
        self._server: asyncio.Server | None = None
        self._receivers: set[_Receiver] = set()
        self._peers: dict[str, tuple[str, int]] = {}
        self._senders: dict[str, _Sender] = {}
        self._connecting: dict[str, asyncio.Future[_Sender]] = {}
        self.address: tuple[str, int] = ("", 0)
        # what crossed this task's sockets (frames and hellos), for the distributed benchmark
        self.bytes_sent = 0
        self.bytes_received = 0

    @classmethod
    async def start(
        cls, task: str, host: str = "127.0.0.1", port: int = 0, max_payload: int = DEFAULT_MAX_PAYLOAD
    ) -> TcpWire:
        wire = cls(task, max_payload)
        loop = asyncio.get_running_loop()
        # One socket, on the first address the host resolves to, as a peer connecting to the
        # same host:port reaches first ('localhost' may also name ::1, and with port 0 each
        # address would get a port of its own).
        family, sockaddr = await _resolve(loop, host, port)
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(sockaddr)
            sock.setblocking(False)
            wire._server = await loop.create_server(lambda: _Receiver(wire), sock=sock)
        except BaseException:
            sock.close()
            raise
        bound = sock.getsockname()
        wire.address = (bound[0], bound[1])
        return wire

    def add_peer(self, peer: str, address: tuple[str, int] | str) -> None:
        """Where task ``peer`` listens (``(host, port)`` or ``"host:port"``)."""
        if isinstance(address, str):
            host, _, port = address.rpartition(":")
            address = (host, int(port))
        self._peers[task_name(peer)] = address

    async def _sender(self, peer: str) -> _Sender:
        sender = self._senders.get(peer)
        if sender is not None and sender.lost is None:
            return sender
        pending = self._connecting.get(peer)
        if pending is None:
            pending = self._connecting[peer] = asyncio.ensure_future(self._connect(peer))
        try:
            return await asyncio.shield(pending)
        finally:
            if pending.done():
                self._connecting.pop(peer, None)

    async def _connect(self, peer: str) -> _Sender:
        address = self._peers.get(peer)
        if address is None:
            raise UnavailableError(
                None, None, f"task {peer} is not a known peer of {self.task}; add_peer() it first"
            )
        loop = asyncio.get_running_loop()
        try:
            family, sockaddr = await _resolve(loop, *address)
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                await loop.sock_connect(sock, sockaddr)
            except BaseException:
                sock.close()
                raise
        except OSError as exc:
            raise UnavailableError(
                None, None, f"task {peer} is unavailable at {address[0]}:{address[1]}: {exc}"
            ) from exc
        sender = _Sender(peer, sock)
        name = self.task.encode()
        await sender.write([HELLO.pack(HELLO_MAGIC, len(name)) + name])
        self._senders[peer] = sender
        return sender

    def drop_idle_sender(self, peer: str) -> None:
        """``peer``'s connection to this task is gone, so its process may be: writes to the
        socket this task's sender holds could vanish without an error (a restarted peer at the
        same address never sees them), so an idle sender is dropped and the next send connects
        afresh (and fails with UnavailableError if nobody listens)."""
        sender = self._senders.get(peer)
        if sender is not None and not sender.busy:
            sender.close(ConnectionResetError(f"{peer} closed its connection to {self.task}"))
            del self._senders[peer]

    async def send(self, peer: str, key: str, step_id: int, value: np.ndarray) -> None:
        peer = task_name(peer)
        buffers = encode_frame(key, step_id, value)
        self.bytes_sent += sum(memoryview(b).nbytes for b in buffers)
        sender = await self._sender(peer)
        await sender.write(buffers)

    async def close(self) -> None:
        self.closing = True
        for sender in self._senders.values():
            sender.close()
        self._senders.clear()
        for receiver in list(self._receivers):
            if receiver._transport is not None:
                receiver._transport.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in {task_name(t) for t in self._peers}:
            self.mailbox.peer_down(task, f"the wire of {self.task} is closed")
