"""crop_and_resize and non-maximum suppression placed on a GPU of each backend of
``--gpu-backends`` give the CPU's values, the crop's gradients included: the crop's gathers and
lerps run on the GPU's arrays, its gradients and the suppression on the host (CPU kernels only)."""

from __future__ import annotations

import numpy as np

import antcolony as ac
from tests.gpu_backends import assert_gpu_equals_cpu


def _build(device: str) -> tuple[ac.Graph, list[ac.Tensor]]:
    rng = np.random.default_rng(11)
    image = rng.standard_normal((2, 9, 7, 3)).astype(np.float32)
    boxes = rng.uniform(-0.2, 1.2, (6, 4)).astype(np.float32)
    scores = rng.uniform(0, 1, 6).astype(np.float32)
    g = ac.Graph()
    with g.as_default(), ac.device(device):
        x, b = ac.constant(image), ac.constant(boxes)
        ind = ac.constant(np.array([0, 1, 1, 0, 1, 0], np.int32))
        crops = [ac.image.crop_and_resize(x, b, ind, [4, 5], method=m) for m in ("bilinear", "nearest")]
        loss = ac.add_n([ac.reduce_sum(ac.square(c)) for c in crops])
        grads = ac.gradients(loss, [x, b])
        keep = ac.image.non_max_suppression(b, ac.constant(scores), 4, 0.3)
    return g, [*crops, *grads, keep]


async def test_crops_and_suppression_on_the_gpu_equal_the_cpus(gpu_backend):
    await assert_gpu_equals_cpu(_build, gpu_backend, rtol=1e-5, atol=1e-5)
