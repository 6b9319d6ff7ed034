"""GPU memory through the public API: tensor lifetimes, host fallback, limits, no leaks."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import antcolony as ac
from tests.gpu_backends import gpu_config
from tests.waiting import until

MiB = 1 << 20


def _config(backend: str = "sim", **kw) -> ac.SessionConfig:
    return gpu_config(backend, **{"sim_gpu_memory": 256 * MiB, **kw})


def _model(width: int = 128) -> tuple[ac.Graph, dict]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [None, width], name="x")
        y = ac.placeholder(ac.float32, [None, 1], name="y")
        with ac.device("/gpu:0"):
            w1 = ac.Variable(np.full((width, width), 0.01, np.float32), name="w1")
            w2 = ac.Variable(np.full((width, 1), 0.01, np.float32), name="w2")
            h = ac.nn.relu(ac.matmul(x, w1))
            loss = ac.reduce_mean(ac.square(ac.matmul(h, w2) - y))
            train = ac.train.AdamOptimizer(0.001).minimize(loss)
        init = ac.global_variables_initializer()
    return g, {"x": x, "y": y, "loss": loss, "train": train, "init": init, "h": h}


def _feed(t: dict, rows: int = 64, width: int = 128) -> dict:
    rng = np.random.default_rng(0)
    return {
        t["x"]: rng.standard_normal((rows, width)).astype(np.float32),
        t["y"]: np.ones((rows, 1), np.float32),
    }


async def test_memory_stats_report_the_design_fields_and_variables_stay_resident(gpu_backend):
    g, t = _model()
    async with ac.Session(g, config=_config(gpu_backend)) as sess:
        before = sess.memory_stats("/gpu:0")
        await sess.run(t["init"])
        stats = sess.memory_stats("/device:GPU:0")
        (gpu,) = [d for d in sess.list_devices() if d.device_type == "GPU"]
        by_bus = sess.memory_stats(gpu.bus_id.split(":", 1)[1])  # 01:00.0 on the simulated GPU
    for field in (
        "bytes_in_use",
        "peak_bytes_in_use",
        "bytes_limit",
        "pool_bytes",
        "stable_bytes",
        "host_bytes_in_use",
        "host_peak_bytes_in_use",
        "num_allocs",
        "num_host_fallbacks",
    ):
        assert hasattr(stats, field)
    assert before.bytes_in_use == 0
    variables = (128 * 128 + 128) * 4 * 3  # weights + two Adam slots each
    initial_values = (128 * 128 + 128) * 4  # the init executor keeps its constants on the GPU
    assert variables + initial_values <= stats.bytes_in_use <= variables + initial_values + 4096
    assert stats.bytes_limit == 256 * MiB and by_bus.bytes_in_use == stats.bytes_in_use


async def test_asking_for_the_memory_of_a_device_that_is_no_gpu_names_the_gpus():
    async with ac.Session(ac.Graph(), config=_config()) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"/cpu:0.*/gpu:0"):
            sess.memory_stats("/cpu:0")


@pytest.mark.parametrize("steps", [50, pytest.param(1000, marks=pytest.mark.slow)])
async def test_no_memory_leaks_over_many_training_steps(steps, gpu_backend):
    g, t = _model(width=64)
    feed = _feed(t, rows=32, width=64)
    async with ac.Session(g, config=_config(gpu_backend)) as sess:
        await sess.run(t["init"])
        await sess.run(t["train"], feed)
        after_first = sess.memory_stats("/gpu:0").bytes_in_use
        for _ in range(steps - 1):
            await sess.run(t["train"], feed)
        stats = sess.memory_stats("/gpu:0")
    assert stats.bytes_in_use == after_first
    assert stats.peak_bytes_in_use > after_first  # activations did live on the GPU during steps


async def test_a_failed_step_frees_what_it_allocated(gpu_backend):
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [None, 256], name="x")
        i = ac.placeholder(ac.int32, [], name="i")
        with ac.device("/gpu:0"):
            big = ac.matmul(x, x, transpose_b=True)
            picked = ac.gather(big, i, name="picked")
    async with ac.Session(g, config=_config(gpu_backend)) as sess:
        feed = {x: np.ones((512, 256), np.float32)}
        await sess.run(picked, {**feed, i: 0})
        with pytest.raises(ac.errors.InvalidArgumentError):
            await sess.run(picked, {**feed, i: 10_000})
        await until(lambda: sess.memory_stats("/gpu:0").bytes_in_use == 0, "the failed step's memory freed")
        stats = sess.memory_stats("/gpu:0")
    assert stats.bytes_in_use == 0
    assert stats.peak_bytes_in_use >= 512 * 512 * 4


@pytest.mark.slow
async def test_a_cancelled_step_frees_what_it_allocated():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [600, 600], name="x")
        with ac.device("/gpu:0"):
            m = ac.constant(np.eye(600, dtype=np.float32))
            y = x
            for _ in range(40):
                y = ac.matmul(y, m)
            out = ac.reduce_sum(y)
    async with ac.Session(g, config=_config()) as sess:
        feed = {x: np.ones((600, 600), np.float32)}
        await sess.run(out, feed)
        baseline = sess.memory_stats("/gpu:0").bytes_in_use  # the bound constant
        task = asyncio.ensure_future(sess.run(out, feed))
        # cancel once the step holds GPU memory of its own (so there is something to free)
        await until(
            lambda: sess.memory_stats("/gpu:0").bytes_in_use > baseline or task.done(), "the step allocating"
        )
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await until(
            lambda: sess.memory_stats("/gpu:0").bytes_in_use == baseline, "the cancelled step's memory freed"
        )


def _over_limit_graph() -> tuple[ac.Graph, ac.Tensor, ac.Tensor]:
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [None], name="x")
        with ac.device("/gpu:0"):
            y = ac.multiply(x, 2.0, name="doubled")
            out = ac.reduce_sum(y)
    return g, x, out


async def test_with_vmem_off_a_request_over_the_limit_is_resource_exhausted_naming_the_device(gpu_backend):
    g, x, out = _over_limit_graph()
    config = _config(gpu_backend, gpu_memory_limit=1 * MiB, vmem=False)
    async with ac.Session(g, config=config) as sess:
        with pytest.raises(ac.errors.ResourceExhaustedError, match=r"/gpu:0") as info:
            await sess.run(out, {x: np.ones((1 * MiB + 1024) // 4, np.float32)})
        assert "1025.00 KiB" in str(info.value) or str(1 * MiB + 1024) in str(info.value)
        assert await sess.run(out, {x: np.ones(1000, np.float32)}) == 2000.0


async def test_with_vmem_on_the_overflow_goes_to_host_memory_and_results_do_not_change(gpu_backend):
    g, x, out = _over_limit_graph()
    config = _config(gpu_backend, gpu_memory_limit=1 * MiB, vmem=True)
    values = np.arange((1 * MiB + 1024) // 4, dtype=np.float32)
    async with ac.Session(g, config=config) as sess:
        result = await sess.run(out, {x: values})
        stats = sess.memory_stats("/gpu:0")
    assert result == pytest.approx(float(values.sum()) * 2.0, rel=1e-5)
    assert stats.num_host_fallbacks >= 1
    assert stats.host_peak_bytes_in_use >= 1 * MiB
    assert stats.host_bytes_in_use == 0


async def test_with_vmem_on_but_too_little_host_memory_the_request_fails(gpu_backend):
    g, x, out = _over_limit_graph()
    config = _config(gpu_backend, gpu_memory_limit=1 * MiB, vmem=True, host_mem_limit=512 * 1024)
    async with ac.Session(g, config=config) as sess:
        with pytest.raises(ac.errors.ResourceExhaustedError):
            await sess.run(out, {x: np.ones((1 * MiB + 1024) // 4, np.float32)})


async def test_raising_the_limit_mid_run_keeps_later_steps_on_the_device(gpu_backend):
    g, t = _model(width=256)
    feed = _feed(t, rows=1024, width=256)
    async with ac.Session(g, config=_config(gpu_backend, allow_growth=True)) as sess:
        await sess.run(t["init"])
        assert sess.adjust_memory_limit("/gpu:0", 2 * MiB) == 2 * MiB
        await sess.run(t["train"], feed)
        squeezed = sess.memory_stats("/gpu:0").num_host_fallbacks
        reached = sess.adjust_memory_limit("/gpu:0", 64 * MiB)
        await sess.run(t["train"], feed)
        after = sess.memory_stats("/gpu:0")
    assert squeezed > 0
    assert reached == 64 * MiB and after.bytes_limit == 64 * MiB
    assert after.num_host_fallbacks == squeezed


async def test_a_limit_above_the_initial_one_is_clamped_and_a_shrink_reports_what_it_reached(gpu_backend):
    g, t = _model()
    async with ac.Session(
        g, config=_config(gpu_backend, gpu_memory_limit=32 * MiB, allow_growth=True)
    ) as sess:
        await sess.run(t["init"])
        assert sess.adjust_memory_limit("/gpu:0", 1 << 40) == 32 * MiB
        reached = sess.adjust_memory_limit("/gpu:0", 0)
        held = sess.memory_stats("/gpu:0").stable_bytes
    assert 0 < reached == held  # the variables' region cannot be freed


async def test_sessions_of_one_process_share_one_allocator_stack_per_gpu():
    g1, t1 = _model(width=64)
    g2, t2 = _model(width=128)
    async with (
        ac.Session(g1, config=_config(gpu_memory_limit=8 * MiB)) as a,
        ac.Session(g2, config=_config(gpu_memory_limit=8 * MiB)) as b,
    ):
        await a.run(t1["init"])
        only_a = a.memory_stats("/gpu:0").bytes_in_use
        await b.run(t2["init"])
        sa, sb = a.memory_stats("/gpu:0"), b.memory_stats("/gpu:0")
        # a limit set through one session is the process's
        a.adjust_memory_limit("/gpu:0", 4 * MiB)
        assert b.memory_stats("/gpu:0").bytes_limit == 4 * MiB
    assert sa == sb and sa.bytes_limit == 8 * MiB
    assert sa.bytes_in_use > only_a > 0  # both sessions' variables on one stack


async def test_a_later_session_with_other_gpu_memory_settings_is_refused_with_the_difference():
    async with ac.Session(ac.Graph(), config=_config(gpu_memory_limit=8 * MiB)) as a:
        a.list_devices()
        with pytest.raises(ac.errors.ConfigError, match=r"gpu_memory_limit=16777216 \(in force: 8388608\)"):
            async with ac.Session(ac.Graph(), config=_config(gpu_memory_limit=16 * MiB)) as b:
                b.list_devices()


async def test_a_shrink_blocked_by_live_data_warns_with_what_holds_it_and_the_limit_reached(caplog):
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:0"):
        hold = ac.Variable(ac.zeros([(6 * MiB) // 4]), name="hold")
    async with ac.Session(g, config=_config(gpu_memory_limit=64 * MiB)) as sess:
        await sess.run(hold.initializer)
        with caplog.at_level("WARNING"):
            reached = sess.adjust_memory_limit("/gpu:0", 2 * MiB)
        assert reached == sess.memory_stats("/gpu:0").bytes_limit
        assert reached >= 6 * MiB  # the 6 MiB variable lives there
        reached_low = sess.adjust_memory_limit("/gpu:0", 8 * MiB)
    assert reached_low == 8 * MiB
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("asked 2097152 bytes" in m and "live allocation" in m and "6.00 MiB" in m for m in warned), (
        warned
    )


async def test_without_growth_a_lower_limit_is_reached_at_once_when_the_live_data_fits():
    g, t = _model()
    async with ac.Session(g, config=_config(allow_growth=False, gpu_memory_limit=128 * MiB)) as sess:
        await sess.run(t["init"])
        assert sess.memory_stats("/gpu:0").pool_bytes == 128 * MiB  # TF1's whole-limit region
        assert sess.adjust_memory_limit("/gpu:0", 64 * MiB) == 64 * MiB
        stats = sess.memory_stats("/gpu:0")
        await sess.run(t["train"], _feed(t))
    assert stats.bytes_limit == 64 * MiB and stats.pool_bytes <= 64 * MiB


@pytest.mark.parametrize("setting", [{"inter_op_threads": 1}, {"sim_gpu_count": 2}, {"engine": "naive"}])
async def test_a_later_session_with_other_runtime_settings_is_refused_not_ignored(setting):
    async with ac.Session(ac.Graph(), config=_config(inter_op_threads=2)) as a:
        a.list_devices()
        name, value = next(iter(setting.items()))
        with pytest.raises(ac.errors.ConfigError, match=rf"{name}={value!r} \(in force: "):
            async with ac.Session(ac.Graph(), config=_config(**{"inter_op_threads": 2, **setting})) as b:
                b.list_devices()
        assert len(a.list_devices()) == 2  # the first session's devices are untouched: CPU and one GPU


async def test_a_variable_written_to_host_memory_under_a_squeeze_returns_to_the_device(gpu_backend):
    """Optimizers update variables in place; a value that went to host fallback memory while the
    limit was squeezed must not stay there once the limit allows it back. The variable fills two
    2 MiB regions, so the squeeze is reachable where memory is granted by region (CUDA)."""
    n = 1024
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:0"):
        w = ac.Variable(np.zeros((n, n), np.float32), name="w")
        rewrite = ac.assign(w, ac.ones([n, n]) * 2.0)
        train = ac.train.GradientDescentOptimizer(0.5).minimize(ac.reduce_sum(w * w))
        init = ac.global_variables_initializer()
    async with ac.Session(g, config=_config(gpu_backend, vmem=True, allow_growth=True)) as sess:
        await sess.run(init)
        in_use = sess.memory_stats("/gpu:0").bytes_in_use
        sess.adjust_memory_limit("/gpu:0", in_use)  # nothing new fits on the device
        await sess.run(rewrite.op)
        squeezed = sess.memory_stats("/gpu:0")
        sess.adjust_memory_limit("/gpu:0", 128 * MiB)
        await sess.run(train)
        after = sess.memory_stats("/gpu:0")
        value = await sess.run(w)
    assert squeezed.host_bytes_in_use >= n * n * 4, squeezed
    # the variable's bytes left the host; what stays there is the squeezed run's bound constant
    # (its executor keeps it: a broadcast view on the simulated GPU, a full 4 MiB array on CUDA)
    assert squeezed.host_bytes_in_use - after.host_bytes_in_use >= n * n * 4, (squeezed, after)
    np.testing.assert_array_equal(value, np.zeros((n, n), np.float32))  # 2 - 0.5 * 2 * 2
