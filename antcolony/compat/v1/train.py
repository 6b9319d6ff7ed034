"""``tf.train`` of the TF1 face: the optimizers and global step of ``ac.train``, checkpoints,
monitored sessions and their hooks, and the ``tf.train.Example`` protos (loaded on first use: they need the protobuf package)."""

from __future__ import annotations

from typing import Any

from antcolony.actors.basic_hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    StopAtStepHook,
)
from antcolony.actors.checkpoint_state import (
    CheckpointState,
    checkpoint_exists,
    get_checkpoint_state,
    latest_checkpoint,
)
from antcolony.actors.meta_graph import export_meta_graph, import_meta_graph
from antcolony.actors.monitored_session import (
    MonitoredSession,
    MonitoredTrainingSession,
    SingularMonitoredSession,
)
from antcolony.actors.saver import Saver
from antcolony.actors.server import Server, ServerDef
from antcolony.actors.session_creator import ChiefSessionCreator, Scaffold, WorkerSessionCreator
from antcolony.actors.session_run_hook import (
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from antcolony.actors.summary_hooks import StepCounterHook, SummarySaverHook
from antcolony.compat.v1.io import write_graph
from antcolony.graph.train import (
    AdadeltaOptimizer,
    AdagradOptimizer,
    AdamOptimizer,
    ClusterSpec,
    ExponentialMovingAverage,
    FtrlOptimizer,
    GradientDescentOptimizer,
    GreedyLoadBalancingStrategy,
    MomentumOptimizer,
    Optimizer,
    RMSPropOptimizer,
    byte_size_load_fn,
    cosine_decay,
    create_global_step,
    exponential_decay,
    get_global_step,
    get_or_create_global_step,
    inverse_time_decay,
    natural_exp_decay,
    piecewise_constant,
    polynomial_decay,
    replica_device_setter,
)

__all__ = [
    "AdadeltaOptimizer",
    "AdagradOptimizer",
    "AdamOptimizer",
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "CheckpointState",
    "ChiefSessionCreator",
    "ClusterSpec",
    "ExponentialMovingAverage",
    "FeedFnHook",
    "FinalOpsHook",
    "FtrlOptimizer",
    "GradientDescentOptimizer",
    "GreedyLoadBalancingStrategy",
    "LoggingTensorHook",
    "MomentumOptimizer",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "Optimizer",
    "RMSPropOptimizer",
    "Saver",
    "Scaffold",
    "SecondOrStepTimer",
    "Server",
    "ServerDef",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "SingularMonitoredSession",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
    "WorkerSessionCreator",
    "byte_size_load_fn",
    "checkpoint_exists",
    "cosine_decay",
    "create_global_step",
    "exponential_decay",
    "export_meta_graph",
    "get_checkpoint_state",
    "get_global_step",
    "get_or_create_global_step",
    "import_meta_graph",
    "inverse_time_decay",
    "latest_checkpoint",
    "natural_exp_decay",
    "piecewise_constant",
    "polynomial_decay",
    "replica_device_setter",
    "write_graph",
]

# tf.train.Example and its parts: protobuf messages (devices/data/example_proto.py).
_EXAMPLE_PROTOS = ("BytesList", "Example", "Feature", "FeatureList", "Features", "FloatList", "Int64List")


def __getattr__(name: str) -> Any:
    if name in _EXAMPLE_PROTOS:
        from antcolony.devices.data.example_proto import message_classes

        return message_classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXAMPLE_PROTOS})
