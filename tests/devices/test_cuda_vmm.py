"""The CUDA backend's pool through CUDA virtual memory management, without a GPU: a stand-in
``cupy`` (tests/devices/test_backends.py) and a stand-in ``cuda.bindings.driver``
(fake_cuda_driver.py, which enforces the driver's mapping rules and records every call).

What this cannot show (real mappings, kernels reading them, the driver's real granularity and
error codes) runs on hardware in scripts/gpu_proof.sh's virtual-memory stage."""

from __future__ import annotations

import gc
import logging
import sys
from typing import Any

import numpy as np
import pytest

import antcolony as ac
from antcolony.devices.backends.cuda import CudaBackend
from antcolony.devices.backends.cuda_memory import CudaDeviceMemory, make_cupy_allocator
from antcolony.devices.backends.cuda_vmm import CudaVirtualMemory
from antcolony.devices.memory import DeviceMemory
from antcolony.errors import ConfigError, InternalError, ResourceExhaustedError, UnavailableError
from tests.devices.fake_cuda_driver import CUresult, FakeDriver
from tests.devices.test_backends import fake_cupy

MiB = 1 << 20
GPU = 256 * MiB


@pytest.fixture
def driver(monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    fake = FakeDriver(physical=GPU)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(devices=1, memory=GPU))
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", fake)
    return fake


def _stack(backend: CudaBackend) -> tuple[DeviceMemory, Any]:
    """The allocator stack a session builds for /gpu:0 (vmem off, as the issue's case), and the
    CuPy allocator function that carves arrays from it."""
    mem = DeviceMemory(
        "/gpu:0",
        GPU,
        None,
        True,
        False,
        64 * MiB,
        backend.device_sub_allocator(0),
        backend.host_sub_allocator(0, 64 * MiB),
        charge_values=False,
    )
    return mem, make_cupy_allocator(backend.cupy, mem.vmem, 0)


def _two_80_MiB_variables_through_80_MiB_copies(malloc: Any) -> list[Any]:
    kept = []
    for _ in range(2):
        copy = malloc(80 * MiB)
        kept.append(malloc(80 * MiB))
        del copy
        gc.collect()
    return kept


def test_the_pool_grows_by_mapping_chunks_at_the_end_of_one_reserved_range(driver, caplog):
    caplog.set_level(logging.INFO, "antcolony.devices.backends.cuda_memory")
    backend = CudaBackend()
    mem, malloc = _stack(backend)
    sub = mem.device.sub_allocator
    assert isinstance(sub, CudaVirtualMemory)
    assert "virtual memory management" in caplog.text
    ((base, size),) = driver.reservations.items()
    assert size >= GPU
    arrays = [malloc(n * MiB) for n in (3, 5, 9, 17, 33)]
    # every growth mapped pages right after the ones before: one mapped range from the base
    assert driver.mapped_ranges() == [(base, base + sub.mapped_bytes)]
    assert set(driver.accessible) == set(driver.mappings)
    assert all(base <= a.ptr < base + size for a in arrays)
    assert len(driver.called("cuMemAddressReserve")) == 1
    stats = mem.device.stats()
    assert stats.num_regions == 1 and stats.bytes_in_use == 67 * MiB
    assert driver.physical_in_use == sub.mapped_bytes >= stats.pool_bytes
    # driver calls ran with the device's context current, and it was popped again each time
    assert len(driver.called("cuCtxPushCurrent")) == len(driver.called("cuCtxPopCurrent")) > 0
    assert driver.context_depth == 0


def test_two_80_MiB_blocks_fit_a_256_MiB_gpu_where_separate_growth_regions_do_not(driver, monkeypatch):
    mem, malloc = _stack(CudaBackend())
    kept = _two_80_MiB_variables_through_80_MiB_copies(malloc)
    stats = mem.memory_stats()
    assert stats.bytes_in_use == 160 * MiB and stats.num_host_fallbacks == 0
    assert mem.device.stats().num_regions == 1
    assert driver.physical_in_use <= GPU
    del kept
    gc.collect()
    # the same sequence on cudaMalloc regions (what the backend used before) is refused
    mem, malloc = _stack(CudaBackend("off"))
    assert isinstance(mem.device.sub_allocator, CudaDeviceMemory)
    with pytest.raises(ResourceExhaustedError, match="/gpu:0"):
        _two_80_MiB_variables_through_80_MiB_copies(malloc)


def test_free_chunks_are_unmapped_and_released_when_the_pool_hands_them_back(driver):
    mem, malloc = _stack(CudaBackend())
    sub = mem.device.sub_allocator
    low = malloc(MiB)  # stays: its page stays mapped
    big = [malloc(20 * MiB) for _ in range(3)]
    high = malloc(MiB)  # stays, above the big ones: what they free is a hole inside the range
    grown = driver.physical_in_use
    del big
    gc.collect()
    assert driver.physical_in_use == grown  # freed blocks stay in the pool until it hands them back
    calls_before = len(driver.calls)
    pool = mem.device.release_free_regions(mem.device.bytes_in_use)  # what the pool trimmer calls
    assert pool < 8 * MiB
    assert driver.physical_in_use == sub.mapped_bytes <= grown - 56 * MiB
    after = [name for name, _ in driver.calls[calls_before:]]
    unmapped = driver.called("cuMemUnmap")
    assert unmapped and len(driver.called("cuMemRelease")) == len(unmapped)
    # kernels enqueued before the free may still read those pages: the device is synchronized first
    assert after.index("cuCtxSynchronize") < after.index("cuMemUnmap")
    # what is still in use is still mapped, and the pool grows back into the hole
    assert all(any(a <= p.ptr < e for a, e in driver.mapped_ranges()) for p in (low, high))
    again = malloc(40 * MiB)
    assert driver.mapped_ranges()[0][0] <= again.ptr and mem.device.stats().num_regions <= 3


@pytest.mark.parametrize(
    ("call", "code", "after"),
    [
        ("cuMemCreate", CUresult.CUDA_ERROR_OUT_OF_MEMORY, 3),
        ("cuMemMap", CUresult.CUDA_ERROR_INVALID_VALUE, 2),
        ("cuMemSetAccess", CUresult.CUDA_ERROR_NOT_SUPPORTED, 0),
        ("cuCtxPushCurrent", CUresult.CUDA_ERROR_INVALID_CONTEXT, 0),
    ],
)
def test_a_refused_growth_names_the_call_and_error_and_leaves_nothing_mapped(driver, call, code, after):
    mem, malloc = _stack(CudaBackend())
    sub = mem.device.sub_allocator
    driver.fail(call, code, after=after, times=None)
    with pytest.raises(ResourceExhaustedError) as info:
        malloc(30 * MiB)
    driver.heal()
    assert call in info.value.message and code.name in info.value.message
    assert driver.mappings == {} and driver.physical_in_use == 0
    assert sub.bytes_allocated == 0 and sub.free_bytes == sub.capacity
    assert driver.context_depth == 0
    ok = malloc(30 * MiB)  # the next try gets the memory
    assert driver.physical_in_use >= 30 * MiB and ok.ptr == min(driver.reservations)


def test_a_failed_unmap_is_an_internal_error_and_close_tries_that_page_again(driver):
    sub = CudaBackend().device_sub_allocator(0)
    region = sub.alloc(6 * MiB)
    driver.fail("cuMemUnmap", CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, after=1)
    with pytest.raises(InternalError, match="cuMemUnmap of page 1: CUDA_ERROR_ILLEGAL_ADDRESS"):
        sub.free(region)
    assert len(driver.mappings) == 1 and sub.mapped_bytes == driver.granularity
    sub.close()
    assert driver.mappings == {} and driver.handles == {} and driver.reservations == {}


@pytest.mark.parametrize(
    ("call", "code"),
    [
        ("cuInit", CUresult.CUDA_ERROR_NOT_INITIALIZED),
        ("cuMemGetAllocationGranularity", CUresult.CUDA_ERROR_NOT_SUPPORTED),
        ("cuMemAddressReserve", CUresult.CUDA_ERROR_OUT_OF_MEMORY),
    ],
)
def test_a_driver_that_cannot_set_up_falls_back_to_cudaMalloc_or_fails_when_required(
    driver, caplog, call, code
):
    caplog.set_level(logging.INFO, "antcolony.devices.backends.cuda_memory")
    driver.fail(call, code)
    sub = CudaBackend().device_sub_allocator(0)
    assert isinstance(sub, CudaDeviceMemory)
    assert f"cudaMalloc regions (the pool grows in separate regions) because cuda0: {call}" in caplog.text
    assert code.name in caplog.text
    driver.fail(call, code)
    with pytest.raises(UnavailableError, match=f"cuda_virtual_memory='on' but cuda0: {call}"):
        CudaBackend("on").device_sub_allocator(0)
    assert driver.reservations == {} and driver.context_refs == 0


def test_no_cuda_bindings_or_no_device_support_means_cudaMalloc_regions_and_says_why(monkeypatch, caplog):
    caplog.set_level(logging.INFO, "antcolony.devices.backends.cuda_memory")
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(devices=1, memory=GPU))
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", None)
    assert isinstance(CudaBackend().device_sub_allocator(0), CudaDeviceMemory)
    assert "cuda.bindings is not importable" in caplog.text
    with pytest.raises(UnavailableError, match="install antcolony\\[cuda\\]"):
        CudaBackend("on").device_sub_allocator(0)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", FakeDriver(GPU, supported=False))
    assert isinstance(CudaBackend().device_sub_allocator(0), CudaDeviceMemory)
    assert "does not support CUDA virtual memory management" in caplog.text
    caplog.clear()
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", FakeDriver(GPU))
    assert isinstance(CudaBackend("off").device_sub_allocator(0), CudaDeviceMemory)
    assert "cuda_virtual_memory='off'" in caplog.text


def test_the_setting_comes_from_the_environment_and_is_validated(monkeypatch):
    monkeypatch.setenv("ANTCOLONY_CUDA_VIRTUAL_MEMORY", "off")
    assert ac.SessionConfig().cuda_virtual_memory == "off"
    assert ac.SessionConfig(cuda_virtual_memory="on").cuda_virtual_memory == "on"
    monkeypatch.setenv("ANTCOLONY_CUDA_VIRTUAL_MEMORY", "expandable")
    with pytest.raises(ConfigError, match="cuda_virtual_memory must be 'auto', 'on' or 'off'"):
        ac.SessionConfig()


def test_closing_a_session_on_the_cuda_backend_frees_the_reservation_and_every_page(driver):
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [64])
        with ac.device("/gpu:0"):
            y = ac.reduce_sum(x * 2.0)

    async def main() -> float:
        config = ac.SessionConfig(gpu_backend="cuda", cuda_virtual_memory="on")
        async with ac.Session(g, config=config) as sess:
            got = await sess.run(y, {x: np.ones(64, np.float32)})
            runtime_memory = sess.memory_stats("/gpu:0")
            assert runtime_memory.bytes_limit == GPU
            # the session's pool is the reserved range: an allocation lands inside it
            assert len(driver.reservations) == 1
            return float(got)

    assert ac.run(main()) == 128.0
    assert driver.reservations == {} and driver.mappings == {} and driver.handles == {}
    assert driver.context_refs == 0


def test_bindings_that_raise_instead_of_returning_an_error_are_handled_the_same(driver, monkeypatch, caplog):
    caplog.set_level(logging.INFO, "antcolony.devices.backends.cuda_memory")

    def no_libcuda(*args: Any) -> Any:
        raise RuntimeError("Failed to dlopen libcuda.so.1")  # what cuda.bindings does without a driver

    monkeypatch.setattr(driver, "cuInit", no_libcuda)
    assert isinstance(CudaBackend().device_sub_allocator(0), CudaDeviceMemory)
    assert "cuda0: setting up CUDA virtual memory raised RuntimeError('Failed to dlopen" in caplog.text
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(devices=1, memory=GPU))
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", driver)
    _mem, malloc = _stack(CudaBackend())
    monkeypatch.setattr(driver, "cuMemSetAccess", no_libcuda)
    with pytest.raises(ResourceExhaustedError, match="raised RuntimeError"):
        malloc(8 * MiB)
    assert driver.mappings == {} and driver.physical_in_use == 0 and driver.context_depth == 0
