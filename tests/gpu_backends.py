"""Running the GPU tests on the simulated and the CUDA backend.

A test that takes the ``gpu_backend`` argument runs once per backend named by the pytest option
``--gpu-backends`` (default: env ``ANTCOLONY_TEST_GPU_BACKENDS``, else ``sim``), for example
``pytest --gpu-backends sim,cuda tests/devices``; its CUDA run is skipped, saying why, where CuPy
or a CUDA device is missing. It builds its session settings with ``gpu_config``.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import pytest

import antcolony as ac

GPU_BACKENDS_ENV = "ANTCOLONY_TEST_GPU_BACKENDS"
KNOWN = ("sim", "cuda")


def requested(option: str | None) -> list[str]:
    """The backends named by the option (or the environment), checked against the known ones."""
    text = option if option is not None else os.environ.get(GPU_BACKENDS_ENV, "sim")
    names = [n.strip() for n in text.split(",") if n.strip()] or ["sim"]
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise pytest.UsageError(
            f"--gpu-backends / {GPU_BACKENDS_ENV}: unknown backend(s) {', '.join(unknown)}; "
            f"name some of {', '.join(KNOWN)}"
        )
    return list(dict.fromkeys(names))


@functools.cache
def cuda_unavailable() -> str | None:
    """Why CUDA cannot run here (CuPy missing, no driver, no device), or None when it can."""
    from antcolony.devices.backends.cuda import import_cupy
    from antcolony.errors import UnavailableError

    try:
        import_cupy()
    except UnavailableError as exc:
        return exc.message
    return None


@functools.cache
def cuda_device_count() -> int:
    from antcolony.devices.backends.cuda import import_cupy

    return int(import_cupy().cuda.runtime.getDeviceCount())


def backend_param(name: str) -> Any:
    if name != "cuda":
        return pytest.param(name, id=name)
    reason = cuda_unavailable()
    marks = [pytest.mark.skip(reason=f"no CUDA GPU: {reason}")] if reason else []
    return pytest.param(name, id=name, marks=marks)


def gpu_config(backend: str, gpus: int = 1, **settings: Any) -> ac.SessionConfig:
    """Session settings for ``backend`` with at least ``gpus`` GPUs (a CUDA run is skipped where
    fewer are visible). ``sim_gpu_memory`` sizes a simulated GPU; on CUDA it becomes the
    ``gpu_memory_limit`` (unless one is given), so both backends hold the test to one budget."""
    if backend == "sim":
        return ac.SessionConfig(**{"gpu_backend": "sim", "sim_gpu_count": gpus, **settings})
    if cuda_device_count() < gpus:
        pytest.skip(f"needs {gpus} CUDA GPUs, {cuda_device_count()} visible")
    memory = settings.pop("sim_gpu_memory", None)
    if memory is not None and settings.get("gpu_memory_limit") is None:
        settings["gpu_memory_limit"] = memory
    settings.pop("sim_gpu_count", None)
    return ac.SessionConfig(gpu_backend="cuda", **settings)


async def assert_gpu_equals_cpu(build: Any, backend: str, rtol: float, atol: float) -> None:
    """``build(device) -> (graph, fetches)`` run placed on /cpu:0 and on /gpu:0 of ``backend``:
    the fetched values agree in shape, dtype and value."""
    import numpy as np

    config = gpu_config(backend)  # (one runtime per loop: both sessions share its settings)
    values = []
    for device in ("/cpu:0", "/gpu:0"):
        g, fetches = build(device)
        async with ac.Session(g, config=config) as sess:
            values.append([np.asarray(v) for v in await sess.run(fetches)])
    want, got = values
    for k, (a, b) in enumerate(zip(got, want, strict=True)):
        assert a.shape == b.shape and a.dtype == b.dtype, f"fetch {k}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"fetch {k}")
