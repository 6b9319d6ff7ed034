"""Backend selection and the CUDA backend's code paths, exercised without a GPU.

The CUDA backend is run against a stand-in ``cupy`` module: the CUDA calls it makes
(device count and properties, PCI bus ids, streams, events waited for on another thread) are
faked, array math falls through to numpy. What this cannot show (real kernels, real
device memory, driver-thread behaviour after a device error) is listed in the closing note.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import types
from typing import Any

import numpy as np
import pytest

import antcolony as ac
from antcolony.devices.backends import select_backend


class FakeCudaError(RuntimeError):
    def __init__(self, status: int) -> None:
        super().__init__(f"cudaError {status}")
        self.status = status


def fake_cupy(
    devices: int = 2,
    fail_status: int | None = None,
    sync_status: int | None = None,
    memory: int = 8 << 30,
) -> types.ModuleType:
    calls: dict[str, list[Any]] = {
        "event_syncs": [],
        "devices_entered": [],
        "allocators": [],
        "cuda_malloc": [],
    }

    class Runtime:
        hostAllocPortable = 1
        hostAllocMapped = 2

        @staticmethod
        def getDeviceCount() -> int:
            if fail_status is not None:
                raise FakeCudaError(fail_status)
            return devices

        @staticmethod
        def getDeviceProperties(i: int) -> dict[str, Any]:
            return {"name": b"Fake GPU", "totalGlobalMem": memory}

    class Device:
        def __init__(self, i: int) -> None:
            self.i = i

        @property
        def pci_bus_id(self) -> str:
            return f"0000:{0x3B + self.i:02X}:00.0"

        def __enter__(self) -> Device:
            calls["devices_entered"].append(self.i)
            return self

        def __exit__(self, *exc: Any) -> None:
            return None

    class Stream:
        def __init__(self, non_blocking: bool = False) -> None:
            self.non_blocking = non_blocking

        def __enter__(self) -> Stream:
            return self

        def __exit__(self, *exc: Any) -> None:
            return None

        def launch_host_func(self, callback: Any, arg: Any) -> None:
            raise AssertionError("host functions can deadlock against the GIL; use events")

    class Event:
        def __init__(self, block: bool = False, disable_timing: bool = False) -> None:
            self.block, self.recorded = block, 0

        def record(self, stream: Any = None) -> None:
            self.recorded += 1

        def synchronize(self) -> None:
            assert self.recorded, "synchronize on an event never recorded"
            calls["event_syncs"].append((threading.current_thread().name, self.block))
            if sync_status is not None:  # a device error surfaces at the next synchronize
                raise FakeCudaError(sync_status)

    class Memory:  # cudaMalloc: a unique fake device address per block
        next_ptr = 1 << 32

        def __init__(self, size: int) -> None:
            self.ptr = Memory.next_ptr
            Memory.next_ptr += (size + (1 << 20)) & ~0xFFF
            calls["cuda_malloc"].append(size)

    class UnownedMemory:
        def __init__(self, ptr: int, size: int, owner: Any, device_id: int) -> None:
            self.ptr, self.size, self.owner, self.device_id = ptr, size, owner, device_id

    class MemoryPointer:
        def __init__(self, mem: Any, offset: int) -> None:
            self.mem, self.ptr = mem, mem.ptr + offset

    class PinnedMemory:
        def __init__(self, size: int, flags: int) -> None:
            self.buf, self.flags = bytearray(size), flags

    def PinnedMemoryPointer(mem: Any, offset: int) -> memoryview:
        return memoryview(mem.buf)[offset:]

    class using_allocator:
        def __init__(self, fn: Any) -> None:
            self.fn = fn

        def __enter__(self) -> None:
            calls["allocators"].append((threading.current_thread().name, self.fn))

        def __exit__(self, *exc: Any) -> None:
            return None

    cuda = types.SimpleNamespace(
        runtime=Runtime,
        Device=Device,
        Stream=Stream,
        Event=Event,
        Memory=Memory,
        UnownedMemory=UnownedMemory,
        MemoryPointer=MemoryPointer,
        PinnedMemory=PinnedMemory,
        PinnedMemoryPointer=PinnedMemoryPointer,
        using_allocator=using_allocator,
    )
    module = types.ModuleType("cupy")
    module.cuda = cuda  # type: ignore[attr-defined]
    module.ndarray = np.ndarray  # type: ignore[attr-defined]
    module.asnumpy = lambda a: np.array(a, copy=True)  # type: ignore[attr-defined]
    module.calls = calls  # type: ignore[attr-defined]
    module.__getattr__ = lambda name: getattr(np, name)  # type: ignore[attr-defined]
    return module


def test_asking_for_cuda_without_cupy_names_the_missing_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(ac.errors.UnavailableError, match=r"CuPy.*antcolony\[cuda\]"):
        select_backend("cuda", 1, 1 << 30)


@pytest.mark.parametrize(
    ("status", "why"), [(35, "no usable NVIDIA driver"), (100, "no CUDA device visible")]
)
def test_asking_for_cuda_without_a_driver_or_device_says_which(monkeypatch, status, why):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(fail_status=status))
    with pytest.raises(ac.errors.UnavailableError, match=why):
        select_backend("cuda", 1, 1 << 30)


def test_asking_for_cuda_with_zero_devices_is_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(devices=0))
    with pytest.raises(ac.errors.UnavailableError, match="no device"):
        select_backend("cuda", 1, 1 << 30)


def test_auto_falls_back_to_simulated_gpus_and_logs_why(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with caplog.at_level(logging.INFO):
        backend = select_backend("auto", 3, 1 << 30)
    assert backend.name == "sim" and backend.device_count() == 3
    assert "simulated GPUs (3)" in caplog.text and "CuPy" in caplog.text


def test_auto_picks_cuda_when_cupy_sees_a_device(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(devices=2))
    with caplog.at_level(logging.INFO):
        backend = select_backend("auto", 1, 1 << 30)
    assert backend.name == "cuda" and backend.device_count() == 2
    assert "using CUDA (2 device(s))" in caplog.text
    assert [i.bus_id for i in backend.infos()] == ["0000:3b:00.0", "0000:3c:00.0"]


def test_an_unknown_backend_name_is_a_config_error():
    with pytest.raises(ac.errors.ConfigError, match="gpu_backend"):
        ac.SessionConfig(gpu_backend="rocm")
    with pytest.raises(ac.errors.ConfigError, match="gpu_backend"):
        select_backend("rocm", 1, 1 << 30)


def test_the_backend_can_be_chosen_from_the_environment(monkeypatch):
    monkeypatch.setenv("ANTCOLONY_GPU_BACKEND", "sim")
    monkeypatch.setenv("ANTCOLONY_SIM_GPU_COUNT", "3")
    config = ac.SessionConfig()
    assert (config.gpu_backend, config.sim_gpu_count) == ("sim", 3)
    monkeypatch.setenv("ANTCOLONY_SIM_GPU_COUNT", "three")
    with pytest.raises(ac.errors.ConfigError, match="ANTCOLONY_SIM_GPU_COUNT"):
        ac.SessionConfig()


async def test_a_session_on_the_cuda_backend_runs_kernels_on_streams_and_completes_through_events(
    monkeypatch,
):
    cupy = fake_cupy(devices=2)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2, 2], name="x")
        with ac.device("/gpu:1"):
            y = ac.matmul(x, x) + 1.0
        z = y * 2.0
    async with ac.Session(g, config=ac.SessionConfig(gpu_backend="cuda")) as sess:
        devices = sess.list_devices()
        out = await sess.run([y, z], {x: [[1.0, 2.0], [3.0, 4.0]]})
    expected = np.array([[7.0, 10.0], [15.0, 22.0]]) + 1.0
    np.testing.assert_allclose(out[0], expected)
    np.testing.assert_allclose(out[1], expected * 2.0)
    assert [d.bus_id for d in devices[1:]] == ["0000:3b:00.0", "0000:3c:00.0"]
    syncs = cupy.calls["event_syncs"]
    assert syncs, "completion never waited for a CUDA event"
    # each stream's own waiter thread waits, blocking (not spinning), never the loop's thread
    assert all(name.startswith("cuda1-") and name.endswith("-done") and block for name, block in syncs)
    assert 1 in cupy.calls["devices_entered"]
    # kernels and copies onto GPU 1 allocate through the session's allocator stack, on GPU 1's
    # stream threads (constants are copied once at build time, on the loop's thread)
    threads = {name.split("_")[0] for name, _ in cupy.calls["allocators"]}
    assert "cuda1-copy0" in threads and any(t.startswith("cuda1-compute") for t in threads)
    assert not any(t.startswith("cuda0") for t in threads)


def _gpu_step_graph() -> tuple[ac.Graph, Any, Any]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2, 2], name="x")
        with ac.device("/gpu:0"):
            y = ac.matmul(x, x, name="square")
    return g, x, y


def test_a_device_error_seen_at_the_event_fails_the_step_naming_the_cuda_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(devices=1, sync_status=700))
    g, x, y = _gpu_step_graph()

    async def main() -> None:
        async with ac.Session(g, config=ac.SessionConfig(gpu_backend="cuda")) as sess:
            await sess.run(y, {x: np.ones((2, 2), np.float32)})

    with pytest.raises(ac.errors.OpError, match="cudaError 700"):
        ac.run(main())


def test_the_stream_threads_and_their_event_waiters_end_with_the_runtime(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(devices=1))
    g, x, y = _gpu_step_graph()

    async def main() -> Any:
        async with ac.Session(g, config=ac.SessionConfig(gpu_backend="cuda")) as sess:
            return await sess.run(y, {x: np.ones((2, 2), np.float32)})

    np.testing.assert_array_equal(ac.run(main()), np.full((2, 2), 2.0, np.float32))
    deadline = time.monotonic() + 5
    while (left := [t.name for t in threading.enumerate() if t.name.startswith("cuda0-")]) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert not left, f"CUDA stream threads still alive after the runtime shut down: {left}"


def test_cupy_allocations_come_from_the_bfc_stack_and_fall_back_to_pinned_host_memory(monkeypatch):
    import gc

    from antcolony.devices.backends.cuda import CudaBackend
    from antcolony.devices.memory import DeviceMemory

    cupy = fake_cupy(devices=1)
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    # cudaMalloc regions, not "auto": where cuda.bindings and a real GPU exist (the GPU proof's
    # machine), auto would grow the pool through the real driver, which the fake CuPy never sees
    backend = CudaBackend(virtual_memory="off")
    mem = DeviceMemory(
        "/gpu:0",
        8 << 30,
        4 << 20,
        True,
        True,
        64 << 20,
        backend.device_sub_allocator(0),
        backend.host_sub_allocator(0, 64 << 20),
        charge_values=False,
    )
    from antcolony.devices.backends.cuda_memory import make_cupy_allocator

    malloc = make_cupy_allocator(cupy, mem.vmem, 0)
    on_device = malloc(3 << 20)
    assert cupy.calls["cuda_malloc"] == [4 << 20] or sum(cupy.calls["cuda_malloc"]) >= 3 << 20
    assert on_device.mem.device_id == 0 and mem.memory_stats().bytes_in_use == 3 << 20
    overflow = malloc(3 << 20)  # does not fit under the 4 MiB limit: pinned host memory
    stats = mem.memory_stats()
    assert stats.num_host_fallbacks == 1 and stats.host_bytes_in_use == 3 << 20
    assert overflow.ptr != on_device.ptr
    assert mem.account("anything") == "anything"  # CUDA charges at allocation, not per value
    # Residency (what brings a variable back from host fallback memory when it is next updated in
    # place) comes from where the array's data lies: a CuPy array's ``data`` is its MemoryPointer.
    assert mem.is_device_resident(types.SimpleNamespace(data=on_device)) is True
    assert mem.is_device_resident(types.SimpleNamespace(data=overflow)) is False
    assert mem.is_device_resident(np.zeros(4)) is None  # not this GPU's memory
    del on_device, overflow
    gc.collect()
    stats = mem.memory_stats()
    assert stats.bytes_in_use == 0 and stats.host_bytes_in_use == 0
