"""Differential test against TensorFlow 1: the tf.nn names of graph/ops/nn_more.py (conv1d, lrn,
zero_fraction, crelu, weighted and Poisson losses, space/depth rearrangements, sufficient
statistics), forward and gradients (see tf1_diff.py)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from .tf1_diff import (
    Case,
    Table,
    compare,
    normal,
    park_tf_objects,  # noqa: F401 - an autouse fixture
    positive,
    rng,
)

T = Table()
SIGNAL = normal(2, 9, 3, tag="signal")  # [batch, width, channels]
FILTER1 = normal(3, 3, 4, tag="filter1") * 0.4
IMAGES = normal(2, 5, 4, 7, tag="images")  # odd channel count: LRN windows clipped at both edges
LOGITS = normal(4, 5, tag="logits") * 3.0
BINARY = (rng("wce").random((4, 5)) < 0.5).astype(np.float32)
COUNTS = np.asarray(rng("counts").integers(0, 5, (4, 5)), np.float32)

for _pad in ["SAME", "VALID"]:
    T.case(f"nn.conv1d_{_pad}", SIGNAL, FILTER1, grad_atol=1e-4)(
        lambda tf, x, f, _p=_pad: [
            tf.nn.conv1d(x, f, 1, _p),
            tf.nn.conv1d(x, f, stride=2, padding=_p),
            tf.nn.conv1d(value=x, filters=f, stride=[1, 1, 1], padding=_p, dilations=2),
        ]
    )
T.case("nn.conv1d_ncw", np.ascontiguousarray(SIGNAL.transpose(0, 2, 1)), FILTER1, grad_atol=1e-4)(
    lambda tf, x, f: tf.transpose(tf.nn.conv1d(tf.transpose(x, [0, 2, 1]), f, 2, "SAME"), [0, 2, 1])
)

T.case("nn.lrn_defaults", IMAGES)(lambda tf, x: [tf.nn.lrn(x), tf.nn.local_response_normalization(x)])
T.case("nn.lrn_cifar10", IMAGES * 3.0)(
    # the CIFAR-10 tutorial's norm1: depth_radius 4, bias 1, alpha 0.001 / 9, beta 0.75
    lambda tf, x: tf.nn.lrn(x, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm1")
)
T.case("nn.lrn_radius_0_and_wide", IMAGES)(
    lambda tf, x: [
        tf.nn.lrn(x, depth_radius=0, bias=2.0, alpha=0.5, beta=0.6),
        tf.nn.lrn(x, depth_radius=9, bias=1.5, alpha=0.1, beta=1.0),
    ]
)
T.case("nn.zero_fraction", np.where(normal(3, 4, tag="zf") > 0.3, normal(3, 4, tag="zv"), 0.0), grad=False)(
    lambda tf, x: [tf.nn.zero_fraction(x), tf.nn.zero_fraction(tf.nn.relu(x))]
)
T.case("nn.crelu", LOGITS)(lambda tf, x: [tf.nn.crelu(x), tf.nn.crelu(x, axis=0)])
T.case("nn.weighted_cross_entropy_with_logits", BINARY, LOGITS)(
    lambda tf, z, x: [
        tf.nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=2.5),
        tf.nn.weighted_cross_entropy_with_logits(z, x, 0.3),
    ]
)
T.case("nn.log_poisson_loss", COUNTS, normal(4, 5, tag="logrates"))(
    lambda tf, z, c: [
        tf.nn.log_poisson_loss(z, c),
        tf.nn.log_poisson_loss(targets=z, log_input=c, compute_full_loss=True),
    ]
)
BLOCKS = normal(2, 4, 6, 3, tag="blocks")
T.case("nn.space_to_depth", BLOCKS)(lambda tf, x: tf.nn.space_to_depth(x, 2))
T.case("nn.depth_to_space", normal(2, 2, 3, 8, tag="depth"))(
    lambda tf, x: [tf.nn.depth_to_space(x, 2), tf.nn.depth_to_space(x[..., :4], 2)]
)
T.case("nn.space_depth_round_trip", BLOCKS)(
    lambda tf, x: tf.nn.depth_to_space(tf.nn.space_to_depth(x, 2), 2) * 2.0
)
MOMENTS = normal(3, 4, 5, tag="moments")
T.case("nn.sufficient_statistics", MOMENTS)(
    lambda tf, x: [
        t
        for t in (
            *tf.nn.sufficient_statistics(x, [0, 2]),
            *tf.nn.sufficient_statistics(x, [1], shift=0.5, keep_dims=True),
        )
        if t is not None
    ]
)
T.case("nn.normalize_moments", MOMENTS)(
    lambda tf, x: [
        *tf.nn.normalize_moments(*tf.nn.sufficient_statistics(x, [0, 2])),
        *tf.nn.normalize_moments(*tf.nn.sufficient_statistics(x, [0], shift=0.25)),
    ]
)
T.case("nn.weighted_moments", MOMENTS, positive(3, 4, 1, tag="freq"))(
    lambda tf, x, w: [
        *tf.nn.weighted_moments(x, [0, 2], w),
        *tf.nn.weighted_moments(x, axes=[1], frequency_weights=w, keep_dims=True),
    ]
)


@pytest.mark.parametrize("case", T.params())
def test_matches_tf1(case: Case) -> None:
    compare(case)
