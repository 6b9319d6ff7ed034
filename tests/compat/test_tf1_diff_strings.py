"""Differential test against TensorFlow 1: string ops (``tf.strings``, ``tf.string_split`` and
the other top-level spellings); outputs compared value for value (see tf1_diff.py), sparse
results as their three parts. Errors for what TF1 refuses at run time are checked too."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    FRAMEWORKS,
    Case,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
)

acv1 = FRAMEWORKS["antcolony"]


def strings(*items: str | bytes) -> np.ndarray:
    arr = np.empty(len(items), dtype=object)
    arr[:] = [s.encode() if isinstance(s, str) else s for s in items]
    return arr


TEXT = strings("hello world", "  a  b\tc ", "", "one,two,,three", "x", "ünïcode text")
NUMS = strings("1.5", "-2", "3e4", " 7 ", "inf", "0.125")
INTS = strings("12", "-7", "2147483647", "0", " 42")
GRID = TEXT.reshape(2, 3)


def parts(sp) -> list:
    return [sp.indices, sp.values, sp.dense_shape]


T = Table()
T.case("string_split_default", TEXT)(lambda tf, x: parts(tf.string_split(x)))
T.case("string_split_chars", TEXT)(lambda tf, x: parts(tf.string_split(x, ",t ")))
T.case("string_split_keep_empty", TEXT)(lambda tf, x: parts(tf.string_split(x, ",", skip_empty=False)))
T.case("string_split_bytes", TEXT[:3])(lambda tf, x: parts(tf.string_split(x, "")))
T.case("strings_split_whitespace", TEXT)(lambda tf, x: parts(tf.strings.split(x)))
T.case("strings_split_sep", TEXT)(lambda tf, x: parts(tf.strings.split(x, sep=",")))
T.case("strings_split_multichar_sep", TEXT)(lambda tf, x: parts(tf.strings.split(x, sep="o ")))
T.case("strings_split_maxsplit", TEXT)(lambda tf, x: parts(tf.strings.split(x, sep=" ", maxsplit=1)))
T.case("strings_split_ws_maxsplit", TEXT)(lambda tf, x: parts(tf.strings.split(x, maxsplit=1)))
T.case("join", TEXT, TEXT[::-1].copy())(lambda tf, x, y: tf.strings.join([x, "-", y], separator="|"))
T.case("string_join", GRID)(lambda tf, x: tf.string_join([x, x]))
T.case("reduce_join_all", GRID)(lambda tf, x: tf.strings.reduce_join(x))
T.case("reduce_join_axis", GRID)(lambda tf, x: tf.reduce_join(x, axis=0, separator=", "))
T.case("reduce_join_keepdims", GRID)(lambda tf, x: tf.strings.reduce_join(x, axis=-1, keep_dims=True))
T.case("length", TEXT)(lambda tf, x: tf.strings.length(x))
T.case("length_utf8", TEXT)(lambda tf, x: tf.strings.length(x, unit="UTF8_CHAR"))
T.case("substr", TEXT[:2])(lambda tf, x: tf.strings.substr(x, 1, 4))
T.case("substr_negative", TEXT[:2])(lambda tf, x: tf.substr(x, -3, 2))
T.case("substr_vectors", TEXT[:2])(
    lambda tf, x: tf.strings.substr(x, tf.constant([0, 2]), tf.constant([20, 3]))
)
T.case("substr_utf8", TEXT[5:])(lambda tf, x: tf.strings.substr(x, 1, 3, unit="UTF8_CHAR"))
T.case("regex_replace", TEXT)(lambda tf, x: tf.strings.regex_replace(x, "[aeiou]+", "_"))
T.case("regex_replace_first", TEXT)(lambda tf, x: tf.regex_replace(x, "o", "0", replace_global=False))
T.case("regex_replace_groups", TEXT)(lambda tf, x: tf.strings.regex_replace(x, r"(\w+) (\w+)", r"\2 \1 \0"))
T.case("regex_full_match", TEXT)(lambda tf, x: tf.strings.regex_full_match(x, r"[a-z ]+"))
T.case("strip", TEXT)(lambda tf, x: tf.strings.strip(x))
T.case("string_strip", GRID)(lambda tf, x: tf.string_strip(x))
T.case("lower_upper", strings("MiXeD Case", "ÄB"))(lambda tf, x: [tf.strings.lower(x), tf.strings.upper(x)])
T.case("upper_utf8", strings("mixed ä"))(lambda tf, x: tf.strings.upper(x, encoding="utf-8"))
for _dt in ("float32", "float64"):
    T.case(f"to_number_{_dt}", NUMS)(lambda tf, x, d=_dt: tf.strings.to_number(x, out_type=getattr(tf, d)))
for _dt in ("int32", "int64"):
    T.case(f"string_to_number_{_dt}", INTS)(
        lambda tf, x, d=_dt: tf.string_to_number(x, out_type=getattr(tf, d))
    )
T.case("string_to_number_default", NUMS)(lambda tf, x: tf.string_to_number(x))
F = np.array([1.5, -2.25, 1e-7, 123456.789, 0.0], np.float32)
_FORMATS = {
    "default": {},
    "precision": {"precision": 2},
    "scientific": {"scientific": True},
    "shortest": {"shortest": True},
    "width_fill": {"width": 12, "fill": "0"},
    "width_left": {"width": 12, "fill": "-", "precision": 1},
}
for _n, _kw in _FORMATS.items():
    T.case(f"as_string_float_{_n}", F, grad=False)(lambda tf, x, kw=_kw: tf.strings.as_string(x, **kw))
T.case("as_string_float64", F.astype(np.float64), grad=False)(lambda tf, x: tf.as_string(x))
T.case("as_string_int", np.array([3, -40, 0], np.int64))(lambda tf, x: tf.as_string(x, width=5))
T.case("as_string_bool", np.array([True, False]))(lambda tf, x: tf.as_string(x))
T.case("as_string_normal", normal(2, 3), grad=False)(lambda tf, x: tf.as_string(x, precision=3))


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)


def _run(tf, build):
    g = tf.Graph()
    with g.as_default():
        out = build(tf)
    with tf.Session(graph=g) as sess:
        return sess.run(out)


@pytest.mark.parametrize(
    "build",
    [
        lambda tf: tf.strings.to_number(tf.constant(["1.5", "abc"])),
        lambda tf: tf.strings.to_number(tf.constant(["99999999999"]), out_type=tf.int32),
        lambda tf: tf.strings.substr(tf.constant(["abc"]), 5, 1),
    ],
    ids=["not_a_number", "int32_overflow", "substr_pos_out_of_range"],
)
def test_run_time_errors_are_invalid_argument_as_in_tf1(build) -> None:
    for tf in FRAMEWORKS.values():
        with pytest.raises(tf.errors.InvalidArgumentError):
            _run(tf, build)


def test_strings_namespace_exports_only_tf1_names() -> None:
    ours, ref = FRAMEWORKS["antcolony"].strings, FRAMEWORKS["tensorflow"].strings
    extra = sorted(n for n in ours.__all__ if not hasattr(ref, n))
    assert not extra, f"tf.strings names TF1 does not have: {extra}"
    assert sorted(n for n in dir(ours) if not n.startswith("_") and n != "annotations") == sorted(
        ours.__all__
    )
