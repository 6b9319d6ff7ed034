"""tf.data in graph mode: datasets built from numpy, generators and files, transformed, and
pulled through one-shot, initializable and reinitializable iterators, checked against numpy."""

from __future__ import annotations

import gzip
import threading

import numpy as np
import pytest

import antcolony as ac
import antcolony.compat.v1 as tf


def _drain(sess, next_element, feed=None):
    out = []
    while True:
        try:
            out.append(sess.run(next_element, feed))
        except tf.errors.OutOfRangeError:
            return out


def test_slices_map_batch_give_numpy_values_and_tf_static_shapes():
    images = np.arange(5 * 4, dtype=np.uint8).reshape(5, 4)
    labels = np.arange(5, dtype=np.int64)
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices((images, labels))
        ds = ds.map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y)).batch(2)
        assert tf.data.get_output_types(ds) == (tf.float32, tf.int64)
        x, y = tf.data.make_one_shot_iterator(ds).get_next()
        assert x.shape.as_list() == [None, 4] and y.shape.as_list() == [None]
        with tf.Session() as sess:
            batches = _drain(sess, (x, y))
    assert [len(b[1]) for b in batches] == [2, 2, 1]
    np.testing.assert_allclose(np.concatenate([b[0] for b in batches]), images.astype(np.float32) / 255.0)
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), labels)


def test_dict_elements_and_drop_remainder_give_known_batch_dims():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices({"a": np.arange(7.0), "b": np.ones((7, 3), np.int32)})
        ds = ds.batch(3, drop_remainder=True)
        el = ds.make_one_shot_iterator().get_next()
        assert el["a"].shape.as_list() == [3] and el["b"].shape.as_list() == [3, 3]
        with tf.Session() as sess:
            out = _drain(sess, el)
    assert len(out) == 2
    np.testing.assert_array_equal(out[1]["a"], [3.0, 4.0, 5.0])


def test_end_of_data_raises_out_of_range_again_and_again():
    with tf.Graph().as_default():
        nxt = tf.data.Dataset.range(2).make_one_shot_iterator().get_next()
        assert nxt.dtype == tf.int64
        with tf.Session() as sess:
            assert [sess.run(nxt) for _ in range(2)] == [0, 1]
            for _ in range(2):
                with pytest.raises(tf.errors.OutOfRangeError):
                    sess.run(nxt)


def test_range_zip_concatenate_filter_take_skip_repeat():
    with tf.Graph().as_default():
        a = tf.data.Dataset.range(10)
        b = tf.data.Dataset.range(100, 120, 2)
        ds = tf.data.Dataset.zip((a, b)).filter(lambda x, y: tf.equal(x % 3, 0))
        ds = ds.concatenate(tf.data.Dataset.from_tensors((np.int64(-1), np.int64(-2))))
        ds = ds.skip(1).take(3).repeat(2)
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            out = [tuple(int(v) for v in e) for e in _drain(sess, nxt)]
    assert out == [(3, 106), (6, 112), (9, 118)] * 2


def test_padded_batch_pads_to_the_longest_and_to_given_shapes():
    def gen():
        for n in (1, 3, 2):
            yield np.arange(n, dtype=np.int32) + 1, b"s" * n

    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_generator(gen, (tf.int32, tf.string), ([None], []))
        longest = ds.padded_batch(3, padded_shapes=([None], []), padding_values=(-1, b""))
        fixed = ds.padded_batch(2, padded_shapes=([5], []))
        n1 = longest.make_one_shot_iterator().get_next()
        n2 = fixed.make_one_shot_iterator().get_next()
        assert n1[0].shape.as_list() == [None, None] and n2[0].shape.as_list() == [None, 5]
        with tf.Session() as sess:
            v1, s1 = sess.run(n1)
            v2 = _drain(sess, n2[0])
    np.testing.assert_array_equal(v1, [[1, -1, -1], [1, 2, 3], [1, 2, -1]])
    assert list(s1) == [b"s", b"sss", b"ss"]
    np.testing.assert_array_equal(v2[0], [[1, 0, 0, 0, 0], [1, 2, 3, 0, 0]])
    assert v2[1].shape == (1, 5)


def test_batch_of_unequal_shapes_is_an_invalid_argument_naming_padded_batch():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_generator(lambda: iter([[1], [1, 2]]), tf.int32, [None]).batch(2)
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="padded_batch"):
            sess.run(nxt)


def _epochs(seed, reshuffle, graph_seed=None):
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        ds = tf.data.Dataset.range(20).shuffle(8, seed=seed, reshuffle_each_iteration=reshuffle).repeat(2)
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            out = [int(v) for v in _drain(sess, nxt)]
    return out[:20], out[20:]


def test_shuffle_permutes_is_reproducible_with_a_seed_and_reshuffles_each_epoch():
    first, second = _epochs(seed=3, reshuffle=True)
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert first != list(range(20)) and first != second
    assert _epochs(seed=3, reshuffle=True) == (first, second)
    same_a, same_b = _epochs(seed=3, reshuffle=False)
    assert same_a == same_b and sorted(same_a) == list(range(20))


def test_initializable_iterator_takes_fed_placeholders_and_restarts():
    with tf.Graph().as_default():
        xs = tf.placeholder(tf.float32, [None, 2])
        it = tf.data.Dataset.from_tensor_slices(xs).batch(2).make_initializable_iterator()
        nxt = it.get_next()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="initializ"):
                sess.run(nxt)
            data = np.arange(6, dtype=np.float32).reshape(3, 2)
            sess.run(it.initializer, {xs: data})
            np.testing.assert_array_equal(sess.run(nxt), data[:2])
            sess.run(it.initializer, {xs: data * 10})
            out = _drain(sess, nxt)
    np.testing.assert_array_equal(np.concatenate(out), data * 10)


def test_reinitializable_iterator_switches_between_datasets():
    with tf.Graph().as_default():
        train = tf.data.Dataset.range(5).map(lambda x: x * 2)
        val = tf.data.Dataset.range(3)
        it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
        nxt = it.get_next()
        to_train, to_val = it.make_initializer(train), it.make_initializer(val)
        with pytest.raises(ValueError, match="do not match"):
            it.make_initializer(tf.data.Dataset.from_tensors(np.float32(1)))
        with tf.Session() as sess:
            sess.run(to_train)
            assert [int(v) for v in _drain(sess, nxt)] == [0, 2, 4, 6, 8]
            sess.run(to_val)
            assert [int(v) for v in _drain(sess, nxt)] == [0, 1, 2]


def test_generator_checks_yielded_shapes_and_runs_off_the_event_loop():
    threads = []

    def gen():
        threads.append(threading.current_thread().name)
        yield np.zeros(3, np.float32)
        yield np.zeros(4, np.float32)

    with tf.Graph().as_default():
        nxt = (
            tf.data.Dataset.from_generator(gen, tf.float32, tf.TensorShape([3]))
            .make_one_shot_iterator()
            .get_next()
        )
        assert nxt.shape.as_list() == [3]
        with tf.Session() as sess:
            assert sess.run(nxt).shape == (3,)
            with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
                sess.run(nxt)
    assert threads and "antcolony-loop" not in threads[0] and threads[0] != "MainThread"


def test_prefetch_fills_its_buffer_on_a_producer_thread_and_stops_with_the_session():
    produced = []

    def gen():
        for i in range(1000):
            produced.append(threading.current_thread().name)
            yield i

    with tf.Graph().as_default():
        nxt = (
            tf.data.Dataset.from_generator(gen, tf.int64, []).prefetch(4).make_one_shot_iterator().get_next()
        )
        sess = tf.Session()
        assert sess.run(nxt) == 0
        sess.close()
    assert set(produced) == {"antcolony-prefetch"}
    count = len(produced)
    assert count < 1000  # bounded by the buffer, not run ahead to the end
    for t in threading.enumerate():
        if t.name == "antcolony-prefetch":
            t.join(timeout=5)
    assert not [t for t in threading.enumerate() if t.name == "antcolony-prefetch"]


def test_parallel_map_with_py_func_keeps_the_input_order():
    def slow_square(x):
        return np.int64(x * x)

    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(40).map(
            lambda x: tf.py_func(slow_square, [x], tf.int64), num_parallel_calls=tf.data.experimental.AUTOTUNE
        )
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            out = [int(v) for v in _drain(sess, nxt)]
    assert out == [i * i for i in range(40)]


def test_cache_replays_the_first_pass():
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)

    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_generator(gen, tf.int64, []).cache().repeat(3)
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            out = [int(v) for v in _drain(sess, nxt)]
    assert out == [0, 1, 2] * 3 and len(calls) == 1


def test_text_line_dataset_reads_plain_and_gzip_files(tmp_path):
    plain, packed = tmp_path / "a.txt", tmp_path / "b.txt.gz"
    plain.write_bytes(b"one\ntwo\r\nthree")
    with gzip.open(packed, "wb") as f:
        f.write(b"four\nfive\n")
    with tf.Graph().as_default():
        a = tf.data.TextLineDataset([str(plain)]).make_one_shot_iterator().get_next()
        b = tf.data.TextLineDataset(str(packed), compression_type="GZIP").make_one_shot_iterator().get_next()
        missing = tf.data.TextLineDataset(str(tmp_path / "nope")).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert _drain(sess, a) == [b"one", b"two", b"three"]
            assert _drain(sess, b) == [b"four", b"five"]
            with pytest.raises(tf.errors.NotFoundError, match="nope"):
                sess.run(missing)


def test_map_function_cannot_capture_the_programs_tensors():
    with tf.Graph().as_default():
        outer = tf.constant(2.0)
        with pytest.raises(ValueError, match="own graph"):
            tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32) * outer)


async def test_async_sessions_pull_from_ac_data_iterators():
    g = ac.Graph()
    with g.as_default():
        nxt = ac.data.Dataset.from_tensor_slices(np.arange(4.0)).batch(3).make_one_shot_iterator().get_next()
    async with ac.Session(g) as sess:
        np.testing.assert_array_equal(await sess.run(nxt), [0.0, 1.0, 2.0])
        np.testing.assert_array_equal(await sess.run(nxt), [3.0])
        with pytest.raises(ac.errors.OutOfRangeError):
            await sess.run(nxt)


def test_list_files_and_interleave_read_several_files_round_robin(tmp_path):
    for name, rows in (("a", 3), ("b", 2), ("c", 1)):
        (tmp_path / f"{name}.txt").write_bytes(b"".join(b"%s%d\n" % (name.encode(), i) for i in range(rows)))
    with tf.Graph().as_default():
        files = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
        lines = files.interleave(tf.data.TextLineDataset, cycle_length=2, block_length=1)
        n_files = files.make_one_shot_iterator().get_next()
        n_lines = lines.make_one_shot_iterator().get_next()
        flat = files.flat_map(tf.data.TextLineDataset).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert [f.rsplit(b"/", 1)[1] for f in _drain(sess, n_files)] == [b"a.txt", b"b.txt", b"c.txt"]
            assert _drain(sess, n_lines) == [b"a0", b"b0", b"a1", b"b1", b"a2", b"c0"]
            assert _drain(sess, flat) == [b"a0", b"a1", b"a2", b"b0", b"b1", b"c0"]


def test_a_sparse_tensor_returned_by_a_map_function_is_refused_with_the_fix():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensors(np.array([b"x"], dtype=object))
        with pytest.raises(ValueError, match=r"sparse\.to_dense"):
            ds.map(lambda s: tf.parse_single_example(s[0], {"v": tf.VarLenFeature(tf.int64)})["v"])


async def test_a_waiting_input_pipeline_does_not_block_the_event_loop():
    import asyncio

    release = threading.Event()

    def gen():
        # Waits for a coroutine on the session's loop: if pulling ran on the loop, it never would.
        if not release.wait(timeout=30):
            raise RuntimeError("the loop was blocked")
        yield np.float32(1.0)

    g = ac.Graph()
    with g.as_default():
        nxt = ac.data.Dataset.from_generator(gen, ac.float32, []).make_one_shot_iterator().get_next()

    async def let_go():
        await asyncio.sleep(0.05)
        release.set()

    async with ac.Session(g) as sess:
        value, _ = await asyncio.wait_for(asyncio.gather(sess.run(nxt), let_go()), timeout=20)
    assert value == 1.0


def test_experimental_fused_transformations_and_generator_args():
    def gen(n, scale):
        for i in range(int(n)):
            yield np.float32(i * scale)

    with tf.Graph().as_default():
        base = tf.data.Dataset.from_generator(gen, tf.float32, [], args=(6, 0.5))
        batched = base.apply(tf.data.experimental.map_and_batch(lambda x: x * 2.0, 4, drop_remainder=True))
        shuffled = base.apply(tf.data.experimental.shuffle_and_repeat(6, count=2, seed=5))
        files = tf.data.Dataset.range(2).apply(
            tf.data.experimental.parallel_interleave(lambda i: tf.data.Dataset.range(i * 10, i * 10 + 3), 2)
        )
        b = batched.make_one_shot_iterator().get_next()
        s = shuffled.make_one_shot_iterator().get_next()
        f = files.make_one_shot_iterator().get_next()
        assert b.shape.as_list() == [4]
        with tf.Session() as sess:
            assert [list(v) for v in _drain(sess, b)] == [[0.0, 1.0, 2.0, 3.0]]
            values = [float(v) for v in _drain(sess, s)]
            assert [int(v) for v in _drain(sess, f)] == [0, 10, 1, 11, 2, 12]
    assert sorted(values[:6]) == sorted(values[6:]) == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    assert values[:6] != values[6:]


def test_tfrecord_dataset_reads_a_dataset_of_filenames(tmp_path):
    for name in ("a", "b"):
        with tf.io.TFRecordWriter(str(tmp_path / f"{name}.tfrecord")) as w:
            for i in range(2):
                w.write(b"%s%d" % (name.encode(), i))
    with tf.Graph().as_default():
        files = tf.data.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=False)
        nxt = tf.data.TFRecordDataset(files).make_one_shot_iterator().get_next()
        with pytest.raises(ValueError, match="scalar string"):
            tf.data.TFRecordDataset(tf.data.Dataset.range(3))
        with tf.Session() as sess:
            assert _drain(sess, nxt) == [b"a0", b"a1", b"b0", b"b1"]
