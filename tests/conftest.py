"""Shared fixtures: every test's event loop gets its antcolony Runtime shut down afterwards, and
the test run has its own runtime directory, so simulated GPUs (whose memory is one budget per
machine, kept in a ledger there) are not shared with other test runs or jobs on this machine."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator

import pytest

from antcolony.actors.runtime import _RUNTIMES
from antcolony.devices.sim_ledger import RUNTIME_DIR_ENV


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
