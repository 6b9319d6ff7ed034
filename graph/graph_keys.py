"""Collections: ``GraphKeys`` (the standard collection names, spelled as TF1 spells them, since
programs and tools rely on the exact strings) and the default graph's collection functions."""

from __future__ import annotations

from typing import Any

from .core import get_default_graph


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    GLOBAL_STEP = "global_step"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    SUMMARIES = "summaries"
    SAVERS = "savers"
    SAVEABLE_OBJECTS = "saveable_objects"
    TRAIN_OP = "train_op"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    # ``VARIABLES`` is TF1's deprecated alias of GLOBAL_VARIABLES.
    VARIABLES = GLOBAL_VARIABLES


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: Any, value: Any) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: str | None = None) -> list[Any]:
    """A copy of the default graph's collection ``key``; ``scope`` keeps items whose name matches
    that regex at the start."""
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list[Any]:
    return get_default_graph().get_collection_ref(key)
