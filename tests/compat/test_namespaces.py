"""Public namespaces hold only public names.

Every name a namespace shows (``dir()``, what a user's tab completion sees) is either a name TF1
has in the same namespace, read from ``tensorflow.compat.v1`` itself, or one of the few antcolony
extras listed below with why. Nothing of the implementation (helpers, ``np``, op builders,
submodules) may show through. The ``ac.`` and ``tf.`` twins are the same objects.
"""

from __future__ import annotations
import __future__

import re
import types
from typing import Any

import pytest

pytest.importorskip("tensorflow")

import antcolony as ac
import antcolony.compat.v1 as tf
import antcolony.errors

from .tf1_diff import tf1

# The namespaces both faces share, and those only the TF1 face has.
SHARED = (
    "",
    "data",
    "data.experimental",
    "dtypes",
    "errors",
    "image",
    "initializers",
    "layers",
    "linalg",
    "losses",
    "math",
    "metrics",
    "nn",
    "nn.rnn_cell",
    "random",
    "strings",
    "summary",
    "train",
)
TF_ONLY = ("compat", "gfile", "graph_util", "io", "logging", "python_io", "sparse")
CASES = [(face, path) for path in SHARED for face in ("ac", "tf")] + [("tf", path) for path in TF_ONLY]

# Names antcolony exports that TF1 does not have in that namespace, each with why.
_TOP_EXTRAS = {
    "SessionConfig": "antcolony's session settings (section 3 of docs/design.md); tf.ConfigProto maps onto it",
    "IndexedSlicesValue": "the fetched value of IndexedSlices (TF2's name; TF1 fetches the same)",
    "mark_for_recompute": "the manual memory optimizer: tensors to recompute in the backward pass",
    "recompute_hint": "the manual memory optimizer: a context whose ops are recomputed",
    "not_differentiable": "tf.NotDifferentiable in snake case: the async face's only spelling",
    "register_gradient": "tf.RegisterGradient in snake case: the async face's only spelling",
}
_RUNTIME_ERRORS = {
    name: "the runtime's own error, not a TF class (antcolony.errors only, never tf.errors)"
    for name in (
        "ActorDeadError",
        "ActorError",
        "ActorStartError",
        "AntColonyError",
        "AskTimeoutError",
        "AsyncOnlyError",
        "BlockingCallInEventLoopError",
        "ConfigError",
        "EngineError",
        "FileRefusedError",
        "GraphError",
        "GraphFinalizedError",
        "IncompleteConfigError",
        "InvalidFetchError",
        "NoDefaultSessionError",
        "SessionClosedError",
    )
}
# TF1 had these in tf.contrib.training, which is gone; replica_device_setter takes the strategy.
_PS_STRATEGY = {
    "GreedyLoadBalancingStrategy": "tf.contrib.training's ps strategy for replica_device_setter",
    "byte_size_load_fn": "tf.contrib.training's load function of GreedyLoadBalancingStrategy",
}
EXTRAS: dict[str, dict[str, dict[str, str]]] = {
    "ac": {
        "": {**_TOP_EXTRAS, "run": "runs a coroutine under uvloop (ac.run(main()))"},
        "errors": _RUNTIME_ERRORS,
        "initializers": {"get": "an initializer by name, as Keras' initializers.get (layers take names)"},
        "train": _PS_STRATEGY,
    },
    "tf": {
        "": _TOP_EXTRAS,
        "initializers": {"get": "an initializer by name, as Keras' initializers.get (layers take names)"},
        "train": _PS_STRATEGY,
    },
}


# tf.train's protobuf messages: listed by dir() but not in __all__ (a star import would load protobuf).
_EXAMPLE_PROTOS = {"BytesList", "Example", "Feature", "FeatureList", "Features", "FloatList", "Int64List"}


def _namespace(root: Any, path: str) -> Any:
    module = root
    for part in filter(None, path.split(".")):
        module = getattr(module, part)
    return module


def _shown(module: Any) -> set[str]:
    """The public names ``dir()`` shows, less ``annotations``: ``from __future__ import
    annotations`` binds it in every module of the project; it is a compiler directive, not an
    export."""
    return {
        name
        for name in dir(module)
        if not name.startswith("_") and not isinstance(getattr(module, name, None), __future__._Feature)
    }


def _tf1_names(path: str) -> set[str]:
    return {name for name in dir(_namespace(tf1, path)) if not name.startswith("_")}


@pytest.mark.parametrize(("face", "path"), CASES)
def test_a_namespace_shows_only_tf1_names_and_listed_extras(face: str, path: str) -> None:
    root = ac if face == "ac" else tf
    module = _namespace(root, path)
    extras = EXTRAS[face].get(path, {})
    where = f"{face}.{path}" if path else face
    leaked = sorted(_shown(module) - _tf1_names(path) - set(extras))
    assert not leaked, (
        f"{where} shows names that are neither TF1's ({'tf.compat.v1.' + path if path else 'tf.compat.v1'}) "
        f"nor in EXTRAS of {__name__}: {leaked}"
    )
    unused = sorted(set(extras) - _shown(module))
    assert not unused, f"EXTRAS lists names {where} does not have (delete them): {unused}"


@pytest.mark.parametrize(("face", "path"), CASES)
def test_a_namespace_lists_what_it_exports_and_every_listed_name_resolves(face: str, path: str) -> None:
    module = _namespace(ac if face == "ac" else tf, path)
    exported = set(module.__all__)
    missing = sorted(name for name in exported if not hasattr(module, name))
    assert not missing, f"{face}.{path} lists names it does not have: {missing}"
    # What dir() shows beyond __all__: nothing but the Example protos tf.train loads on first use.
    unlisted = _shown(module) - exported - (_EXAMPLE_PROTOS if (face, path) == ("tf", "train") else set())
    assert not unlisted, f"{face}.{path} shows names its __all__ does not list: {sorted(unlisted)}"


@pytest.mark.parametrize(
    "path", ["dtypes", "initializers", "layers", "losses", "nn", "nn.rnn_cell", "summary"]
)
def test_the_twins_are_one_module(path: str) -> None:
    assert _namespace(ac, path) is _namespace(tf, path)
    assert isinstance(_namespace(ac, path), types.ModuleType)


def test_tf_train_adds_the_blocking_extras_to_the_same_objects_as_ac_train() -> None:
    assert ac.train is not tf.train
    for name in ac.train.__all__:
        assert getattr(tf.train, name) is getattr(ac.train, name), name
    assert {"Saver", "latest_checkpoint", "AdamOptimizer"} <= set(ac.train.__all__)
    blocking = set(tf.train.__all__) - set(ac.train.__all__)
    assert {"MonitoredTrainingSession", "StopAtStepHook", "Scaffold"} <= blocking


def test_tf_errors_holds_tf_classes_and_antcolony_errors_keeps_the_runtime_ones() -> None:
    for name in tf.errors.__all__:
        assert getattr(tf.errors, name) is getattr(antcolony.errors, name), name
    for name in ("ActorDeadError", "EngineError", "SessionClosedError", "ConfigError"):
        assert not hasattr(tf.errors, name), name
        assert issubclass(getattr(antcolony.errors, name), Exception)
    assert ac.errors is antcolony.errors
    # Each class carries TF's error code: InvalidArgumentError.error_code == tf1.errors.INVALID_ARGUMENT.
    for name in tf.errors.__all__:
        cls = getattr(tf.errors, name)
        if isinstance(cls, type) and name != "OpError":
            code = re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Error")).upper()
            assert cls.error_code == getattr(tf1.errors, code), name


def test_tf_initializers_are_initializers_not_array_ops() -> None:
    # tf.initializers.zeros is TF's Zeros initializer class, not the tf.zeros op.
    for name in ("zeros", "ones", "constant", "random_normal", "glorot_uniform"):
        init = getattr(tf.initializers, name)()
        assert callable(init), name
    assert tf.initializers.zeros is tf.zeros_initializer
    assert tf.initializers.global_variables is tf.global_variables_initializer
