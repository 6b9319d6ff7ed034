"""Fixtures of the actor-kernel tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from antcolony.actors import Runtime, get_runtime


@pytest.fixture
async def runtime() -> AsyncIterator[Runtime]:
    """The test loop's Runtime, shut down after the test."""
    rt = get_runtime()
    yield rt
    await rt.shutdown()
