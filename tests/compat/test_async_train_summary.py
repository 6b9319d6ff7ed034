"""Checkpoints and summaries from the async API alone: ``ac.train.Saver`` (``save_async`` /
``restore_async``), ``ac.train.latest_checkpoint`` and ``ac.summary``, with ``ac.Session``."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import antcolony as ac


def _model() -> tuple[ac.Graph, ac.Tensor, ac.Operation, ac.Operation]:
    g = ac.Graph()
    with g.as_default():
        w = ac.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
        step = ac.train.get_or_create_global_step()
        bump = ac.group(ac.assign(w, w * 10.0), ac.assign_add(step, 1))
        init = ac.global_variables_initializer()
    return g, w, bump, init


async def test_save_async_and_restore_async_round_trip_through_ac_train(tmp_path):
    g, w, bump, init = _model()
    with g.as_default():
        saver = ac.train.Saver(max_to_keep=2)
        step = ac.train.get_global_step()
    start = np.arange(6, dtype=np.float32).reshape(2, 3)
    async with ac.Session(g) as sess:
        await sess.run(init)
        first = await saver.save_async(sess, str(tmp_path / "model"), global_step=step)
        await sess.run(bump)
        second = await saver.save_async(sess, str(tmp_path / "model"), global_step=step)
    assert first.endswith("model-0") and second.endswith("model-1")
    assert ac.train.latest_checkpoint(str(tmp_path)) == second
    assert ac.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == [first, second]
    async with ac.Session(g) as sess:
        await saver.restore_async(sess, first)
        np.testing.assert_array_equal(await sess.run(w), start)
        await saver.restore_async(sess, ac.train.latest_checkpoint(str(tmp_path)))
        np.testing.assert_array_equal(await sess.run(w), start * 10.0)
        assert await sess.run(step) == 1


async def test_summaries_from_the_async_session_land_in_an_event_file(tmp_path):
    pytest.importorskip("tensorboardX")
    from .event_reader import read_events

    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [])
        ac.summary.scalar("loss", x * 2.0)
        merged = ac.summary.merge_all()
    writer = ac.summary.FileWriter(str(tmp_path))
    async with ac.Session(g) as sess:
        for step in range(3):
            writer.add_summary(await sess.run(merged, {x: float(step)}), global_step=step)
    writer.close()
    (path,) = glob.glob(os.path.join(str(tmp_path), "events.out.tfevents.*"))
    scalars = [(e.step, v.tag, v.simple_value) for e in read_events(path) for v in e.summary.value]
    assert scalars == [(0, "loss", 0.0), (1, "loss", 2.0), (2, "loss", 4.0)]
    assert ac.summary.FileWriterCache.get(str(tmp_path / "cached")) is ac.summary.FileWriterCache.get(
        str(tmp_path / "cached")
    )
    ac.summary.FileWriterCache.clear()
