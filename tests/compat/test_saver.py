"""tf.train.Saver: safetensors checkpoints with TF names, rotation, state file, restore errors."""

from __future__ import annotations

import os

import numpy as np
import pytest
import safetensors.numpy

import antcolony as ac
import antcolony.compat.v1 as tf


def _model():
    g = tf.Graph()
    with g.as_default():
        with tf.variable_scope("dense"):
            k = tf.get_variable("kernel", [3, 2], initializer=tf.random_normal_initializer(seed=1))
            b = tf.get_variable("bias", [2], initializer=tf.zeros_initializer())
        step = tf.train.get_or_create_global_step()
        n = tf.Variable(np.array([1, 2, 3], np.int32), name="counts")
        init = tf.global_variables_initializer()
    return g, k, b, step, n, init


def test_save_then_restore_into_a_fresh_session_gives_back_every_value(tmp_path):
    g, k, b, step, n, init = _model()
    with g.as_default():
        saver = tf.train.Saver()
        bump = [tf.assign_add(b, [1.0, 2.0]), tf.assign_add(step, 5)]
    with tf.Session(graph=g) as sess:
        sess.run(init)
        sess.run(bump)
        before = sess.run([k, b, step, n])
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"))
    assert prefix == str(tmp_path / "model.ckpt")
    with tf.Session(graph=g) as sess:
        saver.restore(sess, prefix)
        after = sess.run([k, b, step, n])
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x, y)
        assert np.asarray(x).dtype == np.asarray(y).dtype


def test_the_file_is_plain_safetensors_with_tf_variable_names(tmp_path):
    g, k, _b, _step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        kv = sess.run(k)
        prefix = saver.save(sess, str(tmp_path / "m"), global_step=7)
    data = safetensors.numpy.load_file(prefix + ".safetensors")
    assert set(data) == {"dense/kernel", "dense/bias", "global_step", "counts"}
    np.testing.assert_array_equal(data["dense/kernel"], kv)
    np.testing.assert_array_equal(data["counts"], [1, 2, 3])
    assert data["global_step"].shape == () and data["global_step"].dtype == np.int64


def test_global_step_suffix_from_an_int_or_the_global_step_variable(tmp_path):
    g, _k, _b, step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver()
        inc = tf.assign_add(step, 1)
    with tf.Session(graph=g) as sess:
        sess.run(init)
        assert saver.save(sess, str(tmp_path / "a"), global_step=42) == str(tmp_path / "a-42")
        for _ in range(3):
            sess.run(inc)
        assert saver.save(sess, str(tmp_path / "a"), global_step=step) == str(tmp_path / "a-3")
    assert safetensors.numpy.load_file(str(tmp_path / "a-3.safetensors"))["global_step"] == 3


def test_values_computed_as_strided_views_are_saved_in_logical_order(tmp_path):
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.zeros((3, 2), np.float32), name="v")
        fill = v.assign(tf.transpose(tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))))
        saver = tf.train.Saver()
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        sess.run(fill)
        path = saver.save(sess, str(tmp_path / "t"))
    np.testing.assert_array_equal(
        safetensors.numpy.load_file(path + ".safetensors")["v"],
        np.arange(6, dtype=np.float32).reshape(2, 3).T,
    )


def test_pad_step_number_uses_eight_digits(tmp_path):
    g, _k, b, _step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver(var_list=[b], pad_step_number=True)
    with tf.Session(graph=g) as sess:
        sess.run(init)
        assert saver.save(sess, str(tmp_path / "p"), global_step=12).endswith("p-00000012")


def test_max_to_keep_deletes_the_oldest_and_the_state_file_tracks_the_kept_ones(tmp_path):
    g, _k, _b, _step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver(max_to_keep=2)
    d = str(tmp_path)
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for i in range(1, 5):
            saver.save(sess, os.path.join(d, "model"), global_step=i)
    files = sorted(f for f in os.listdir(d) if f.endswith(".safetensors"))
    assert files == ["model-3.safetensors", "model-4.safetensors"]
    assert saver.last_checkpoints == [os.path.join(d, "model-3"), os.path.join(d, "model-4")]
    assert tf.train.latest_checkpoint(d) == os.path.join(d, "model-4")
    state = tf.train.get_checkpoint_state(d)
    assert state.model_checkpoint_path == os.path.join(d, "model-4")
    assert state.all_model_checkpoint_paths == [os.path.join(d, "model-3"), os.path.join(d, "model-4")]
    text = (tmp_path / "checkpoint").read_text()
    assert 'model_checkpoint_path: "model-4"' in text
    assert 'all_model_checkpoint_paths: "model-3"' in text


def test_max_to_keep_none_keeps_everything(tmp_path):
    g, _k, _b, _step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver(max_to_keep=None)
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for i in range(7):
            saver.save(sess, str(tmp_path / "m"), global_step=i)
    assert len([f for f in os.listdir(tmp_path) if f.endswith(".safetensors")]) == 7


def test_latest_checkpoint_and_state_of_an_empty_directory_are_none(tmp_path):
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None


def test_the_state_file_survives_a_moved_directory(tmp_path):
    g, _k, _b, _step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver()
    src = tmp_path / "run1"
    src.mkdir()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        saver.save(sess, str(src / "model"), global_step=1)
    moved = tmp_path / "moved"
    src.rename(moved)
    assert tf.train.latest_checkpoint(str(moved)) == str(moved / "model-1")


def test_a_var_list_dict_saves_under_the_given_names_and_restores_across_graphs(tmp_path):
    g1 = tf.Graph()
    with g1.as_default():
        w = tf.Variable([1.0, 2.0], name="old_name")
        saver1 = tf.train.Saver({"shared/w": w})
    with tf.Session(graph=g1) as sess:
        sess.run(w.initializer)
        path = saver1.save(sess, str(tmp_path / "x"))
    g2 = tf.Graph()
    with g2.as_default():
        w2 = tf.Variable([0.0, 0.0], name="new_name")
        other = tf.Variable(5.0, name="other")
        saver2 = tf.train.Saver({"shared/w": w2})
    with tf.Session(graph=g2) as sess:
        sess.run(other.initializer)
        saver2.restore(sess, path)
        np.testing.assert_allclose(sess.run(w2), [1.0, 2.0])
        assert sess.run(other) == pytest.approx(5.0)


def test_restoring_a_variable_missing_from_the_checkpoint_names_it(tmp_path):
    g1 = tf.Graph()
    with g1.as_default():
        a = tf.Variable(1.0, name="a")
        saver = tf.train.Saver()
    with tf.Session(graph=g1) as sess:
        sess.run(a.initializer)
        path = saver.save(sess, str(tmp_path / "c"))
    g2 = tf.Graph()
    with g2.as_default():
        tf.Variable(1.0, name="a")
        tf.Variable(2.0, name="extra/b")
        saver2 = tf.train.Saver()
    with tf.Session(graph=g2) as sess:
        with pytest.raises(
            tf.errors.NotFoundError, match=r"Key extra/b not found in checkpoint.*holds a"
        ) as info:
            saver2.restore(sess, path)
        assert info.value.node_name == "extra/b"


def test_restoring_a_mismatched_shape_or_dtype_names_the_variable_and_both(tmp_path):
    g1 = tf.Graph()
    with g1.as_default():
        tf.Variable([1.0, 2.0, 3.0], name="w")
        tf.Variable(np.int32(1), name="n")
        init = tf.global_variables_initializer()
        saver = tf.train.Saver()
    with tf.Session(graph=g1) as sess:
        sess.run(init)
        path = saver.save(sess, str(tmp_path / "c"))
    g2 = tf.Graph()
    with g2.as_default():
        tf.Variable([1.0, 2.0], name="w")
        saver_w = tf.train.Saver()
    with (
        tf.Session(graph=g2) as sess,
        pytest.raises(
            tf.errors.InvalidArgumentError, match=r"w with shape \(3,\).*variable w has shape \(2,\)"
        ),
    ):
        saver_w.restore(sess, path)
    g3 = tf.Graph()
    with g3.as_default():
        tf.Variable(np.float32(1), name="n")
        saver_n = tf.train.Saver()
    with (
        tf.Session(graph=g3) as sess,
        pytest.raises(tf.errors.InvalidArgumentError, match=r"n as int32 but variable n is float32"),
    ):
        saver_n.restore(sess, path)


def test_restoring_from_nothing_or_a_corrupt_file_is_a_clear_error(tmp_path):
    g, _k, _b, _step, _n, _init = _model()
    with g.as_default():
        saver = tf.train.Saver()
    with tf.Session(graph=g) as sess:
        with pytest.raises(tf.errors.NotFoundError, match=r"no checkpoint at .*nothing"):
            saver.restore(sess, str(tmp_path / "nothing"))
        with pytest.raises(tf.errors.InvalidArgumentError, match="None"):
            saver.restore(sess, None)
        (tmp_path / "bad.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{garbage")
        with pytest.raises(tf.errors.DataLossError, match="corrupt"):
            saver.restore(sess, str(tmp_path / "bad"))


def test_saving_into_a_missing_directory_is_an_error(tmp_path):
    g, _k, _b, _step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        with pytest.raises(tf.errors.NotFoundError, match="doesn't exist"):
            saver.save(sess, str(tmp_path / "no" / "such" / "m"))


def test_bad_var_lists_are_errors():
    g = tf.Graph()
    with g.as_default():
        with pytest.raises(ValueError, match="no variables to save"):
            tf.train.Saver()
        a = tf.Variable(1.0, name="a")
        with pytest.raises(ValueError, match="'a' twice"):
            tf.train.Saver([a, a])
        with pytest.raises(TypeError, match=r"not an ac\.Variable"):
            tf.train.Saver([a.value()])
    assert tf.train.Saver(allow_empty=True, var_list=[]).last_checkpoints == []


def test_a_planted_symlink_at_the_checkpoint_path_is_replaced_not_followed(tmp_path):
    g, _k, _b, _step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, tmp_path / "m.safetensors")
    os.symlink(victim, tmp_path / "checkpoint")
    with tf.Session(graph=g) as sess:
        sess.run(init)
        saver.save(sess, str(tmp_path / "m"))
    assert victim.read_text() == "precious"
    assert not os.path.islink(tmp_path / "m.safetensors") and not os.path.islink(tmp_path / "checkpoint")
    assert "dense/kernel" in safetensors.numpy.load_file(str(tmp_path / "m.safetensors"))
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


async def test_async_save_and_restore_with_the_async_session(tmp_path):
    g, _k, b, step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver()
        set_b = b.assign([7.0, 8.0])
    async with ac.Session(g) as sess:
        await sess.run(init)
        await sess.run(set_b)
        with pytest.raises(TypeError, match=r"await saver\.save_async"):
            saver.save(sess, str(tmp_path / "m"))
        prefix = await saver.save_async(sess, str(tmp_path / "m"), global_step=step)
    assert prefix.endswith("m-0")
    async with ac.Session(g) as sess:
        await saver.restore_async(sess, tf.train.latest_checkpoint(str(tmp_path)))
        np.testing.assert_allclose(await sess.run(b), [7.0, 8.0])


def test_a_failed_write_leaves_the_previous_checkpoint_whole_and_no_temp_files(tmp_path, monkeypatch):
    g, _k, b, _step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        path = saver.save(sess, str(tmp_path / "m"))
        good = (tmp_path / "m.safetensors").read_bytes()
        sess.run(b.assign([9.0, 9.0]))

        def broken_fsync(fd):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "fsync", broken_fsync)
        with pytest.raises(tf.errors.ResourceExhaustedError, match=r"m\.safetensors.*No space"):
            saver.save(sess, path)
    assert (tmp_path / "m.safetensors").read_bytes() == good
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_keep_checkpoint_every_n_hours_keeps_files_out_of_the_rotation(tmp_path):
    g, _k, _b, _step, _n, init = _model()
    with g.as_default():
        saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=0.0)
    with tf.Session(graph=g) as sess:
        sess.run(init)
        for i in range(3):
            saver.save(sess, str(tmp_path / "m"), global_step=i)
    assert saver.last_checkpoints == [str(tmp_path / "m-2")]
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".safetensors")) == [
        "m-0.safetensors",
        "m-1.safetensors",
        "m-2.safetensors",
    ]
