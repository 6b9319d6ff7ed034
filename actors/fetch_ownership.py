"""Which fetches a step copies before its caller gets them: a caller owns what it fetches.

A fetched array must not be memory anything else holds: not a variable's storage (writing
into it would change the variable, and the next checkpoint), not a feed, not a constant the
executor returns every run, not another fetch's value, and not read-only. Copying every fetch
would cost the hot path a copy per run, so the decision is made once per executor, at plan time,
from the graph and each kernel's ``Aliasing`` (devices/kernels/registry.py):

- a fetch produced off the host arrives through a device-to-host copy: new memory;
- a fed tensor is the caller's own array (a fed scalar is an immutable numpy scalar);
- a FRESH kernel makes new memory, a HELD kernel may return kept or read-only memory;
- an INPUTS kernel (the default: Identity, Reshape, Transpose, slices, control flow, ...) may
  return an input or a view of one, so it shares whatever its data inputs share.

Walking back from each fetch through INPUTS kernels gives the set of *origins* it may share
(FRESH outputs, device-to-host copies). A fetch is copied when the walk reaches a HELD output
or a fed array, or when it shares an origin with an earlier fetch of the step (the first keeps
the memory). Everything else is handed over as it is. The same tensor fetched twice is one
value, as in TF1.

A copy runs at memory bandwidth: arrays up to ``LARGE_COPY_BYTES`` are copied on the event loop
at step end (cheaper than a round trip to a thread), larger ones on a CPU worker thread
(``copy_arrays``, launched by the executor), so a step fetching hundreds of MiB does not stall
every other session of the loop for the copy's duration.

The contract this keeps: docs/design.md section 4 (and section 3, fetched values).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from antcolony.devices.kernels.registry import Aliasing
from antcolony.graph.core import Operation, Tensor
from antcolony.graph.passes import HOST


def fetches_to_copy(
    fetches: Sequence[Tensor],
    feeds: Sequence[Tensor],
    placement: dict[int, str],
    aliasing: Callable[[Operation], Aliasing],
) -> tuple[int, ...]:
    """Indices into ``fetches`` whose values the step copies before it succeeds."""
    fed = {id(t) for t in feeds}
    taken: set[int] = set()  # origins an earlier fetch hands over
    copies = []
    for j, t in enumerate(fetches):
        origins = _origins(t, fed, placement, aliasing)
        if origins is None or not origins.isdisjoint(taken):
            copies.append(j)
        else:
            taken |= origins
    return tuple(copies)


def _origins(
    fetch: Tensor,
    fed: set[int],
    placement: dict[int, str],
    aliasing: Callable[[Operation], Aliasing],
) -> set[int] | None:
    """The ids of the FRESH outputs and device-to-host copies ``fetch`` may share, or None when
    it may share a fed array or kept memory. Iterative: graphs may be 100,000 nodes deep, and
    loops make cycles (each tensor is visited once)."""
    origins: set[int] = set()
    seen = {id(fetch)}
    stack = [fetch]
    while stack:
        t = stack.pop()
        if id(t) in fed:
            if t._shape == ():  # fed scalars are immutable numpy scalars (actors/feeds.py)
                continue
            return None
        op = t.op
        if placement.get(id(op), HOST) != HOST:
            origins.add(id(t))  # a device-to-host copy
            continue
        kind = aliasing(op)
        if kind is Aliasing.HELD:
            return None
        if kind is Aliasing.FRESH or not op.inputs:
            origins.add(id(t))
            continue
        for x in op.inputs:
            if id(x) not in seen:
                seen.add(id(x))
                stack.append(x)
    return origins


#: Fetched arrays larger than this are copied off the event loop (see the module docstring).
LARGE_COPY_BYTES = 1 << 20


def own(values: list[Any], copies: tuple[int, ...]) -> list[int] | None:
    """Replace each array at ``copies`` in ``values`` by a writable copy of its own (scalars and
    non-arrays are immutable or not memory: left as they are), except arrays larger than
    ``LARGE_COPY_BYTES``: their indices are returned (None when there are none), for
    ``copy_arrays`` on a worker thread."""
    large: list[int] | None = None
    for j in copies:
        value = values[j]
        if isinstance(value, np.ndarray):
            if value.nbytes > LARGE_COPY_BYTES:
                if large is None:
                    large = []
                large.append(j)
            else:
                values[j] = value.copy()
    return large


def copy_arrays(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Writable copies of ``arrays`` (a CPU worker's kernel: numpy copies without the GIL)."""
    return [a.copy() for a in arrays]
