"""Differential test against TensorFlow 1: ``tf.math`` and the TF1 top-level spellings of its
newer functions (special functions, inverse and hyperbolic trigonometry, rounding, tests for
nan / inf, cumprod, bincount, count_nonzero, the *_no_nan forms, polyval, confusion_matrix...);
forward and gradient (see tf1_diff.py). Also: every name ``tf.math`` exports here is one TF1's
``tf.math`` has."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    Case,
    Table,
    compare,
    ints,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    positive,
)

T = Table()
X = normal(3, 4, tag="x")
UNIT = np.clip(normal(3, 4, tag="unit") * 0.4, -0.9, 0.9).astype(np.float32)
P = positive(3, 4, tag="p", low=0.3, high=6.0)
GT1 = positive(3, 4, tag="gt1", low=1.2, high=4.0)
HALVES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -3.7], np.float32)
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, 1.0, -2.0], np.float32)

for _name, _x in {
    "expm1": X,
    "erf": X,
    "erfc": X,
    "lgamma": P,
    "digamma": P,
    "tan": UNIT,
    "sinh": X,
    "cosh": X,
    "asin": UNIT,
    "acos": UNIT,
    "atan": X,
    "asinh": X,
    "acosh": GT1,
    "atanh": UNIT,
    "log_sigmoid": X * 10,
}.items():
    T.case(f"math_{_name}", _x, grad_rtol=1e-3, rtol=2e-5)(lambda tf, x, n=_name: getattr(tf.math, n)(x))
    T.case(f"top_level_{_name}", _x.astype(np.float64))(lambda tf, x, n=_name: getattr(tf, n)(x))
T.case("lgamma_negative", np.array([-0.5, -1.5, -2.3, 0.2, 7.5], np.float32))(lambda tf, x: tf.lgamma(x))
T.case("digamma_negative", np.array([-0.5, -1.5, -2.3, 0.2, 7.5, 30.0], np.float64))(
    lambda tf, x: tf.digamma(x)
)
for _order in (1, 2, 3):
    T.case(f"polygamma_{_order}", P.astype(np.float64))(
        lambda tf, x, k=_order: tf.math.polygamma(tf.constant(float(k), tf.float64), x)
    )
T.case("atan2", X, normal(3, 4, tag="atan2"))(lambda tf, y, x: tf.math.atan2(y, x))
for _name in ("ceil", "rint", "round"):
    T.case(f"{_name}", HALVES)(lambda tf, x, n=_name: getattr(tf.math, n)(x))
T.case("round_int", ints(-5, 5, 6))(lambda tf, x: tf.round(x))
for _name in ("is_nan", "is_inf", "is_finite"):
    T.case(_name, SPECIAL)(lambda tf, x, n=_name: [getattr(tf.math, n)(x), getattr(tf, n)(x)])

for _ex in (False, True):
    for _rev in (False, True):
        T.case(f"cumprod_ex{int(_ex)}_rev{int(_rev)}", P, grad_rtol=1e-3)(
            lambda tf, x, e=_ex, r=_rev: tf.math.cumprod(x, axis=1, exclusive=e, reverse=r)
        )
        T.case(f"cumsum_ex{int(_ex)}_rev{int(_rev)}", X)(
            lambda tf, x, e=_ex, r=_rev: tf.math.cumsum(x, axis=0, exclusive=e, reverse=r)
        )
T.case("cumprod_int", ints(1, 4, 2, 5))(lambda tf, x: tf.cumprod(x, axis=-1))
T.case("bincount", ints(0, 6, 20))(lambda tf, x: tf.math.bincount(x))
T.case("bincount_min_max", ints(0, 6, 20))(
    lambda tf, x: tf.bincount(x, minlength=9, maxlength=4, dtype=tf.int64)
)
T.case("bincount_minlength", ints(0, 6, 20))(lambda tf, x: tf.bincount(x, minlength=9))
# TF1 registers no gradient for (Dense)Bincount
T.case("bincount_weights", ints(0, 6, 20), positive(20), grad=False)(
    lambda tf, x, w: tf.math.bincount(x, weights=w)
)
T.case("count_nonzero", ints(-1, 2, 3, 4))(lambda tf, x: tf.math.count_nonzero(x))
T.case("count_nonzero_axis", ints(-1, 2, 3, 4))(
    lambda tf, x: tf.count_nonzero(x, axis=1, keepdims=True, dtype=tf.int32)
)
T.case("count_nonzero_float", np.array([[0.0, 1.5], [0.0, 0.0]], np.float32))(
    lambda tf, x: tf.count_nonzero(x, 0)
)
T.case("reduce_variance", X)(lambda tf, x: tf.math.reduce_variance(x, axis=1))
T.case("reduce_std", X)(lambda tf, x: tf.math.reduce_std(x, axis=0, keepdims=True))
T.case("reduce_euclidean_norm", X)(lambda tf, x: tf.math.reduce_euclidean_norm(x, 1))
T.case("polyval", X)(lambda tf, x: tf.math.polyval([2.0, -1.0, 0.5, 3.0], x))
T.case("polyval_tensors", X, normal(4, tag="c"))(lambda tf, x, c: tf.math.polyval([c[0], c[1], c[2]], x))
_ZEROS = np.array([[0.0, 2.0, -3.0], [0.0, 0.0, 5.0]], np.float32)
T.case("divide_no_nan", normal(2, 3, tag="n"), _ZEROS)(lambda tf, x, y: tf.math.divide_no_nan(x, y))
T.case("div_no_nan", normal(2, 3, tag="n"), _ZEROS)(lambda tf, x, y: tf.div_no_nan(x, y))
T.case("multiply_no_nan", np.array([np.inf, np.nan, 2.0], np.float32), np.array([0.0, 0.0, 3.0], np.float32))(
    lambda tf, x, y: tf.math.multiply_no_nan(x, y)
)
T.case("reciprocal_no_nan", _ZEROS)(lambda tf, x: tf.math.reciprocal_no_nan(x))
T.case("xlogy", _ZEROS, positive(2, 3, tag="xl"))(lambda tf, x, y: tf.math.xlogy(x, y))
T.case("xdivy", _ZEROS, positive(2, 3, tag="xd"))(lambda tf, x, y: tf.math.xdivy(x, y))
T.case("scalar_mul", X)(lambda tf, x: [tf.math.scalar_mul(2.5, x), tf.scalar_mul(tf.constant(-1.5), x)])
T.case("zero_fraction", _ZEROS)(lambda tf, x: tf.math.zero_fraction(x))
for _name in ("is_non_decreasing", "is_strictly_increasing"):
    for _label, _v in {"up": [1, 2, 2, 5], "strict": [1, 2, 3, 5], "down": [3, 2, 4, 5]}.items():
        T.case(f"{_name}_{_label}", np.array(_v, np.int32))(lambda tf, x, n=_name: getattr(tf.math, n)(x))
T.case("confusion_matrix", ints(0, 4, 30, tag="l"), ints(0, 4, 30, tag="p"))(
    lambda tf, lab, pred: tf.math.confusion_matrix(lab, pred, num_classes=4)
)
T.case("confusion_matrix_weights", ints(0, 3, 30, tag="l"), ints(0, 3, 30, tag="p"), positive(30, tag="cw"))(
    lambda tf, lab, pred, w: tf.confusion_matrix(lab, pred, num_classes=3, weights=w, dtype=tf.float32)
)
# re-exports that already existed at the top level
T.case("reexports", X, P)(
    lambda tf, x, p: [
        tf.math.log1p(p),
        tf.math.reduce_logsumexp(x, 1),
        tf.math.squared_difference(x, p),
        tf.math.softplus(x),
        tf.math.top_k(x, 2).values,
        tf.math.segment_sum(x, [0, 0, 1]),
        tf.math.floormod(x, p),
    ]
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


def test_math_namespace_exports_only_tf1_math_names() -> None:
    ours, ref = FRAMEWORKS["antcolony"].math, FRAMEWORKS["tensorflow"].math
    extra = sorted(n for n in ours.__all__ if not hasattr(ref, n))
    assert not extra, f"tf.math names TF1 does not have: {extra}"
    assert sorted(n for n in dir(ours) if not n.startswith("_") and n != "annotations") == sorted(
        ours.__all__
    )
