"""``tf.train.SyncReplicasOptimizer``: synchronous training of between-graph replicas.

How the rounds work here (variables on ps tasks are pulled before a worker's step and its
changes pushed after it, actors/remote_variables.py): a worker's push of a ps variable is one
replica's contribution to the round of that variable's current version; once
``replicas_to_aggregate`` replicas have pushed, the ps applies the mean of their changes once and
the variable's version advances; a push computed from an older version is stale and dropped, as
TF drops stale gradients. Each worker's step returns when the rounds it joined are applied (TF's
sync token queue), or fails after ``SYNC_TIMEOUT_S`` naming the ps and the round (a replica that
died). The mean of the replicas' changes is TF's update from the mean gradient for gradient
descent and momentum-free linear rules; for Adam, RMSProp and the like it is the mean of each
replica's step from the same values, close to TF's step from the mean gradient but not equal.

Without a ps (one process) the wrapped optimizer runs as is. The queue-runner and token API TF1
programs call (``get_chief_queue_runner``, ``get_init_tokens_op``, ``chief_init_op``,
``local_step_init_op``, ``ready_for_local_init_op``, ``make_session_run_hook``) exists so they run
unchanged; the rounds need none of it.
"""

from __future__ import annotations

from typing import Any

from ..core import Operation
from ..ops.control import no_op
from .optimizer import Optimizer

__all__ = ["SYNC_REPLICAS_COLLECTION", "SyncReplicasOptimizer"]

#: graph collection of the replicas_to_aggregate of every SyncReplicasOptimizer's train op; a
#: worker session whose graph has one pushes its ps variables as round contributions
SYNC_REPLICAS_COLLECTION = "__antcolony_sync_replicas"


class _NoQueueRunner:
    """The chief queue runner TF1 programs start: no threads (the ps runs the rounds)."""

    def create_threads(
        self, sess: Any, coord: Any = None, daemon: bool = False, start: bool = False
    ) -> list[Any]:
        return []


class SyncReplicasOptimizer(Optimizer):
    """Wraps ``opt``; its ``apply_gradients`` op makes every worker's step a contribution to a
    synchronous round of ``replicas_to_aggregate`` replicas (see the module docstring)."""

    def __init__(
        self,
        opt: Optimizer,
        replicas_to_aggregate: int,
        total_num_replicas: int | None = None,
        variable_averages: Any = None,
        variables_to_average: Any = None,
        use_locking: bool = False,
        name: str = "sync_replicas",
    ) -> None:
        if replicas_to_aggregate < 1:
            raise ValueError(
                f"SyncReplicasOptimizer: replicas_to_aggregate must be >= 1, got {replicas_to_aggregate}"
            )
        if variable_averages is not None:
            raise NotImplementedError(
                "SyncReplicasOptimizer(variable_averages=...) is not supported: apply the "
                "ExponentialMovingAverage in the train op instead"
            )
        super().__init__(use_locking, name)
        self._opt = opt
        self._replicas_to_aggregate = int(replicas_to_aggregate)
        self._total_num_replicas = int(total_num_replicas or replicas_to_aggregate)
        self._ops: dict[str, Operation] = {}

    def compute_gradients(self, *args: Any, **kwargs: Any) -> Any:
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(
        self, grads_and_vars: Any, global_step: Any = None, name: str | None = None
    ) -> Operation:
        train_op = self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)
        graph = train_op.graph
        graph.add_to_collection(SYNC_REPLICAS_COLLECTION, self._replicas_to_aggregate)
        with graph.as_default(), graph.name_scope(self._name):
            for op_name in ("chief_init_op", "local_step_init_op", "ready_for_local_init_op", "sync_init_op"):
                self._ops[op_name] = no_op(name=op_name)
        return train_op

    def _op(self, name: str) -> Operation:
        if name not in self._ops:
            raise ValueError(
                f"SyncReplicasOptimizer.{name} exists once apply_gradients (or minimize) has been called"
            )
        return self._ops[name]

    @property
    def chief_init_op(self) -> Operation:
        return self._op("chief_init_op")

    @property
    def local_step_init_op(self) -> Operation:
        return self._op("local_step_init_op")

    @property
    def ready_for_local_init_op(self) -> Operation:
        return self._op("ready_for_local_init_op")

    def get_init_tokens_op(self, num_tokens: int = -1) -> Operation:
        return self._op("sync_init_op")

    def get_chief_queue_runner(self) -> _NoQueueRunner:
        self._op("chief_init_op")
        return _NoQueueRunner()

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1) -> Any:
        """A hook for MonitoredTrainingSession's ``hooks`` (it does nothing: the ps runs the rounds)."""
        return _NoHook()

    def get_slot(self, var: Any, name: str) -> Any:
        return self._opt.get_slot(var, name)

    def get_slot_names(self) -> list[str]:
        return self._opt.get_slot_names()

    def variables(self) -> list[Any]:
        return self._opt.variables()


class _NoHook:
    """SessionRunHook's protocol, doing nothing."""

    def begin(self) -> None:
        return None

    def after_create_session(self, session: Any, coord: Any) -> None:
        return None

    def before_run(self, run_context: Any) -> None:
        return None

    def after_run(self, run_context: Any, run_values: Any) -> None:
        return None

    def end(self, session: Any) -> None:
        return None
