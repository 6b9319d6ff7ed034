"""Convolution and pooling (2-D and 3-D) on a GPU of each backend of ``--gpu-backends`` give the
CPU's values, forward and gradients: the window kernels' array code (strided patch views,
per-tap adds, GEMMs) runs on CuPy arrays on the CUDA backend, numpy's on the simulated one."""

from __future__ import annotations

import numpy as np

import antcolony as ac
from tests.gpu_backends import gpu_config


def _build(device: str) -> tuple[ac.Graph, list[ac.Tensor]]:
    rng = np.random.default_rng(7)
    x2 = rng.standard_normal((2, 7, 9, 3)).astype(np.float32)
    f2 = rng.standard_normal((3, 2, 3, 4)).astype(np.float32) * 0.5
    x3 = rng.standard_normal((2, 5, 6, 7, 3)).astype(np.float32)
    f3 = rng.standard_normal((3, 2, 3, 3, 4)).astype(np.float32) * 0.5
    g = ac.Graph()
    with g.as_default(), ac.device(device):
        a2, k2, a3, k3 = (ac.constant(v) for v in (x2, f2, x3, f3))
        outs = [
            ac.nn.conv2d(a2, k2, [1, 2, 2, 1], "SAME"),
            ac.nn.conv2d(a2, k2, [1, 1, 1, 1], "VALID", dilations=[1, 2, 2, 1]),
            ac.nn.max_pool(a2, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
            ac.nn.avg_pool(a2, [1, 2, 3, 1], [1, 1, 2, 1], "VALID"),
            ac.nn.conv3d(a3, k3, [1, 2, 1, 2, 1], "SAME"),
            ac.nn.max_pool3d(a3, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"),
            ac.nn.avg_pool3d(a3, [1, 3, 2, 2, 1], [1, 1, 2, 2, 1], "VALID"),
        ]
        loss = ac.add_n([ac.reduce_sum(ac.square(o)) for o in outs])
        grads = ac.gradients(loss, [a2, k2, a3, k3])
    return g, outs + grads


async def _values(config: ac.SessionConfig, device: str) -> list[np.ndarray]:
    g, fetches = _build(device)
    async with ac.Session(g, config=config) as sess:
        values = [np.asarray(v) for v in await sess.run(fetches)]
        if device != "/cpu:0":  # the values were made in the GPU's memory, not placed elsewhere
            assert sess.memory_stats(device).num_allocs >= len(fetches)
        return values


async def test_window_ops_on_the_gpu_equal_the_cpus(gpu_backend):
    config = gpu_config(gpu_backend)  # (one runtime per loop: both sessions share its settings)
    want = await _values(config, "/cpu:0")
    got = await _values(config, "/gpu:0")
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        assert a.shape == b.shape, f"fetch {i}"
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4, err_msg=f"fetch {i}")
