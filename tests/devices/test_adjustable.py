"""AdjustableAllocator: grow, shrink, partial shrink and retry, clamping to the initial limit."""

from __future__ import annotations

import logging

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from antcolony.devices.allocator import (
    AdjustableAllocator,
    Allocation,
    BFCAllocator,
    VirtualAddressSpace,
    VMemAllocator,
    make_host_allocator,
)

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


class _SeparateRegions(VirtualAddressSpace):
    """Regions that cannot grow in place or be split (as cudaMalloc's): each growth is a region
    of its own, freed whole."""

    can_extend = False
    can_split = False


def growing(limit: int = 1 * GiB, extend: bool = True) -> BFCAllocator:
    space = VirtualAddressSpace(4 * GiB) if extend else _SeparateRegions(4 * GiB)
    return BFCAllocator(space, limit, allow_growth=True, name="GPU_0_bfc")


def test_growing_the_limit_just_sets_it() -> None:
    a = growing()
    adj = AdjustableAllocator(a)
    assert adj.adjust_limit(256 * MiB) == 256 * MiB
    assert adj.adjust_limit(512 * MiB) == 512 * MiB == a.bytes_limit
    assert adj.reached and a.stats().pool_bytes == 0


def test_a_limit_above_the_initial_device_limit_is_clamped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    adj = AdjustableAllocator(growing())
    with caplog.at_level(logging.INFO, logger="antcolony.devices.allocator.adjustable"):
        assert adj.adjust_limit(2 * GiB) == 1 * GiB
    assert "clamped" in caplog.text
    assert adj.adjust_limit(2 * GiB, clamp=False) == 2 * GiB  # AntMan's allocator-level behaviour


def test_shrinking_but_staying_above_the_pool_only_sets_the_limit() -> None:
    a = growing()
    x = a.allocate(100 * MiB)  # one 128 MiB region
    assert AdjustableAllocator(a).adjust_limit(200 * MiB) == 200 * MiB
    assert a.stats().pool_bytes == 128 * MiB and x.in_use


def test_shrinking_below_the_pool_releases_empty_regions_lowest_address_first() -> None:
    a = growing(extend=False)
    live = [a.allocate(1 * MiB) for _ in range(2 + 4 + 8)]  # regions of 2, 4, 8 MiB
    for c in live:
        a.free(c)
    assert AdjustableAllocator(a).adjust_limit(9 * MiB) == 9 * MiB
    assert [r.size for r in a.sub_allocator.regions] == [8 * MiB]  # the 2 and 4 MiB regions went first
    a.check_invariants()


def test_a_live_chunk_keeps_its_region_so_the_limit_stops_at_the_remaining_pool_and_a_retry_finishes() -> (
    None
):
    a = growing(extend=False)
    live = [a.allocate(1 * MiB) for _ in range(2 + 4 + 8)]
    keep = live[-1]  # lives in the 8 MiB region
    for c in live[:-1]:
        a.free(c)
    adj = AdjustableAllocator(a)
    assert adj.adjust_limit(2 * MiB) == 8 * MiB  # the 2 and 4 MiB regions freed, the 8 MiB one is held
    assert not adj.reached and a.bytes_limit == 8 * MiB and a.stats().stable_bytes == 8 * MiB
    assert a.try_allocate(8 * MiB) is None  # no growth past the reached limit
    assert adj.retry() == 8 * MiB  # still held
    a.free(keep)
    assert adj.retry() == 2 * MiB and adj.reached
    assert a.stats().pool_bytes == 0
    a.check_invariants()


def test_after_a_shrink_later_allocations_beyond_the_new_limit_land_on_the_host() -> None:
    dev = growing()
    v = VMemAllocator(
        dev, make_host_allocator("GPUHost_0_bfc", 1 * GiB, VirtualAddressSpace(1 * GiB)), enabled=True
    )
    for c in [v.allocate(64 * MiB) for _ in range(4)]:
        v.free(c)
    assert AdjustableAllocator(v.device).adjust_limit(2 * MiB) == 2 * MiB  # AntMan's shrink test
    small, big = v.allocate(1 * MiB), v.allocate(4 * MiB)
    assert v.is_device_resident(small) and not v.is_device_resident(big)
    assert v.memory_stats().bytes_limit == 2 * MiB and v.memory_stats().pool_bytes <= 2 * MiB


def test_regions_restart_small_after_a_shrink_so_they_can_fill_the_freed_room() -> None:
    a = growing(extend=False)
    keep, big = a.allocate(2 * MiB), a.allocate(100 * MiB)  # regions of 2 and 128 MiB
    a.free(big)
    assert AdjustableAllocator(a).adjust_limit(10 * MiB) == 10 * MiB
    a.allocate(1 * MiB)
    assert [r.size for r in a.sub_allocator.regions] == [2 * MiB, 2 * MiB]
    a.free(keep)


class _FixedRegions(VirtualAddressSpace):
    """Regions that cannot be trimmed, grown or split, as cudaMalloc's."""

    can_trim = False
    can_extend = False
    can_split = False


def test_a_pool_grown_in_place_is_one_region_whose_free_tail_a_shrink_gives_back() -> None:
    a = growing()
    live = [a.allocate(1 * MiB) for _ in range(2 + 4 + 8)]  # growths of 2, 4 and 8 MiB
    assert [r.size for r in a.sub_allocator.regions] == [14 * MiB]
    for c in live[1:]:
        a.free(c)
    adj = AdjustableAllocator(a)
    assert adj.adjust_limit(2 * MiB) == 2 * MiB and adj.reached  # the tail beyond the live first MiB
    assert a.stats().pool_bytes == 2 * MiB and [r.size for r in a.sub_allocator.regions] == [2 * MiB]
    a.check_invariants()
    a.free(live[0])
    assert adj.adjust_limit(0) == 0 and a.stats().pool_bytes == 0


def test_free_space_before_a_live_chunk_is_cut_out_of_a_pool_grown_in_place_and_given_back() -> None:
    a = growing()
    live = [a.allocate(1 * MiB) for _ in range(2 + 4 + 8)]
    for c in live[:-1]:
        a.free(c)
    adj = AdjustableAllocator(a)
    assert adj.adjust_limit(2 * MiB) == 2 * MiB and adj.reached
    assert [r.size for r in a.sub_allocator.regions] == [1 * MiB]  # only the live chunk's range
    assert a.sub_allocator.regions[0].base == live[-1].address
    a.check_invariants()
    a.allocate(1 * MiB)  # the limit has room for one MiB more, grown onto the live range
    assert a.stats().pool_bytes == 2 * MiB and a.stats().num_regions == 1
    a.check_invariants()


def test_a_non_growing_allocator_without_trimming_gives_back_its_single_region_only_when_empty() -> None:
    a = BFCAllocator(_FixedRegions(1 * GiB), 1 * GiB, allow_growth=False, name="GPU_0_bfc")
    adj = AdjustableAllocator(a)
    x = a.allocate(1 * KiB)
    assert adj.adjust_limit(512 * MiB) == 1 * GiB  # the one region holds a live chunk
    a.free(x)
    assert adj.retry() == 512 * MiB and a.stats().pool_bytes == 0
    a.allocate(1 * KiB)
    assert a.stats().pool_bytes == 512 * MiB  # the next region is again the whole limit


def test_a_non_growing_allocator_over_virtual_memory_trims_its_region_to_a_lower_limit_at_once() -> None:
    space = VirtualAddressSpace(1 * GiB)
    a = BFCAllocator(space, 1 * GiB, allow_growth=False, name="GPU_0_bfc")
    adj = AdjustableAllocator(a)
    x = a.allocate(1 * KiB)
    assert adj.adjust_limit(512 * MiB) == 512 * MiB
    assert a.stats().pool_bytes == 512 * MiB and space.free_bytes == 512 * MiB
    y = a.allocate(500 * MiB)  # the trimmed region still serves what fits under the new limit
    assert a.try_allocate(20 * MiB) is None
    a.check_invariants()
    a.free(x)
    a.free(y)
    assert adj.adjust_limit(1 * GiB) == 1 * GiB
    assert a.allocate(900 * MiB) is not None  # a region released and taken again up to the new limit
    a.check_invariants()


class AdjustMachine(RuleBasedStateMachine):
    """Allocations, frees and limit changes interleaved: structure intact, pool never above the limit."""

    @initialize(allow_growth=st.booleans())
    def setup(self, allow_growth: bool) -> None:
        self.a = BFCAllocator(VirtualAddressSpace(1 * GiB), 64 * MiB, allow_growth=allow_growth, name="gpu")
        self.adj = AdjustableAllocator(self.a)
        self.live: list[Allocation] = []

    @rule(nbytes=st.one_of(st.integers(0, 256 * KiB), st.integers(1 * MiB, 16 * MiB)))
    def allocate(self, nbytes: int) -> None:
        c = self.a.try_allocate(nbytes)
        if c is not None:
            self.live.append(c)

    @precondition(lambda self: self.live)
    @rule(index=st.integers(0, 1000))
    def free(self, index: int) -> None:
        self.a.free(self.live.pop(index % len(self.live)))

    @rule(limit=st.integers(0, 80 * MiB))
    def adjust(self, limit: int) -> None:
        stable = self.a.stats().stable_bytes
        reached = self.adj.adjust_limit(limit)
        target = min(limit, 64 * MiB)
        assert reached == self.a.bytes_limit >= target
        assert reached == target or reached == self.a.pool_bytes  # short only by what live data holds
        assert self.a.pool_bytes <= max(target, stable) or reached == self.a.pool_bytes

    @invariant()
    def consistent(self) -> None:
        self.a.check_invariants()
        assert self.a.pool_bytes <= self.a.bytes_limit
        assert self.a.bytes_in_use == sum(c.chunk_size for c in self.live)


@pytest.mark.slow
def test_random_allocations_frees_and_limit_changes_keep_the_allocator_consistent() -> None:
    run_state_machine_as_test(
        AdjustMachine,
        settings=settings(
            max_examples=40,
            stateful_step_count=50,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
