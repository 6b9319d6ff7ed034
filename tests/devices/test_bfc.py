"""BFCAllocator: best fit, coalescing, regions, limits, statistics (unit and property tests)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
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
    NUM_BINS,
    Allocation,
    BFCAllocator,
    HostMemory,
    VirtualAddressSpace,
    round_bytes,
)
from antcolony.errors import OpError, ResourceExhaustedError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


class SeparateRegions(VirtualAddressSpace):
    """Regions that cannot grow in place or be split (as cudaMalloc's): each growth is a region
    of its own, freed whole."""

    can_extend = False
    can_split = False


def bfc(
    limit: int = 64 * MiB,
    allow_growth: bool = False,
    capacity: int | None = None,
    extend: bool = True,
    **kw: object,
) -> BFCAllocator:
    space = (VirtualAddressSpace if extend else SeparateRegions)(capacity or limit)
    return BFCAllocator(space, limit, allow_growth=allow_growth, name="gpu0_bfc", **kw)


def assert_consistent(a: BFCAllocator, live: list[Allocation]) -> None:
    """The structure checks plus what a user can see: disjoint, aligned, inside regions, exact stats."""
    a.check_invariants()
    spans = sorted((c.address, c.address + c.chunk_size) for c in live)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start, "two live chunks overlap"
    for c in live:
        assert c.in_use and c.address % 256 == 0 and c.chunk_size == round_bytes(c.size)
        assert c.region.base <= c.address and c.address + c.chunk_size <= c.region.end
    s = a.stats()
    assert s.bytes_in_use == sum(c.chunk_size for c in live)
    assert s.num_live == len(live)
    assert s.pool_bytes <= s.bytes_limit


# Mostly small tensors, some large ones: like a training step's activations and gradients.
sizes = st.one_of(st.integers(0, 64 * KiB), st.integers(0, 64 * KiB), st.integers(1 * MiB, 12 * MiB))


class BFCMachine(RuleBasedStateMachine):
    """Random allocate / free / reset_peak sequences against a simple model of what is live."""

    @initialize(
        allow_growth=st.booleans(),
        limit=st.sampled_from([4 * MiB, 32 * MiB, 48 * MiB + 768]),
        extend=st.booleans(),
    )
    def setup(self, allow_growth: bool, limit: int, extend: bool) -> None:
        # the device never refuses: can_fit is exact
        self.a = bfc(limit, allow_growth, capacity=1 * GiB, extend=extend)
        self.extend, self.split = extend, False
        self.live: list[Allocation] = []
        self.allocs = self.peak = self.window_peak = 0

    @rule(nbytes=sizes)
    def allocate(self, nbytes: int) -> None:
        verdict = self.a.can_fit(nbytes)
        c = self.a.try_allocate(nbytes)
        assert (c is not None) == (verdict == "ok"), f"can_fit said {verdict}"
        if c is not None:
            assert c.size == nbytes
            self.live.append(c)
            self.allocs += 1
            in_use = sum(x.chunk_size for x in self.live)
            self.peak, self.window_peak = max(self.peak, in_use), max(self.window_peak, in_use)

    @precondition(lambda self: self.live)
    @rule(index=st.integers(0, 10_000), lifo=st.booleans())
    def free(self, index: int, lifo: bool) -> None:
        self.a.free(self.live.pop(-1 if lifo else index % len(self.live)))

    @rule(pool=st.sampled_from([0, 1 * MiB, 8 * MiB]))
    def release(self, pool: int) -> None:
        left = self.a.release_free_regions(pool)
        s = self.a.stats()
        # the target is reached unless live chunks hold more: then only live chunks are left
        # (regions that cannot be split: only regions holding a live chunk)
        assert left == s.pool_bytes
        assert left <= pool or (left == s.bytes_in_use if self.extend else left == s.stable_bytes)
        self.split = self.split or s.num_regions > 1

    @rule()
    def reset_peak(self) -> None:
        self.a.reset_peak()
        self.window_peak = sum(x.chunk_size for x in self.live)

    @invariant()
    def consistent(self) -> None:
        assert_consistent(self.a, self.live)
        s = self.a.stats()
        if self.extend and not self.split:  # growth in place: the pool stays one range
            assert s.num_regions <= 1
        assert (s.num_allocs, s.peak_bytes_in_use, s.window_peak_bytes_in_use) == (
            self.allocs,
            self.peak,
            self.window_peak,
        )

    def teardown(self) -> None:
        for c in self.live:
            self.a.free(c)
        self.a.check_invariants()
        s = self.a.stats()
        assert s.bytes_in_use == 0 and s.stable_bytes == 0 and s.fragmentation <= 1
        if s.pool_bytes:  # freed memory coalesced: the whole pool is one allocation again
            whole = self.a.allocate(s.pool_bytes)
            assert whole.chunk_size == s.pool_bytes
            self.a.free(whole)
            self.a.check_invariants()


@pytest.mark.slow
def test_random_alloc_free_sequences_keep_chunks_disjoint_inside_regions_and_stats_equal_a_recount() -> None:
    run_state_machine_as_test(
        BFCMachine,
        settings=settings(
            max_examples=60,
            stateful_step_count=60,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(sizes, st.booleans()), max_size=80))
def test_after_freeing_everything_one_allocation_of_the_whole_pool_succeeds(
    ops: list[tuple[int, bool]],
) -> None:
    for growth in (False, True):
        a, live = bfc(32 * MiB, growth), []
        for nbytes, keep in ops:
            c = a.try_allocate(nbytes)
            if c is not None:
                live.append(c)
            if not keep and live:
                a.free(live.pop(len(live) // 2))
        for c in live:
            a.free(c)
        pool = a.pool_bytes
        if pool:
            assert a.allocate(pool).chunk_size == pool
        a.check_invariants()


def test_requests_are_rounded_up_to_256_byte_chunks_at_256_byte_aligned_addresses() -> None:
    a = bfc()
    got = [a.allocate(n) for n in (0, 1, 256, 257, 1000)]
    assert [c.chunk_size for c in got] == [256, 256, 256, 512, 1024]
    assert [c.size for c in got] == [0, 1, 256, 257, 1000]
    assert all(c.address % 256 == 0 for c in got)
    assert a.stats().bytes_in_use == 256 * 3 + 512 + 1024


def test_a_negative_request_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        bfc().allocate(-1)


def test_best_fit_picks_the_smallest_free_block_that_fits_then_the_lowest_address() -> None:
    a = bfc()
    blocks = [a.allocate(n) for n in (4096, 256, 1024, 256, 2048, 256, 1024, 256)]
    for i in (0, 2, 4, 6):  # free holes of 4096, 1024, 2048, 1024 bytes, separated by live chunks
        a.free(blocks[i])
    c = a.allocate(1000)
    assert c.address == blocks[2].address  # the lower of the two 1 KiB holes, not the 4 KiB one
    assert a.allocate(1500).address == blocks[4].address
    a.check_invariants()


def test_freeing_merges_a_chunk_with_both_free_neighbours() -> None:
    a = bfc(1 * MiB)
    x, y, z, rest = a.allocate(1024), a.allocate(2048), a.allocate(4096), a.allocate(1 * MiB - 7 * 1024)
    a.free(x)
    a.free(z)
    assert a.stats().largest_free_block == 4096
    a.free(y)  # joins x's and z's holes
    assert a.stats().largest_free_block == 7 * 1024
    assert a.allocate(7 * 1024).address == x.address
    a.free(rest)
    a.check_invariants()


def test_bins_are_power_of_two_size_classes_from_256_bytes() -> None:
    a = bfc(2 * GiB)
    live = [a.allocate(n) for n in (256, 256, 1 * MiB, 256, 600 * MiB, 256)]
    for c in live[::2]:  # live separators keep the holes apart
        a.free(c)
    occupied = {b for b in range(NUM_BINS) if a._bins[b]}
    assert occupied == {0, 12, 20}  # 256 B -> bin 0; 1 MiB = 256 * 2**12; >= 256 MiB -> last bin
    a.check_invariants()


def test_without_allow_growth_the_first_allocation_takes_one_region_of_the_whole_limit() -> None:
    a = bfc(64 * MiB)
    assert a.stats().pool_bytes == 0  # nothing until first use
    a.allocate(1)
    s = a.stats()
    assert (s.num_regions, s.pool_bytes) == (1, 64 * MiB)


def test_with_allow_growth_regions_start_at_2_MiB_and_double_at_each_extension() -> None:
    a = bfc(1 * GiB, allow_growth=True, extend=False)
    live = [a.allocate(1 * MiB) for _ in range(2 + 4 + 8 + 16 + 32 + 64)]
    assert [r.size for r in a.sub_allocator.regions] == [
        2 * MiB,
        4 * MiB,
        8 * MiB,
        16 * MiB,
        32 * MiB,
        64 * MiB,
    ]
    assert_consistent(a, live)


def test_a_large_request_grows_the_region_size_until_it_fits() -> None:
    a = bfc(1 * GiB, allow_growth=True)
    a.allocate(100 * MiB)
    assert a.stats().pool_bytes == 128 * MiB


def test_region_growth_stops_at_the_limit() -> None:
    a = bfc(10 * MiB, allow_growth=True, extend=False)
    live = [a.allocate(1 * MiB) for _ in range(10)]
    s = a.stats()
    assert s.pool_bytes == 10 * MiB and [r.size for r in a.sub_allocator.regions] == [
        2 * MiB,
        4 * MiB,
        4 * MiB,
    ]
    assert a.try_allocate(1) is None and a.can_fit(1) == "OOM"
    assert_consistent(a, live)


def test_a_refused_region_is_retried_at_halving_sizes_down_to_the_request() -> None:
    a = bfc(64 * MiB, capacity=24 * MiB)  # the limit promises more than the device has
    c = a.allocate(10 * MiB)
    assert a.stats().pool_bytes == 16 * MiB  # 64 refused, 32 refused, 16 granted
    d = a.allocate(7 * MiB)  # 6 MiB left in the region: 48, 24, 12 refused, then the request itself
    assert d.region is not c.region and d.region.size == 7 * MiB
    assert a.try_allocate(6 * MiB) is not None and a.try_allocate(2 * MiB) is None  # 1 MiB left on the device
    assert a.can_fit(2 * MiB) == "ok"  # the limit allows it; only the device cannot supply it


def test_try_allocate_returns_none_and_allocate_raises_resource_exhausted_naming_the_figures() -> None:
    a = bfc(1 * MiB)
    a.allocate(768 * KiB)
    assert a.try_allocate(512 * KiB) is None
    with pytest.raises(ResourceExhaustedError) as info:
        a.allocate(512 * KiB)
    msg = str(info.value)
    assert isinstance(info.value, OpError) and info.value.error_code == 8
    for part in (
        "gpu0_bfc",
        "524288",
        "bytes_in_use=768.00 KiB",
        "bytes_limit=1.00 MiB",
        "largest_free_block",
    ):
        assert part in msg
    assert a.stats().num_failures == 2


def test_double_free_and_freeing_another_allocators_chunk_are_rejected() -> None:
    a, b = bfc(), bfc()
    c = a.allocate(100)
    with pytest.raises(ValueError, match="another allocator"):
        b.free(c)
    a.free(c)
    with pytest.raises(ValueError, match="double free"):
        a.free(c)
    d = a.allocate(100)  # reuses the memory; the stale handle still must not free it
    with pytest.raises(ValueError):
        a.free(c)
    assert d.in_use and a.lookup(d.address) is d
    a.check_invariants()


def test_stats_track_lifetime_peak_window_peak_largest_alloc_and_num_allocs() -> None:
    a = bfc()
    x, y = a.allocate(1 * MiB), a.allocate(3 * MiB)
    a.free(y)
    a.reset_peak()
    z = a.allocate(2 * MiB)
    s = a.stats()
    assert (s.peak_bytes_in_use, s.window_peak_bytes_in_use) == (4 * MiB, 3 * MiB)
    assert (s.num_allocs, s.largest_alloc_size, s.bytes_in_use) == (3, 3 * MiB, 3 * MiB)
    a.free(x)
    a.free(z)
    a.reset_peak()
    assert a.stats().window_peak_bytes_in_use == 0 and a.stats().peak_bytes_in_use == 4 * MiB


def test_stable_bytes_count_only_regions_holding_a_live_chunk() -> None:
    a = bfc(1 * GiB, allow_growth=True, extend=False)
    x, y = a.allocate(1 * MiB + 512), a.allocate(1 * MiB + 512)  # regions of 2 and 4 MiB
    assert (a.stats().pool_bytes, a.stats().stable_bytes) == (6 * MiB, 6 * MiB)
    a.free(x)
    assert a.stats().stable_bytes == 4 * MiB
    a.free(y)
    assert (a.stats().pool_bytes, a.stats().stable_bytes) == (6 * MiB, 0)


def test_fragmentation_is_zero_when_nothing_is_free_and_measures_scattered_free_space() -> None:
    a = bfc(1 * MiB)
    blocks = [a.allocate(256 * KiB) for _ in range(4)]
    assert a.stats().fragmentation == 0.0
    a.free(blocks[0])
    a.free(blocks[2])
    s = a.stats()
    assert (s.free_bytes, s.largest_free_block, s.fragmentation) == (512 * KiB, 256 * KiB, 0.5)


def test_can_fit_tells_fragmentation_from_oom() -> None:
    a = bfc(1 * MiB)
    blocks = [a.allocate(256 * KiB) for _ in range(4)]
    assert a.can_fit(1) == "OOM"
    a.free(blocks[0])
    a.free(blocks[2])
    assert a.can_fit(256 * KiB) == "ok"
    assert a.can_fit(512 * KiB) == "FRAGMENT"  # 512 KiB free, in two 256 KiB holes
    assert a.can_fit(768 * KiB) == "OOM"
    with pytest.raises(ResourceExhaustedError, match="fragmentation"):
        a.allocate(512 * KiB)


def test_empty_regions_are_released_when_a_large_request_needs_their_room() -> None:
    a = bfc(8 * MiB, allow_growth=True)
    small = [a.allocate(1 * MiB + 512) for _ in range(2)]  # regions of 2 and 4 MiB
    for c in small:
        a.free(c)
    assert a.can_fit(7 * MiB) == "ok"  # only after giving the two empty regions back
    big = a.allocate(7 * MiB)
    assert a.stats().num_regions == 1 and big.chunk_size == 7 * MiB
    a.check_invariants()


def test_without_garbage_collection_empty_regions_strand_the_limit() -> None:
    a = bfc(8 * MiB, allow_growth=True, garbage_collection=False, extend=False)
    for c in [a.allocate(1 * MiB + 512) for _ in range(2)]:
        a.free(c)
    assert a.can_fit(7 * MiB) == "FRAGMENT" and a.try_allocate(7 * MiB) is None


def test_lookup_finds_a_live_allocation_by_address_and_forgets_it_when_freed() -> None:
    a = bfc()
    c = a.allocate(300)
    assert a.lookup(c.address) is c and c.offset == c.address - c.region.base
    a.free(c)
    assert a.lookup(c.address) is None


def test_host_memory_allocations_are_writable_real_memory_that_does_not_overlap() -> None:
    a = BFCAllocator(HostMemory(), 8 * MiB, allow_growth=True, name="host")
    x, y = a.allocate(1000), a.allocate(3000)
    x.buffer()[:] = 1
    y.buffer()[:] = 2
    assert x.buffer().nbytes == 1000 and x.address % 256 == 0
    assert np.all(x.buffer() == 1) and np.all(y.buffer() == 2)
    with pytest.raises(TypeError, match="virtual"):
        bfc().allocate(10).buffer()


def test_virtual_address_space_hands_out_disjoint_ranges_and_merges_freed_ones() -> None:
    vas = VirtualAddressSpace(4 * MiB, base=1 << 32)
    r = [vas.alloc(1 * MiB) for _ in range(4)]
    assert [x.base for x in r] == [(1 << 32) + i * MiB for i in range(4)]
    with pytest.raises(MemoryError):
        vas.alloc(256)
    vas.free(r[1])
    vas.free(r[2])
    assert vas.alloc(2 * MiB).base == r[1].base
    with pytest.raises(ValueError, match="already freed"):
        vas.free(r[1])
    with pytest.raises(ValueError, match="multiple of 256"):
        vas.alloc(100)


def test_with_growth_in_place_the_pool_is_one_region_of_the_same_growth_steps() -> None:
    a = bfc(1 * GiB, allow_growth=True)
    live = [a.allocate(1 * MiB) for _ in range(2 + 4 + 8 + 16 + 32 + 64)]
    assert [r.size for r in a.sub_allocator.regions] == [126 * MiB] and a.stats().pool_bytes == 126 * MiB
    assert_consistent(a, live)
    b = bfc(10 * MiB, allow_growth=True)
    live = [b.allocate(1 * MiB) for _ in range(10)]
    assert [r.size for r in b.sub_allocator.regions] == [10 * MiB]
    assert b.try_allocate(1) is None and b.can_fit(1) == "OOM"


def _two_variables_through_copies(a: BFCAllocator) -> list[Allocation]:
    """Two 80 MiB variables, each initialised through an 80 MiB copy freed after the assign."""
    held = []
    for _ in range(2):
        copy = a.allocate(80 * MiB)
        held.append(a.allocate(80 * MiB))
        a.free(copy)
    return held


def test_two_80_MiB_variables_fed_through_80_MiB_copies_fit_a_256_MiB_pool_grown_in_place() -> None:
    a = bfc(256 * MiB, allow_growth=True)
    held = _two_variables_through_copies(a)
    assert_consistent(a, held)
    assert a.stats().num_regions == 1
    # separate 128 MiB growth regions cannot hold an 80 MiB block beside another (cudaMalloc's case)
    b = bfc(256 * MiB, allow_growth=True, extend=False)
    with pytest.raises(ResourceExhaustedError, match="no free block is large enough"):
        _two_variables_through_copies(b)


def test_without_garbage_collection_a_free_tail_still_grows_in_place() -> None:
    a = bfc(8 * MiB, allow_growth=True, garbage_collection=False)
    for c in [a.allocate(1 * MiB + 512) for _ in range(2)]:
        a.free(c)
    assert a.can_fit(7 * MiB) == "ok"
    assert_consistent(a, [a.allocate(7 * MiB)])


def test_a_region_whose_following_addresses_are_taken_gets_a_separate_one() -> None:
    space = VirtualAddressSpace(64 * MiB)
    a = BFCAllocator(space, 64 * MiB, allow_growth=True, name="gpu0_bfc")
    first = a.allocate(1 * MiB)  # a 2 MiB region at 0
    blocker = space.alloc(2 * MiB)  # someone else's range right after it
    second = a.allocate(3 * MiB)
    assert [r.size for r in space.regions] == [2 * MiB, 2 * MiB, 4 * MiB]
    assert second.region is not first.region
    assert_consistent(a, [first, second])
    space.free(blocker)
