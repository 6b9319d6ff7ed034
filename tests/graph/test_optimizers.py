"""Optimizers: one step of each against a numpy reimplementation of TF's update formulas, slots,
the global step, and training a small linear regression to a low loss."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import antcolony as ac

RNG = np.random.default_rng(7)
X = RNG.standard_normal((16, 3))
W_TRUE = np.array([[1.5, -2.0], [0.5, 1.0], [-1.0, 0.25]])
B_TRUE = np.array([0.3, -0.7])
Y = X @ W_TRUE + B_TRUE


class Regression:
    """loss = mean((x @ w + b - y)^2) with variables w, b and an unrelated variable u."""

    def __init__(self, dtype: Any = ac.float64) -> None:
        self.graph = ac.Graph()
        with self.graph.as_default():
            self.x = ac.placeholder(dtype, (None, 3), name="x")
            self.y = ac.placeholder(dtype, (None, 2), name="y")
            self.w = ac.Variable(np.full((3, 2), 0.1, dtype=dtype), name="w")
            self.b = ac.Variable(np.zeros(2, dtype=dtype), name="b")
            self.u = ac.Variable(np.ones(1, dtype=dtype), name="unused")
            self.loss = ac.reduce_mean(ac.square(ac.matmul(self.x, self.w) + self.b - self.y))
            self.dtype = dtype

    @property
    def feed(self) -> dict:
        return {self.x: X.astype(self.dtype), self.y: Y.astype(self.dtype)}


async def _steps(model: Regression, make_opt: Callable[[], Any], n: int) -> tuple[list, list, Any]:
    """Run n steps; returns the (w, b) values before each step, the gradients at them, and the optimizer."""
    with model.graph.as_default():
        opt = make_opt()
        grads = [g for g, _ in opt.compute_gradients(model.loss, [model.w, model.b])]
        train = opt.minimize(model.loss, var_list=[model.w, model.b])
        init = ac.global_variables_initializer()
    values, gradients = [], []
    async with ac.Session(model.graph) as sess:
        await sess.run(init)
        for _ in range(n):
            values.append(await sess.run([model.w, model.b]))
            gradients.append(await sess.run(grads, model.feed))
            await sess.run(train, model.feed)
        values.append(await sess.run([model.w, model.b]))
    return values, gradients, opt


async def test_one_gradient_descent_step_is_var_minus_lr_times_grad() -> None:
    values, grads, _ = await _steps(Regression(), lambda: ac.train.GradientDescentOptimizer(0.1), 1)
    for before, g, after in zip(values[0], grads[0], values[1]):
        np.testing.assert_allclose(after, before - 0.1 * g, rtol=1e-12)


@pytest.mark.parametrize("nesterov", [False, True])
async def test_momentum_steps_follow_tf_update_formulas(nesterov: bool) -> None:
    lr, mu = 0.05, 0.9
    values, grads, _ = await _steps(
        Regression(),
        lambda: ac.train.MomentumOptimizer(lr, mu, use_nesterov=nesterov),
        3,
    )
    accum = [np.zeros_like(v) for v in values[0]]
    var = [v.copy() for v in values[0]]
    for step in range(3):
        for i, g in enumerate(grads[step]):
            accum[i] = accum[i] * mu + g
            var[i] = var[i] - (lr * g + lr * mu * accum[i] if nesterov else lr * accum[i])
            np.testing.assert_allclose(values[step + 1][i], var[i], rtol=1e-12)


async def test_adam_steps_follow_tf_update_formulas() -> None:
    lr, b1, b2, eps = 0.01, 0.8, 0.95, 1e-7
    model = Regression()
    values, grads, _opt = await _steps(model, lambda: ac.train.AdamOptimizer(lr, b1, b2, eps), 3)
    m = [np.zeros_like(v) for v in values[0]]
    v2 = [np.zeros_like(v) for v in values[0]]
    var = [v.copy() for v in values[0]]
    for t in range(1, 4):
        lr_t = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        for i, g in enumerate(grads[t - 1]):
            m[i] = b1 * m[i] + (1 - b1) * g
            v2[i] = b2 * v2[i] + (1 - b2) * g * g
            var[i] = var[i] - lr_t * m[i] / (np.sqrt(v2[i]) + eps)
            np.testing.assert_allclose(values[t][i], var[i], rtol=1e-10)


async def test_adam_advances_its_beta_powers_after_each_step() -> None:
    model = Regression()
    with model.graph.as_default():
        opt = ac.train.AdamOptimizer(0.1, beta1=0.5, beta2=0.25)
        train = opt.minimize(model.loss)
        init = ac.global_variables_initializer()
    b1p, b2p = (
        next(v for v in ac.global_variables(model.graph) if v.op.name == n)
        for n in ("beta1_power", "beta2_power")
    )
    async with ac.Session(model.graph) as sess:
        await sess.run(init)
        assert await sess.run([b1p, b2p]) == pytest.approx([0.5, 0.25])
        for _ in range(2):
            await sess.run(train, model.feed)
        assert await sess.run([b1p, b2p]) == pytest.approx([0.125, 0.25**3])


def test_slot_variables_are_named_like_tf_and_are_global_but_not_trainable() -> None:
    model = Regression()
    with model.graph.as_default():
        mom = ac.train.MomentumOptimizer(0.1, 0.9)
        mom.minimize(model.loss, var_list=[model.w, model.b])
        adam = ac.train.AdamOptimizer()
        adam.minimize(model.loss, var_list=[model.w])
    names = {v.op.name for v in ac.global_variables(model.graph)}
    assert {"w/Momentum", "b/Momentum", "w/Adam", "w/Adam_1", "beta1_power", "beta2_power"} <= names
    trainable = {v.op.name for v in ac.trainable_variables(model.graph)}
    assert trainable == {"w", "b", "unused"}
    assert mom.get_slot(model.w, "momentum").op.name == "w/Momentum"
    assert (
        adam.get_slot(model.w, "m").op.name == "w/Adam" and adam.get_slot(model.w, "v").op.name == "w/Adam_1"
    )
    assert adam.get_slot(model.b, "m") is None
    assert adam.get_slot_names() == ["m", "v"]
    update_types = {
        op.type for op in model.graph.get_operations() if op.name.startswith(("Momentum/", "Adam/"))
    }
    assert {"ApplyMomentum", "ApplyAdam", "Assign"} <= update_types
    assert model.graph.get_operation_by_name("Momentum/update_w/ApplyMomentum").type == "ApplyMomentum"


async def test_global_step_counts_the_training_steps() -> None:
    model = Regression()
    with model.graph.as_default():
        step = ac.train.get_or_create_global_step()
        assert ac.train.get_or_create_global_step() is step and ac.train.get_global_step() is step
        train = ac.train.GradientDescentOptimizer(0.01).minimize(model.loss, global_step=step)
        init = ac.global_variables_initializer()
    assert step.dtype == np.int64 and not step.trainable
    assert train.type == "AssignAdd"
    async with ac.Session(model.graph) as sess:
        await sess.run(init)
        for _ in range(3):
            await sess.run(train, model.feed)
        assert int(await sess.run(step)) == 3


async def test_compute_gradients_pairs_each_variable_with_its_gradient_or_none() -> None:
    model = Regression()
    with model.graph.as_default():
        opt = ac.train.GradientDescentOptimizer(0.5)
        pairs = opt.compute_gradients(model.loss)
        assert [v for _, v in pairs] == [model.w, model.b, model.u]
        assert pairs[2][0] is None and pairs[0][0] is not None
        with pytest.raises(ValueError, match="No gradients provided"):
            opt.apply_gradients([(None, model.u)])
        with pytest.raises(ValueError, match="No gradients provided"):
            opt.minimize(model.loss, var_list=[model.u])
        train = opt.apply_gradients(pairs, name="sgd")
        init = ac.global_variables_initializer()
    assert train.name == "sgd"
    async with ac.Session(model.graph) as sess:
        await sess.run(init)
        await sess.run(train, model.feed)
        u, w = await sess.run([model.u, model.w])
    np.testing.assert_array_equal(u, [1.0])
    assert not np.allclose(w, 0.1)


async def test_a_learning_rate_tensor_is_read_at_each_step() -> None:
    model = Regression(ac.float32)
    with model.graph.as_default():
        lr = ac.placeholder(ac.float32, (), name="lr")
        train = ac.train.GradientDescentOptimizer(lr).minimize(model.loss)
        init = ac.global_variables_initializer()
    async with ac.Session(model.graph) as sess:
        await sess.run(init)
        before = await sess.run(model.w)
        await sess.run(train, {**model.feed, lr: 0.0})
        np.testing.assert_array_equal(await sess.run(model.w), before)
        await sess.run(train, {**model.feed, lr: 0.1})
        after = await sess.run(model.w)
    assert after.dtype == np.float32 and not np.allclose(after, before)


@pytest.mark.parametrize(
    "make_opt,steps",
    [
        (lambda: ac.train.GradientDescentOptimizer(0.2), 300),
        (lambda: ac.train.MomentumOptimizer(0.05, 0.9), 200),
        (lambda: ac.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True), 200),
        (lambda: ac.train.AdamOptimizer(0.1), 300),
    ],
    ids=["sgd", "momentum", "nesterov", "adam"],
)
async def test_training_a_linear_regression_reaches_a_low_loss(
    make_opt: Callable[[], Any], steps: int
) -> None:
    model = Regression(ac.float32)
    with model.graph.as_default():
        train = make_opt().minimize(model.loss)
        init = ac.global_variables_initializer()
    async with ac.Session(model.graph) as sess:
        await sess.run(init)
        first = await sess.run(model.loss, model.feed)
        for _ in range(steps):
            await sess.run(train, model.feed)
        last, w, b = await sess.run([model.loss, model.w, model.b], model.feed)
    assert last < 1e-4 < first
    np.testing.assert_allclose(w, W_TRUE, atol=1e-2)
    np.testing.assert_allclose(b, B_TRUE, atol=1e-2)
