"""Checks of what a caller hands ``Session.run`` besides the fetches: the feed_dict, options,
run_metadata. A wrong type or an ambiguous feed is the caller's mistake, reported before
anything runs as an ``InvalidArgumentError`` saying what to pass instead, never as an
AttributeError from deep inside the session."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from antcolony.actors.run_options import RunMetadata, RunOptions
from antcolony.errors import InvalidArgumentError
from antcolony.graph.core import Tensor
from antcolony.graph.sparse_tensor import SparseTensor, SparseTensorValue

__all__ = ["check_run_options", "collect_feeds"]


def _kind(value: Any) -> str:
    return type(value).__name__


def check_run_options(options: Any, run_metadata: Any) -> None:
    """Raise when ``options`` is not None or an ``ac.RunOptions``, or ``run_metadata`` not None or
    an ``ac.RunMetadata``."""
    if options is not None and not isinstance(options, RunOptions):
        raise InvalidArgumentError(
            None,
            None,
            f"options is {_kind(options)} {options!r:.60}; pass an ac.RunOptions(trace_level=..., "
            "timeout_in_ms=...) or None",
        )
    if run_metadata is not None and not isinstance(run_metadata, RunMetadata):
        raise InvalidArgumentError(
            None,
            None,
            f"run_metadata is {_kind(run_metadata)} {run_metadata!r:.60}; pass an ac.RunMetadata() or None",
        )


def collect_feeds(
    feed_dict: Any,
    resolve: Callable[[Any], Tensor],
    convert: Callable[[Tensor, Any], Any],
) -> dict[Tensor, Any]:
    """``{tensor: converted value}`` from a feed_dict whose keys are tensors or their names.

    Raises when ``feed_dict`` is not a mapping (a list of pairs is a common slip) and when two
    keys name one tensor (``x`` and ``"x:0"``): which value should win is the caller's call.
    """
    feeds: dict[Tensor, Any] = {}
    if feed_dict is None:
        return feeds
    if not isinstance(feed_dict, Mapping):
        hint = (
            " (a list of (tensor, value) pairs? wrap it in dict(...))"
            if isinstance(feed_dict, (list, tuple))
            else ""
        )
        raise InvalidArgumentError(
            None,
            None,
            f"feed_dict is {_kind(feed_dict)}{hint}; pass a dict mapping tensors or tensor names "
            "to values, e.g. {x: value}",
        )
    keys: dict[Tensor, Any] = {}
    for key, value in _leaf_pairs(feed_dict.items()):
        t = resolve(key)
        if t in keys:
            raise InvalidArgumentError(
                None,
                t.op,
                f"tensor '{t.name}' is fed twice in one feed_dict, as {keys[t]!r:.60} and {key!r:.60}; "
                "feed it once",
            )
        keys[t] = key
        feeds[t] = convert(t, value)
    return feeds


def _leaf_pairs(items: Any) -> Any:
    """The feed_dict's (tensor key, value) pairs, with tuple keys taken apart as TF1 does: a key
    that is a (nested, named) tuple of tensors takes a value of the same structure, e.g. an RNN
    state ``LSTMStateTuple`` fed the state fetched from the step before."""
    stack = list(items)[::-1]
    while stack:
        key, value = stack.pop()
        if isinstance(key, SparseTensor):
            # a sparse placeholder: its three tensors take a SparseTensorValue's three parts
            key = (key.indices, key.values, key.dense_shape)
            if isinstance(value, SparseTensorValue):
                value = tuple(value)
        if not isinstance(key, tuple):
            yield key, value
            continue
        if not isinstance(value, (tuple, list)) or len(value) != len(key):
            got = f"{_kind(value)} of {len(value)}" if isinstance(value, (tuple, list)) else _kind(value)
            raise InvalidArgumentError(
                None,
                None,
                f"feed_dict key {key!r:.80} is a tuple of {len(key)}; its value must be a tuple or "
                f"list of the same structure, got {got}",
            )
        stack.extend(reversed(list(zip(key, value))))
