"""Shared fixtures: every test's event loop gets its antcolony Runtime shut down afterwards, and
the test run has its own runtime directory, so simulated GPUs (whose memory is one budget per
machine, kept in a ledger there) are not shared with other test runs or jobs on this machine.
Tests taking ``gpu_backend`` run once per backend of ``--gpu-backends`` (tests/gpu_backends.py)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator

import pytest

from antcolony.actors.runtime import _RUNTIMES
from antcolony.devices.sim_ledger import RUNTIME_DIR_ENV
from tests.gpu_backends import GPU_BACKENDS_ENV, backend_param, requested


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--gpu-backends",
        default=None,
        help="comma-separated GPU backends (sim, cuda) to run the tests taking gpu_backend on "
        f"(default: env {GPU_BACKENDS_ENV}, else sim); CUDA runs skip where CUDA is unavailable",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "gpu_backend" in metafunc.fixturenames:
        names = requested(metafunc.config.getoption("--gpu-backends"))
        metafunc.parametrize("gpu_backend", [backend_param(n) for n in names])


@pytest.fixture(autouse=True, scope="session")
def _private_runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    old = os.environ.get(RUNTIME_DIR_ENV)
    os.environ[RUNTIME_DIR_ENV] = str(tmp_path_factory.mktemp("antcolony-run"))
    yield
    if old is None:
        os.environ.pop(RUNTIME_DIR_ENV, None)
    else:
        os.environ[RUNTIME_DIR_ENV] = old


@pytest.fixture(autouse=True)
async def _shutdown_runtime() -> AsyncIterator[None]:
    yield
    runtime = _RUNTIMES.get(asyncio.get_running_loop())
    if runtime is not None and not runtime.closed:
        await runtime.shutdown()


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist's ``--dist loadgroup``: a test file's tests run in one worker (module
    fixtures, such as a file's child processes started together, run once), and every test of
    tests/cluster/ in the same one (the package's local Ray cluster starts once)."""
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        group = "tests/cluster" if path.startswith("tests/cluster/") else path
        item.add_marker(pytest.mark.xdist_group(group))
