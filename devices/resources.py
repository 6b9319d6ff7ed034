"""Per-session state kernels use: variable values and random generators."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from antcolony.errors import FailedPreconditionError, InvalidArgumentError


class VarRef:
    """What a VariableV2 kernel outputs: a handle to one variable's value in a VariableStore."""

    __slots__ = ("store", "name", "op")

    #: counted as one element when a node weighs its inputs (actors/kernel_size.py ``input_elements``)
    size = 1

    def __init__(self, store: VariableStore, name: str, op: Any) -> None:
        self.store = store
        self.name = name
        self.op = op

    def read(self) -> Any:
        try:
            return self.store.values[self.name]
        except KeyError:
            raise FailedPreconditionError(
                None,
                self.op,
                f"Attempting to use uninitialized value {self.name}; run ac.global_variables_initializer() "
                "(or the variable's initializer) first",
            ) from None

    def write(self, value: Any) -> Any:
        if self.store.released:
            return value  # a write by a step cut short by close(): kept by nobody
        memory = self.store.memories.get(self.name)
        if memory is not None:
            value = memory.account(value)
        self.store.values[self.name] = value
        return value

    def mutable(self) -> Any:
        """The stored array, for an update in place. A stored value handed out is never changed:
        while anything besides the store holds it (a read still in flight, a fetched result, a
        view) or it is not an owning writable array, a copy is stored and returned instead.

        Callers hold the variable's engine write (Apply*/Scatter* ops have ref inputs), so no other
        update interleaves. A host read starting during the update is not ordered by the engine
        (host reads bypass it) and may see rows of both versions, as TF1's unlocked ref variables.
        """
        value, in_place = self.update_source()
        if in_place:
            return value
        # Held, not an owning writable array, or in host fallback memory (updated in place it
        # would stay there for good): a copy is stored, allocated anew (on the GPU when the limit
        # allows it again, the host memory then freed). A numpy scalar (from arithmetic on 0-d
        # arrays) becomes a 0-d array.
        return self.write(np.array(value) if isinstance(value, np.generic) else value.copy())

    def update_source(self) -> tuple[Any, bool]:
        """(the stored array, whether an update may write into it). False while a reader holds it
        or it is not an owning writable array (as ``mutable`` copies then): the caller writes the
        update into a fresh array in the same pass and stores it with ``write``, so no pass
        copies the old value first and what a reader holds never changes.

        Callers hold the variable's engine write, as for ``mutable``."""
        values = self.store.values
        try:
            value = values[self.name]
        except KeyError:
            return self.read(), False  # raises the uninitialized-value error
        if value.__class__ is not np.ndarray and isinstance(value, np.generic):
            return value, False  # a numpy scalar (from arithmetic on 0-d arrays) is immutable
        if sys.getrefcount(value) > _HELD_BY_STORE_AND_LOCAL or not _owns_writable(value):
            return value, False
        memory = self.store.memories.get(self.name)
        # in host fallback memory: a fresh array is allocated on the GPU when the limit allows
        return value, memory is None or memory.is_device_resident(value) is not False

    @property
    def initialized(self) -> bool:
        return self.name in self.store.values


def _refs_held(values: dict[str, Any], name: str) -> int:
    value = values[name]
    return sys.getrefcount(value)


# What ``sys.getrefcount`` reads in ``mutable`` for a value nothing but the store holds (its dict
# and the local variable; the interpreter's own temporary references differ between versions,
# so it is measured by a function of the same shape rather than assumed).
_HELD_BY_STORE_AND_LOCAL = _refs_held({"x": object()}, "x")


def _owns_writable(value: Any) -> bool:
    if value.__class__ is np.ndarray:
        flags = value.flags
        return value.base is None and flags.c_contiguous and flags.writeable
    other = getattr(value, "flags", None)  # cupy: always writable
    return other is not None and other.c_contiguous and getattr(value, "base", None) is None


class VariableStore:
    """Variable values of one session, keyed by the variable's shared name."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        # name -> the GPU memory holding the variable (absent on the host): its ``account``
        # charges a written value, its ``is_device_resident`` tells host fallback apart
        self.memories: dict[str, Any] = {}
        self.released = False

    def release(self) -> None:
        """Drop every value (the session closed); later writes are not kept."""
        self.released = True
        self.values.clear()
        self.memories.clear()

    def ref(self, name: str, op: Any) -> VarRef:
        return VarRef(self, name, op)


class SessionResources:
    """Resources one session's kernels share (variables, per-op random generators)."""

    def __init__(self, seed: int | None = None) -> None:
        self.variables = VariableStore()
        # Dependency-engine vars of this session's variables, by shared name.
        self.engine_vars: dict[str, Any] = {}
        self._rngs: dict[str, np.random.Generator] = {}
        self._seed = seed
        # Dataset iterators (devices/data/iterator_resource.py) by shared name: each may own
        # pipeline threads, stopped when the session releases its resources.
        self.iterators: dict[str, Any] = {}
        # TF1 queues and readers (devices/data/queue_resource.py) by shared name: waiting
        # dequeues end when the session releases its resources.
        self.queues: dict[str, Any] = {}

    def release(self) -> None:
        """The session closed: drop the variables' values now. Kernels of the session's executors
        reference these resources, and whoever still holds an executor (a callable from
        ``make_callable``, the traceback of an error a caller kept) must not hold their memory."""
        self.variables.release()
        self.engine_vars.clear()
        self._rngs.clear()
        iterators, self.iterators = self.iterators, {}
        for it in iterators.values():
            it.close()
        queues, self.queues = self.queues, {}
        for q in queues.values():
            q.release()

    def rng_for(self, op: Any) -> np.random.Generator:
        """A generator per random op, seeded from the graph and op seeds when given (as TF)."""
        gen = self._rngs.get(op.name)
        if gen is None:
            graph_seed = op.graph.seed
            op_seed = op.attrs.get("seed")
            if graph_seed is None and op_seed is None:
                gen = np.random.default_rng()
            else:
                gen = np.random.default_rng([graph_seed or 87654321, op_seed or 0])
            self._rngs[op.name] = gen
        return gen


def check_ref(value: Any, op: Any) -> VarRef:
    if not isinstance(value, VarRef):
        raise InvalidArgumentError(None, op, f"{op.name} expects a variable reference as its first input")
    return value
