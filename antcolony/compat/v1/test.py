"""``tf.test``: TF1's unit-test helpers. ``TestCase`` is a ``unittest.TestCase`` whose tests each
start from a fresh default graph, with ``test_session`` / ``session`` / ``cached_session`` (a
session on that graph, made the default so ``Tensor.eval`` works) and the array assertions TF1
tests use; ``main`` runs the module's tests as ``unittest.main`` does."""

from __future__ import annotations

import contextlib
import re
import tempfile
import unittest
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from antcolony.actors.blocking.sync_session import Session
from antcolony.errors import OpError
from antcolony.graph.core import Graph, get_default_graph, reset_default_graph
from antcolony.graph.default_session import get_default_session

__all__ = ["TestCase", "get_temp_dir", "gpu_device_name", "is_built_with_cuda", "is_gpu_available", "main"]

_TEMP_DIR: list[str] = []


def get_temp_dir() -> str:
    """A folder for this process's tests, made once."""
    if not _TEMP_DIR:
        _TEMP_DIR.append(tempfile.mkdtemp(prefix="antcolony-test-"))
    return _TEMP_DIR[0]


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability: Any = None) -> bool:
    """Whether a real GPU backs ``/gpu:0`` (a simulated one does not count)."""
    return bool(gpu_device_name())


def gpu_device_name() -> str:
    try:
        import cupy

        return "/device:GPU:0" if cupy.cuda.runtime.getDeviceCount() > 0 else ""
    except Exception:
        return ""


def is_built_with_cuda() -> bool:
    return bool(gpu_device_name())


def main(argv: list[str] | None = None) -> None:
    """Run the calling module's tests (``unittest.main``); exits with their status."""
    unittest.main(module="__main__", argv=argv)


class TestCase(unittest.TestCase):
    """TF1's ``tf.test.TestCase``."""

    def setUp(self) -> None:
        super().setUp()
        reset_default_graph()
        self._cached: Session | None = None

    def tearDown(self) -> None:
        if getattr(self, "_cached", None) is not None:
            assert self._cached is not None
            self._cached.close()
            self._cached = None
        super().tearDown()

    def get_temp_dir(self) -> str:
        return get_temp_dir()

    @contextlib.contextmanager
    def session(
        self, graph: Graph | None = None, config: Any = None, use_gpu: bool = False, force_gpu: bool = False
    ) -> Iterator[Session]:
        """A new session on ``graph`` (the default graph when None), the default while open."""
        g = graph if graph is not None else get_default_graph()
        with Session(graph=g, config=config) as sess, g.as_default(), sess.as_default():
            yield sess

    @contextlib.contextmanager
    def cached_session(
        self, graph: Graph | None = None, config: Any = None, use_gpu: bool = False, force_gpu: bool = False
    ) -> Iterator[Session]:
        """One session per test, reused by every call in it (closed at tearDown)."""
        g = graph if graph is not None else get_default_graph()
        if self._cached is None or self._cached.graph is not g:
            if self._cached is not None:
                self._cached.close()
            self._cached = Session(graph=g, config=config)
        with g.as_default(), self._cached.as_default():
            yield self._cached

    def test_session(
        self, graph: Graph | None = None, config: Any = None, use_gpu: bool = False, force_gpu: bool = False
    ) -> contextlib.AbstractContextManager[Session]:
        """The deprecated name of ``cached_session``. unittest collects it as a test by its
        name; run so, it skips itself, as TF1's does."""
        if self.id().endswith(".test_session"):
            self.skipTest("Not a test.")
        return self.cached_session(graph, config, use_gpu, force_gpu)

    def evaluate(self, tensors: Any) -> Any:
        """The values of ``tensors`` in the default session (a cached one when none)."""
        sess = get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.cached_session() as cached:
            return cached.run(tensors)

    def _values(self, a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self._evaluated(a)), np.asarray(self._evaluated(b))

    def _evaluated(self, x: Any) -> Any:
        return self.evaluate(x) if hasattr(x, "graph") and hasattr(x, "op") else x

    def assertAllEqual(self, a: Any, b: Any, msg: str | None = None) -> None:
        x, y = self._values(a, b)
        self.assertEqual(x.shape, y.shape, msg or f"shape {x.shape} != {y.shape}")
        np.testing.assert_array_equal(x, y, err_msg=msg or "")

    def assertAllClose(
        self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, msg: str | None = None
    ) -> None:
        x, y = self._values(a, b)
        self.assertEqual(x.shape, y.shape, msg or f"shape {x.shape} != {y.shape}")
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=msg or "")

    def assertAllCloseAccordingToType(
        self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, **_: Any
    ) -> None:
        dtype = self._values(a, b)[0].dtype
        loose = 1e-3 if dtype == np.float16 else (1e-6 if dtype == np.float64 else max(rtol, 1e-6))
        self.assertAllClose(a, b, rtol=max(rtol, loose), atol=max(atol, loose))

    def assertNear(self, f1: float, f2: float, err: float, msg: str | None = None) -> None:
        self.assertTrue(abs(f1 - f2) <= err, msg or f"{f1} != {f2} +/- {err}")

    def assertArrayNear(self, farray1: Any, farray2: Any, err: float, msg: str | None = None) -> None:
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertNDArrayNear(self, ndarray1: Any, ndarray2: Any, err: float, msg: str | None = None) -> None:
        self.assertTrue(np.linalg.norm(np.asarray(ndarray1) - np.asarray(ndarray2)) <= err, msg)

    def assertShapeEqual(self, np_array: Any, tf_tensor: Any, msg: str | None = None) -> None:
        self.assertEqual(tuple(np.shape(np_array)), tuple(tf_tensor.get_shape().as_list()), msg)

    def assertDTypeEqual(self, target: Any, expected_dtype: Any) -> None:
        self.assertEqual(np.asarray(target).dtype, np.dtype(expected_dtype))

    def assertAllInRange(self, target: Any, lower: Any, upper: Any) -> None:
        x = np.asarray(self._evaluated(target))
        self.assertTrue(np.all((x >= lower) & (x <= upper)), f"values outside [{lower}, {upper}]: {x}")

    def assertAllGreater(self, a: Any, comparison_target: Any) -> None:
        self.assertTrue(np.all(np.asarray(self._evaluated(a)) > comparison_target))

    def assertAllLess(self, a: Any, comparison_target: Any) -> None:
        self.assertTrue(np.all(np.asarray(self._evaluated(a)) < comparison_target))

    def assertAllGreaterEqual(self, a: Any, comparison_target: Any) -> None:
        self.assertTrue(np.all(np.asarray(self._evaluated(a)) >= comparison_target))

    def assertAllLessEqual(self, a: Any, comparison_target: Any) -> None:
        self.assertTrue(np.all(np.asarray(self._evaluated(a)) <= comparison_target))

    @contextlib.contextmanager
    def assertRaisesOpError(
        self, expected_err_re_or_predicate: str | Callable[[BaseException], bool]
    ) -> Iterator[None]:
        """The block raises an OpError whose message matches the pattern (or the predicate)."""
        with self.assertRaises(OpError) as caught:
            yield
        check = expected_err_re_or_predicate
        ok = (
            check(caught.exception)
            if callable(check)
            else re.search(check, str(caught.exception)) is not None
        )
        self.assertTrue(ok, f"the OpError does not match {check!r}: {caught.exception}")
