"""``tf.train`` of the TF1 face: every name of ``ac.train`` (the same objects: optimizers, global
step, schedules, ``Saver`` and the checkpoint queries), plus what needs the blocking face:
monitored sessions and their hooks, ``write_graph``, and the ``tf.train.Example`` protos (loaded
on first use: they need the protobuf package)."""

from __future__ import annotations

import typing as _typing

from antcolony.actors.blocking.basic_hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    StopAtStepHook,
)
from antcolony.actors.blocking.coordinator import Coordinator, LooperThread, start_queue_runners
from antcolony.actors.blocking.monitored_session import (
    MonitoredSession,
    MonitoredTrainingSession,
    SingularMonitoredSession,
)
from antcolony.actors.blocking.server import Server, ServerDef
from antcolony.actors.blocking.session_creator import ChiefSessionCreator, Scaffold, WorkerSessionCreator
from antcolony.actors.blocking.session_run_hook import (
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from antcolony.actors.blocking.summary_hooks import StepCounterHook, SummarySaverHook
from antcolony.actors.blocking.supervisor import Supervisor
from antcolony.compat.v1._train_more import batch_join, global_step, match_filenames_once, shuffle_batch_join
from antcolony.compat.v1.io import write_graph
from antcolony.graph.train.input_pipeline import (
    QueueRunner,
    add_queue_runner,
    batch,
    input_producer,
    limit_epochs,
    range_input_producer,
    shuffle_batch,
    slice_input_producer,
    string_input_producer,
)
from antcolony.train import *  # noqa: F403 - ac.train's names, the same objects
from antcolony.train import __all__ as _async_names

__all__ = [
    *_async_names,
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "ChiefSessionCreator",
    "Coordinator",
    "FeedFnHook",
    "FinalOpsHook",
    "LoggingTensorHook",
    "LooperThread",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "QueueRunner",
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
    "Supervisor",
    "WorkerSessionCreator",
    "add_queue_runner",
    "batch",
    "batch_join",
    "global_step",
    "input_producer",
    "limit_epochs",
    "match_filenames_once",
    "range_input_producer",
    "shuffle_batch",
    "shuffle_batch_join",
    "slice_input_producer",
    "start_queue_runners",
    "string_input_producer",
    "write_graph",
]

# tf.train.Example and its parts: protobuf messages (devices/data/example_proto.py).
_EXAMPLE_PROTOS = ("BytesList", "Example", "Feature", "FeatureList", "Features", "FloatList", "Int64List")


def __getattr__(name: str) -> _typing.Any:
    if name in _EXAMPLE_PROTOS:
        from antcolony.devices.data.example_proto import message_classes

        return message_classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    dunders = (name for name in globals() if name.startswith("__"))
    return sorted({*dunders, *__all__, *_EXAMPLE_PROTOS})
