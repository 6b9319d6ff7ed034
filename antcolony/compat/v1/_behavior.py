"""The switches TF1 code written against TF 1.14+ or TF 2's ``tf.compat.v1`` calls first
(``tf.disable_v2_behavior()``, ``tf.disable_eager_execution()``, ...). antcolony always has TF1's
behaviour (graph mode, reference variables, v1 control flow), so the ``disable_*`` switches do
nothing and ``executing_eagerly()`` is False; asking for eager execution or TF2 behaviour is an
UnimplementedError saying so, not a silent different program."""

from __future__ import annotations

from typing import Any

from antcolony.errors import UnimplementedError

__all__ = [
    "disable_control_flow_v2",
    "disable_eager_execution",
    "disable_resource_variables",
    "disable_tensor_equality",
    "disable_v2_behavior",
    "disable_v2_tensorshape",
    "enable_eager_execution",
    "enable_v2_behavior",
    "executing_eagerly",
]


def disable_v2_behavior() -> None:
    """Nothing to do: antcolony.compat.v1 always behaves as TF1."""


def disable_eager_execution() -> None:
    """Nothing to do: antcolony always builds graphs."""


def disable_resource_variables() -> None:
    """Nothing to do: antcolony's variables are TF1's reference variables."""


def disable_control_flow_v2() -> None:
    """Nothing to do: antcolony's while_loop and cond are TF1's."""


def disable_tensor_equality() -> None:
    """Nothing to do: tensors compare by identity, as TF1's."""


def disable_v2_tensorshape() -> None:
    """Nothing to do: shapes index to ints or None, as TF1's with v2 TensorShape off."""


def executing_eagerly() -> bool:
    """False: antcolony runs graphs in sessions."""
    return False


def _refuse(what: str) -> UnimplementedError:
    return UnimplementedError(
        None,
        None,
        f"{what} is not supported: antcolony runs TF1 graphs in sessions; remove the call (TF1 "
        "programs run unchanged in graph mode)",
    )


def enable_eager_execution(*args: Any, **kwargs: Any) -> None:
    raise _refuse("tf.enable_eager_execution()")


def enable_v2_behavior() -> None:
    raise _refuse("tf.enable_v2_behavior()")
