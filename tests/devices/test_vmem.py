"""VMemAllocator: host-memory fallback, its limits, routing of frees, OOM vs FRAGMENT reasons."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from antcolony.devices.allocator import (
    DEFAULT_HOST_MEM_LIMIT,
    Allocation,
    BFCAllocator,
    HostMemory,
    MemoryStats,
    VirtualAddressSpace,
    VMemAllocator,
    host_mem_limit_from_env,
    make_host_allocator,
    vmem_enabled_from_env,
)
from antcolony.errors import ConfigError, ResourceExhaustedError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

DESIGN_FIELDS = {
    "bytes_in_use",
    "peak_bytes_in_use",
    "bytes_limit",
    "pool_bytes",
    "stable_bytes",
    "host_bytes_in_use",
    "host_peak_bytes_in_use",
    "num_allocs",
    "num_host_fallbacks",
}


def device(limit: int = 1 * GiB, allow_growth: bool = False) -> BFCAllocator:
    return BFCAllocator(VirtualAddressSpace(limit), limit, allow_growth=allow_growth, name="GPU_0_bfc")


def sim_host(limit: int | None = None) -> BFCAllocator:
    """A host BFC over a virtual address space: AntMan-sized requests without touching RAM."""
    return make_host_allocator("GPUHost_0_bfc", limit, sub_allocator=VirtualAddressSpace(4 * GiB))


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TF_GPU_VMEM", raising=False)
    monkeypatch.delenv("TF_CUDA_HOST_MEM_LIMIT_IN_MB", raising=False)


def test_with_vmem_off_a_request_of_limit_plus_1KiB_fails_with_resource_exhausted_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TF_GPU_VMEM", "false")
    v = VMemAllocator(device(), sim_host())
    assert not v.enabled and v.try_allocate(GiB + KiB) is None
    with pytest.raises(ResourceExhaustedError) as info:
        v.allocate(GiB + KiB)
    msg = str(info.value)
    for part in ("GPU_0_bfc", str(GiB + KiB), "bytes_limit=1.00 GiB", "vmem is off"):
        assert part in msg
    assert v.memory_stats().host_bytes_in_use == 0


def test_with_vmem_on_limit_plus_1KiB_lands_in_host_memory_when_the_host_limit_allows_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TF_CUDA_HOST_MEM_LIMIT_IN_MB", "1025")
    v = VMemAllocator(device(), sim_host())
    a = v.allocate(GiB + KiB)
    assert not v.is_device_resident(a) and a.allocator is v.host
    s = v.memory_stats()
    assert (s.bytes_in_use, s.host_bytes_in_use, s.num_host_fallbacks, s.swap_reason) == (
        0,
        GiB + KiB,
        1,
        "OOM",
    )
    assert s.host_bytes_limit == 1025 * MiB


def test_with_vmem_on_limit_plus_1KiB_fails_when_the_host_limit_does_not_allow_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TF_CUDA_HOST_MEM_LIMIT_IN_MB", "1024")
    v = VMemAllocator(device(), sim_host())
    with pytest.raises(ResourceExhaustedError) as info:
        v.allocate(GiB + KiB)
    assert "GPU_0_bfc" in str(info.value) and "GPUHost_0_bfc" in str(info.value)
    assert v.memory_stats().num_host_fallbacks == 0


def test_half_the_limit_stays_on_the_device_and_only_the_overflow_goes_to_the_host() -> None:
    v = VMemAllocator(device(), sim_host(), enabled=True)  # AntMan's VMemOOM case
    a, b = v.allocate(GiB // 2), v.allocate(GiB + KiB)
    assert v.is_device_resident(a) and not v.is_device_resident(b)
    s = v.memory_stats()
    assert (s.bytes_in_use, s.peak_bytes_in_use, s.bytes_limit, s.host_peak_bytes_in_use) == (
        GiB // 2,
        GiB // 2,
        GiB,
        GiB + KiB,
    )


def test_vmem_is_on_by_default_and_the_env_switch_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    assert vmem_enabled_from_env() and VMemAllocator(device()).enabled
    monkeypatch.setenv("TF_GPU_VMEM", "0")
    assert not VMemAllocator(device()).enabled
    assert VMemAllocator(device(), enabled=True).enabled  # an explicit setting wins over the env
    monkeypatch.setenv("TF_GPU_VMEM", "maybe")
    with pytest.raises(ConfigError, match="TF_GPU_VMEM"):
        vmem_enabled_from_env()


def test_host_limit_defaults_to_64_GiB_and_reads_megabytes_from_the_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert host_mem_limit_from_env() == DEFAULT_HOST_MEM_LIMIT == 64 * GiB
    assert VMemAllocator(device()).host.bytes_limit == 64 * GiB
    monkeypatch.setenv("TF_CUDA_HOST_MEM_LIMIT_IN_MB", "2048")
    assert host_mem_limit_from_env() == 2 * GiB
    monkeypatch.setenv("TF_CUDA_HOST_MEM_LIMIT_IN_MB", "lots")
    with pytest.raises(ConfigError, match="TF_CUDA_HOST_MEM_LIMIT_IN_MB"):
        host_mem_limit_from_env()


def test_frees_are_routed_to_the_allocator_that_holds_the_allocation() -> None:
    v = VMemAllocator(device(4 * MiB), sim_host(64 * MiB), enabled=True)
    on_device, on_host = v.allocate(3 * MiB), v.allocate(3 * MiB)
    assert v.is_device_resident(on_device) and not v.is_device_resident(on_host)
    v.free(on_host)
    assert (v.device.bytes_in_use, v.host.bytes_in_use) == (3 * MiB, 0)
    v.free(on_device)
    assert (v.device.bytes_in_use, v.host.bytes_in_use) == (0, 0)
    with pytest.raises(ValueError, match="double free"):
        v.free(on_device)
    stranger = device(4 * MiB).allocate(1)
    with pytest.raises(ValueError, match="not by this allocator"):
        v.free(stranger)


def test_new_allocations_return_to_the_device_once_it_has_room() -> None:
    v = VMemAllocator(device(4 * MiB), sim_host(64 * MiB), enabled=True)
    first, spilled = v.allocate(3 * MiB), v.allocate(3 * MiB)
    v.free(first)
    assert v.is_device_resident(v.allocate(3 * MiB))
    assert not v.is_device_resident(spilled)  # nothing migrates back on its own


def test_a_fallback_because_the_limit_is_used_up_is_counted_as_oom() -> None:
    v = VMemAllocator(device(1 * MiB), sim_host(64 * MiB), enabled=True)
    v.allocate(1 * MiB)
    v.allocate(256)
    s = v.memory_stats()
    assert (s.num_host_fallbacks, s.num_oom_fallbacks, s.num_fragment_fallbacks, s.swap_reason) == (
        1,
        1,
        0,
        "OOM",
    )


def test_a_fallback_while_enough_bytes_are_free_but_scattered_is_counted_as_fragment() -> None:
    v = VMemAllocator(device(1 * MiB), sim_host(64 * MiB), enabled=True)
    blocks = [v.allocate(256 * KiB) for _ in range(4)]
    v.free(blocks[0])
    v.free(blocks[2])  # 512 KiB free in two 256 KiB holes
    a = v.allocate(512 * KiB)
    assert not v.is_device_resident(a)
    s = v.memory_stats()
    assert (s.num_fragment_fallbacks, s.swap_reason, s.fragmentation) == (1, "FRAGMENT", 0.5)
    v.allocate(1 * MiB)
    assert v.memory_stats().swap_reason == "OOM" and v.memory_stats().num_host_fallbacks == 2


def test_memory_stats_has_the_design_fields_and_window_peaks_reset_on_both_allocators() -> None:
    assert {f.name for f in dataclasses.fields(MemoryStats)} >= DESIGN_FIELDS
    v = VMemAllocator(device(1 * MiB), sim_host(64 * MiB), enabled=True)
    x, y = v.allocate(1 * MiB), v.allocate(2 * MiB)
    v.free(y)
    v.reset_peak()
    s = v.memory_stats()
    assert (s.peak_bytes_in_use, s.window_peak_bytes_in_use) == (1 * MiB, 1 * MiB)
    assert (s.host_peak_bytes_in_use, s.host_window_peak_bytes_in_use) == (2 * MiB, 0)
    assert s.as_dict()["num_allocs"] == 1 and s.host_num_allocs == 1
    v.free(x)


def test_host_fallback_memory_is_real_memory_by_default() -> None:
    v = VMemAllocator(device(1 * MiB), make_host_allocator("host", 8 * MiB), enabled=True)
    assert isinstance(v.host.sub_allocator, HostMemory)
    a = v.allocate(2 * MiB)
    a.buffer()[:] = 7
    assert a.buffer().sum() == 7 * 2 * MiB
    v.free(a)


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(st.integers(0, 3 * MiB), st.integers(0, 1000)), max_size=60))
def test_random_sequences_keep_device_and_host_books_equal_to_what_is_live(
    ops: list[tuple[int, int]],
) -> None:
    v = VMemAllocator(device(4 * MiB, allow_growth=True), sim_host(16 * MiB), enabled=True)
    live: list[Allocation] = []
    for nbytes, pick in ops:
        a = v.try_allocate(nbytes)
        if a is not None:
            live.append(a)
        elif live:
            v.free(live.pop(pick % len(live)))
        s = v.memory_stats()
        assert s.bytes_in_use == sum(x.chunk_size for x in live if v.is_device_resident(x))
        assert s.host_bytes_in_use == sum(x.chunk_size for x in live if not v.is_device_resident(x))
        assert s.num_host_fallbacks == s.host_num_allocs
    for a in live:
        v.free(a)
    v.device.check_invariants()
    v.host.check_invariants()
    assert v.memory_stats().bytes_in_use == v.memory_stats().host_bytes_in_use == 0


def test_a_session_config_argument_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TF_GPU_VMEM", "0")
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    import antcolony as ac

    assert ac.SessionConfig().vmem is False  # a field left out takes the environment
    assert ac.SessionConfig(vmem=True).vmem is True  # an argument equal to the default still wins
    assert ac.SessionConfig(allow_growth=False).allow_growth is False
    assert ac.SessionConfig().allow_growth is True
