"""Image patches, max pooling with argmax and space/batch moves placed on a GPU of each backend of
``--gpu-backends`` give the CPU's values, gradients included (their kernels run on the GPU's
arrays: strided window views, argmax over taps, scatter-adds)."""

from __future__ import annotations

import numpy as np

import antcolony as ac
import antcolony.compat.v1 as tf
from tests.gpu_backends import assert_gpu_equals_cpu


def _build(device: str) -> tuple[ac.Graph, list[ac.Tensor]]:
    rng = np.random.default_rng(3)
    value = (rng.permutation(2 * 7 * 6 * 3).reshape(2, 7, 6, 3) * 0.1).astype(np.float32)  # no ties
    g = ac.Graph()
    with g.as_default(), ac.device(device):
        x = ac.constant(value)
        pooled, argmax = tf.nn.max_pool_with_argmax(x, [1, 3, 2, 1], [1, 2, 2, 1], "SAME")
        patches = tf.extract_image_patches(x, [1, 2, 3, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME")
        moved = tf.space_to_batch_nd(x, [2, 3], [[1, 0], [0, 0]])
        floats = [pooled, patches, moved]
        grads = ac.gradients(ac.add_n([ac.reduce_sum(ac.square(o)) for o in floats]), [x])
    return g, [*floats, argmax, *grads]


async def test_patches_and_argmax_pooling_on_the_gpu_equal_the_cpus(gpu_backend):
    await assert_gpu_equals_cpu(_build, gpu_backend, rtol=1e-5, atol=1e-5)
