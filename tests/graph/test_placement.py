"""Placement and partitioning as a session applies them: device names, colocation, soft placement."""

from __future__ import annotations

import numpy as np
import pytest

import antcolony as ac
from antcolony.devices.kernels.registry import KERNELS, register_kernel
from antcolony.graph.gradients import not_differentiable
from antcolony.graph.op_builder import make_op
from antcolony.graph.registry import OP_DEFS, register_op

SIM2 = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=2)
FULL = ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE)

if "TestCpuOnlyIdentity" not in OP_DEFS:

    @register_op("TestCpuOnlyIdentity")
    def _shape(op):
        return [(op.inputs[0].dtype, op.inputs[0].shape.dims)]

    not_differentiable("TestCpuOnlyIdentity")

if "TestCpuOnlyIdentity" not in KERNELS:

    @register_kernel("TestCpuOnlyIdentity", devices=("CPU",))
    def _kernel(ctx):
        return lambda x: x


async def _devices_of(g: ac.Graph, fetches, feed=None, config=SIM2) -> dict[str, str]:
    meta = ac.RunMetadata()
    async with ac.Session(g, config=config) as sess:
        await sess.run(fetches, feed, options=FULL, run_metadata=meta)
    return {s.node_name: s.device for s in meta.step_stats}


@pytest.mark.parametrize("name", ["/gpu:1", "/device:GPU:1", "/job:localhost/task:0/device:GPU:1", "/GPU:1"])
async def test_every_tf_device_name_form_places_on_that_gpu(name):
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2], name="x")
        with ac.device(name):
            y = ac.multiply(x, x, name="sq")
    devices = await _devices_of(g, y, {x: [1.0, 2.0]})
    assert devices["sq"] == "/device:GPU:1"


async def test_an_op_without_a_gpu_kernel_is_soft_placed_on_the_cpu():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2], name="x")
        with ac.device("/gpu:0"):
            y = make_op("TestCpuOnlyIdentity", [x], None, "cpu_only").outputs[0]
            z = ac.multiply(y, 2.0, name="on_gpu")
    devices = await _devices_of(g, z, {x: [1.0, 2.0]})
    assert devices["cpu_only"] == "/device:CPU:0"
    assert devices["on_gpu"] == "/device:GPU:0"


async def test_without_soft_placement_a_missing_gpu_kernel_names_the_op_and_device():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [2], name="x")
        with ac.device("/gpu:0"):
            y = make_op("TestCpuOnlyIdentity", [x], None, "cpu_only").outputs[0]
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, allow_soft_placement=False)
    async with ac.Session(g, config=config) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"cpu_only.*no kernel.*GPU:0") as info:
            await sess.run(y, {x: [1.0, 2.0]})
    assert info.value.node_name == "cpu_only"


async def test_a_missing_gpu_is_soft_placed_or_rejected_by_setting():
    g = ac.Graph()
    with g.as_default(), ac.device("/gpu:7"):
        y = ac.add(ac.constant(1.0), 2.0, name="far")
    devices = await _devices_of(g, y)
    assert devices["far"] == "/device:CPU:0"
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=2, allow_soft_placement=False)
    async with ac.Session(g, config=config) as sess:
        with pytest.raises(ac.errors.InvalidArgumentError, match=r"GPU:7.*does not exist"):
            await sess.run(y)


async def test_reads_and_updates_colocate_with_their_variable_whatever_their_scope():
    g = ac.Graph()
    with g.as_default():
        with ac.device("/gpu:1"):
            v = ac.Variable(np.ones(3, np.float32), name="v")
        with ac.device("/cpu:0"):
            up = ac.assign_sub(v, [1.0, 1.0, 1.0], name="update")
    meta = ac.RunMetadata()
    async with ac.Session(g, config=SIM2) as sess:
        await sess.run(v.initializer)
        np.testing.assert_allclose(await sess.run(up, options=FULL, run_metadata=meta), [0.0, 0.0, 0.0])
    devices = {s.node_name: s.device for s in meta.step_stats}
    assert devices["update"] == "/device:GPU:1"


async def test_constants_join_their_consumers_device_instead_of_being_copied_each_step():
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [3], name="x")
        with ac.device("/gpu:0"):
            y = ac.multiply(x, ac.constant([1.0, 2.0, 3.0], name="k"), name="scaled")
    meta = ac.RunMetadata()
    async with ac.Session(g, config=SIM2) as sess:
        out = await sess.run(y, {x: [1.0, 1.0, 1.0]}, options=FULL, run_metadata=meta)
    np.testing.assert_allclose(out, [1.0, 2.0, 3.0])
    recvs = [s.node_name for s in meta.step_stats if s.op_type == "_Recv"]
    assert not any("k:0" in r for r in recvs), recvs


@pytest.mark.parametrize("colocate", [True, False])
async def test_colocate_gradients_with_ops_places_each_gradient_beside_its_forward_op(colocate):
    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [4, 3], name="x")
        with ac.device("/gpu:0"):
            w = ac.Variable(np.ones((3, 2), np.float32), name="w")
            loss = ac.reduce_sum(ac.square(ac.matmul(x, w)))
        train = ac.train.GradientDescentOptimizer(0.1).minimize(loss, colocate_gradients_with_ops=colocate)
        init = w.initializer
    config = ac.SessionConfig(gpu_backend="sim", sim_gpu_count=1, sim_gpu_memory=64 << 20)
    async with ac.Session(g, config=config) as sess:
        await sess.run(init)
        md = ac.RunMetadata()
        await sess.run(
            train,
            {x: np.ones((4, 3), np.float32)},
            options=ac.RunOptions(trace_level=ac.RunOptions.FULL_TRACE),
            run_metadata=md,
        )
        w_after = await sess.run(w)
    grad_devices = {
        s.device for s in md.step_stats if s.node_name.startswith("gradients/") and s.op_type == "MatMul"
    }
    assert grad_devices == ({"/device:GPU:0"} if colocate else {"/device:CPU:0"}), grad_devices
    np.testing.assert_allclose(w_after, 1.0 - 0.1 * 2 * 3 * 4 * np.ones((3, 2)))  # the same step either way
