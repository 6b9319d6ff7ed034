"""Indexing, slicing, padding and tiling with tensor bounds placed on a GPU of each backend of
``--gpu-backends`` give the CPU's values, gradients included: their kernels build index keys and
call pad / tile on the GPU's arrays."""

from __future__ import annotations

import numpy as np

import antcolony as ac
from tests.gpu_backends import assert_gpu_equals_cpu


def _build(device: str) -> tuple[ac.Graph, list[ac.Tensor]]:
    value = np.random.default_rng(5).standard_normal((4, 3, 5)).astype(np.float32)
    g = ac.Graph()
    with g.as_default(), ac.device(device):
        x = ac.constant(value)
        i = ac.shape(x)[1] - 2  # 1, as a tensor: the dynamic ops
        outs = [
            x[:, i],
            x[i : i + 2, ::2],
            ac.slice(x, [0, i, 0], [-1, 1, 3]),
            ac.pad(x, [[0, 0], [i, 2], [0, 0]]),
            ac.pad(x, [[1, 0], [0, 0], [2, 1]], constant_values=-1.5),
            ac.tile(x, [1, i + 1, 2]),
        ]
        loss = ac.add_n([ac.reduce_sum(ac.square(o)) for o in outs])
        grads = ac.gradients(loss, [x])
    return g, outs + grads


async def test_dynamic_indexing_on_the_gpu_equals_the_cpus(gpu_backend):
    await assert_gpu_equals_cpu(_build, gpu_backend, rtol=1e-6, atol=1e-6)
