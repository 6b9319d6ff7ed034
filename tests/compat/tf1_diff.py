"""Harness for the differential tests against TensorFlow 1 (``tests/compat/test_tf1_diff_*.py``).

A :class:`Case` holds one small graph, written once as ``build(tf, *xs)`` against a TF1-shaped
module: it is built and run in ``antcolony.compat.v1`` and in ``tensorflow.compat.v1`` (graph
mode, TF1 behaviour: ref variables, v1 control flow) on the same seeded numpy inputs, fed through
placeholders. The forward outputs are compared value, dtype and shape; for differentiable cases
the gradients of ``sum(w * out)`` (``w`` a fixed random array per output) with respect to every
floating input are compared too. TensorFlow is the reference.

Importing this module skips the importing test module when TensorFlow is not installed (the
``tf1`` extra of pyproject.toml).
"""

from __future__ import annotations

import gc
import importlib.util
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

# tf.compat.v1.layers exist only with Keras 2 (the tf-keras package); TF reads this switch on import.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tensorflow = pytest.importorskip("tensorflow")

import antcolony.compat.v1 as acv1  # noqa: E402 - only once TensorFlow is known to import

tf1 = tensorflow.compat.v1
tf1.disable_v2_behavior()  # TF1 semantics: ref variables, v1 control flow, graph mode
tf1.logging.set_verbosity(tf1.logging.ERROR)
# TF's import leaves ~300k Python objects that every full collection would walk (up to a second on
# a loaded 2-core machine), stalling the event loop of whichever test runs then (the listener's
# loop-latency tests allow 0.25 s). None of it is garbage we need back: park it out of reach.
gc.freeze()


@pytest.fixture(autouse=True, scope="module")
def park_tf_objects() -> Any:
    """After each differential module, collect its garbage (TF graphs are cycles) and freeze the
    rest, so later tests' collections do not walk TF's objects; modules import it to use it."""
    yield
    gc.collect()
    gc.freeze()


FRAMEWORKS = {"antcolony": acv1, "tensorflow": tf1}
TF_VERSION = tensorflow.__version__
_KERAS_3 = tuple(int(p) for p in TF_VERSION.split(".")[:2]) >= (2, 16)
needs_tf_layers = pytest.mark.skipif(
    _KERAS_3 and importlib.util.find_spec("tf_keras") is None,
    reason="tf.compat.v1.layers need Keras 2 (the tf-keras package) from TF 2.16 on",
)

Build = Callable[..., Any]


@dataclass(frozen=True)
class Case:
    """One compared graph: ``build(tf, *placeholders)`` returns a tensor or a list/tuple of them.

    ``grad`` compares gradients of the floating outputs with respect to the floating inputs;
    ``unknown_batch`` leaves the first axis of every placeholder unknown (``[None, ...]``), as the
    usual TF1 model's inputs; ``xfail`` names a known difference (the case is then strict-xfailed).
    """

    name: str
    build: Build
    inputs: tuple[np.ndarray, ...] = ()
    grad: bool = True
    rtol: float = 1e-5
    atol: float = 1e-6
    grad_rtol: float = 1e-4
    grad_atol: float = 1e-5
    xfail: str | None = None
    check_dtype: bool = True
    unknown_batch: bool = False
    marks: tuple[Any, ...] = ()


@dataclass
class Table:
    """The cases of one test module, in the order they were registered."""

    cases: list[Case] = field(default_factory=list)

    def case(self, name: str, *inputs: np.ndarray, **options: Any) -> Callable[[Build], Build]:
        """Decorator registering ``build`` as the case ``name`` on ``inputs``."""

        def register(build: Build) -> Build:
            if any(c.name == name for c in self.cases):
                raise ValueError(f"duplicate case {name!r}")
            self.cases.append(Case(name, build, tuple(np.asarray(a) for a in inputs), **options))
            return build

        return register

    def params(self) -> list[Any]:
        """The cases as pytest params, ids = case names, known differences strict-xfailed."""
        return [
            pytest.param(
                c,
                id=c.name,
                marks=[*c.marks, *([pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else [])],
            )
            for c in self.cases
        ]


# -- seeded inputs ---------------------------------------------------------------------------------


def rng(tag: str) -> np.random.Generator:
    """A generator seeded by ``tag``, so a case's inputs do not depend on which cases ran before."""
    return np.random.default_rng(zlib.crc32(tag.encode()))


def normal(*shape: int, tag: str = "normal", scale: float = 1.0) -> np.ndarray:
    return (rng(f"{tag}{shape}").standard_normal(shape) * scale).astype(np.float32)


def positive(*shape: int, tag: str = "positive", low: float = 0.5, high: float = 2.0) -> np.ndarray:
    return rng(f"{tag}{shape}").uniform(low, high, shape).astype(np.float32)


def ints(low: int, high: int, *shape: int, dtype: Any = np.int32, tag: str = "ints") -> np.ndarray:
    return rng(f"{tag}{shape}{low}{high}").integers(low, high, shape).astype(dtype)


def bools(*shape: int, tag: str = "bools") -> np.ndarray:
    return rng(f"{tag}{shape}").random(shape) < 0.5


# -- running one framework -------------------------------------------------------------------------


def _np_dtype(t: Any) -> np.dtype:
    return np.dtype(getattr(t.dtype, "as_numpy_dtype", t.dtype))


def _is_float(dtype: Any) -> bool:
    return np.issubdtype(np.dtype(dtype), np.floating)


def flatten(out: Any) -> list[Any]:
    """Tensors of a build result (a tensor, or a list/tuple/namedtuple of them), in order."""
    if isinstance(out, (list, tuple)):
        return [t for item in out for t in flatten(item)]
    return [out]


def _densify(fw: Any, grad: Any) -> Any:
    # the gradient of a gather is an IndexedSlices (in both): compared as the dense tensor
    if hasattr(grad, "indices") and hasattr(grad, "dense_shape"):
        return fw.convert_to_tensor(grad)
    return grad


@dataclass
class Result:
    """What one framework computed for a case: outputs, then the gradients with respect to the
    floating inputs and the trainable variables (None where there is no path), and those
    variables' names."""

    outputs: list[np.ndarray]
    grads: list[np.ndarray | None]
    variables: list[str]


def run_case(fw: Any, case: Case) -> Result:
    """Build ``case`` in framework ``fw`` and run it.

    The weights of ``sum(w * out)`` are fed through placeholders shaped like the outputs' static
    shapes (unknown where the output's shape depends on values, as boolean_mask), so the forward
    values are fetched first and the weights drawn for the shapes they have.
    """
    g = fw.Graph()
    with g.as_default():
        shapes = [[None, *a.shape[1:]] if case.unknown_batch and a.ndim else a.shape for a in case.inputs]
        xs = [
            fw.placeholder(a.dtype, shape, name=f"x{i}")
            for i, (a, shape) in enumerate(zip(case.inputs, shapes))
        ]
        outputs = flatten(case.build(fw, *xs))
        variables = sorted(fw.trainable_variables(), key=lambda v: v.name)
        wrt = [xs[i] for i, a in enumerate(case.inputs) if _is_float(a.dtype)] + variables
        weighted = [i for i, t in enumerate(outputs) if _is_float(_np_dtype(t))] if case.grad and wrt else []
        grads: list[Any] = []
        if weighted:
            ws = {i: fw.placeholder(outputs[i].dtype, outputs[i].shape, name=f"w{i}") for i in weighted}
            terms = [fw.reduce_sum(outputs[i] * w) for i, w in ws.items()]
            objective = fw.add_n(terms) if len(terms) > 1 else terms[0]
            grads = [_densify(fw, gr) for gr in fw.gradients(objective, wrt)]
        init = fw.group(fw.global_variables_initializer(), fw.local_variables_initializer())
    names = [v.name for v in variables]
    feed: dict[Any, Any] = dict(zip(xs, case.inputs))
    with fw.Session(graph=g) as sess:
        sess.run(init, feed)  # an initial value may be computed from an input
        out_values = [np.asarray(v) for v in sess.run(outputs, feed)]
        present = [gr for gr in grads if gr is not None]
        if not present:
            return Result(out_values, [None] * len(grads), names)
        for i, w in ws.items():
            feed[w] = (
                rng(f"{case.name}/w{i}").standard_normal(out_values[i].shape).astype(out_values[i].dtype)
            )
        got = iter(sess.run(present, feed))
    # None (no path from the input) is part of what is compared
    return Result(out_values, [None if gr is None else np.asarray(next(got)) for gr in grads], names)


def compare(case: Case) -> None:
    """Run ``case`` in both frameworks and assert antcolony agrees with TensorFlow."""
    ours, ref = run_case(acv1, case), run_case(tf1, case)
    assert ours.variables == ref.variables, "trainable variables differ"
    assert len(ours.outputs) == len(ref.outputs), f"{len(ours.outputs)} outputs, TF has {len(ref.outputs)}"
    for i, (a, r) in enumerate(zip(ours.outputs, ref.outputs)):
        assert_same(a, r, case.rtol, case.atol, f"output {i}", case.check_dtype)
    assert [g is None for g in ours.grads] == [g is None for g in ref.grads], (
        "inputs without a gradient differ"
    )
    for i, (a, r) in enumerate(zip(ours.grads, ref.grads)):
        if r is not None:
            assert_same(
                a,
                r,
                case.grad_rtol,
                case.grad_atol,
                f"gradient {i} (inputs, then variables)",
                case.check_dtype,
            )


def assert_same(ours: Any, ref: Any, rtol: float, atol: float, what: str, check_dtype: bool = True) -> None:
    ours, ref = np.asarray(ours), np.asarray(ref)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape}, TF {ref.shape}"
    if check_dtype:
        assert ours.dtype == ref.dtype, f"{what}: dtype {ours.dtype}, TF {ref.dtype}"
    if _is_float(ref.dtype):
        np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(ours, ref, err_msg=what)


def run_both(fn: Callable[[Any], Any]) -> dict[str, Any]:
    """``fn(tf)`` for each framework (for cases that drive their own sessions): name -> result."""
    return {name: fn(fw) for name, fw in FRAMEWORKS.items()}


def run_in_tf(graph_def: Any, fetches: Any, feed: dict[str, Any], init: str | None = None) -> Any:
    """TF1 runs ``graph_def`` (TF's GraphDef, or the bytes of one, as antcolony writes them):
    imported whole into a new graph, the op ``init`` run first when named, then ``fetches``."""
    if isinstance(graph_def, bytes):
        proto = tf1.GraphDef()
        proto.ParseFromString(graph_def)
        graph_def = proto
    g = tf1.Graph()
    with g.as_default():
        tf1.import_graph_def(graph_def, name="")
        with tf1.Session(graph=g) as sess:
            if init is not None:
                sess.run(init)
            return sess.run(fetches, feed)
