"""The default BLAS thread count: the cores shared among the kernels that may run at once."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import antcolony as ac
from antcolony.config.session_config import chosen_intra_op_threads
from antcolony.errors import ConfigError


def _blas_threads() -> set[int]:
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def _graph() -> ac.Graph:
    g = ac.Graph()
    with g.as_default():
        ac.constant(np.ones((2, 2), np.float32), name="x")
    return g


@pytest.mark.parametrize(
    ("inter", "cores", "intra"), [(2, 2, 1), (1, 2, 2), (2, 8, 4), (3, 8, 2), (16, 4, 1), (1, 1, 1)]
)
def test_chosen_intra_op_threads_divides_the_cores(inter: int, cores: int, intra: int) -> None:
    assert chosen_intra_op_threads(inter, cores) == intra


async def _threads_inside(config: ac.SessionConfig) -> set[int]:
    async with ac.Session(_graph(), config=config) as sess:
        await sess.run("x:0")
        return _blas_threads()


def test_default_config_limits_blas_while_the_runtime_lives() -> None:
    if not _blas_threads():
        pytest.skip("numpy's BLAS is not visible to threadpoolctl")
    before = _blas_threads()
    inside = ac.run(_threads_inside(ac.SessionConfig(inter_op_threads=2)))
    assert inside == {chosen_intra_op_threads(2)}
    # The limit is the loop's Runtime's: it ends with the loop.
    assert _blas_threads() == before


def test_zero_leaves_blas_as_configured() -> None:
    if not _blas_threads():
        pytest.skip("numpy's BLAS is not visible to threadpoolctl")
    before = _blas_threads()
    config = ac.SessionConfig(inter_op_threads=64, intra_op_threads=0)
    assert ac.run(_threads_inside(config)) == before


def test_negative_intra_op_threads_is_refused() -> None:
    with pytest.raises(ConfigError, match="intra_op_threads"):
        ac.SessionConfig(intra_op_threads=-1)
