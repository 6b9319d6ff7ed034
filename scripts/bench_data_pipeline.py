"""tf.data input pipelines: does prefetch overlap input work with the step, and how fast are
TFRecord reading and Example parsing?

1. Overlap: a generator that spends ``--input-ms`` per element (sleeping, as I/O would) feeds a
   step that spends ``--step-ms`` (a py_func sleeping, as a device would). Without prefetch a step
   costs about the sum; with ``prefetch(2)`` about the larger. Prints both, the speedup and the
   ideal (sum / max); MISSED when the speedup is under 80 % of the ideal.
2. Files: ``--records`` Examples of ``--floats`` float32 values each, written to a TFRecord file;
   prints MB/s of ``tf_record_iterator`` (framing + CRC-32C) and elements/s of
   TFRecordDataset -> map(parse_single_example) -> batch(128), and, when TensorFlow is installed,
   TF's figures on the same file in the same run and the ratios.

    python scripts/bench_data_pipeline.py [--steps 30] [--input-ms 10] [--step-ms 10] [--records 20000] [--floats 784]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

import numpy as np

import antcolony.compat.v1 as tf


def overlap(steps: int, input_s: float, step_s: float, prefetch: bool) -> float:
    def gen() -> Any:
        for i in range(steps + 1):
            time.sleep(input_s)
            yield np.float32(i)

    def work(x: np.ndarray) -> np.ndarray:
        time.sleep(step_s)
        return x

    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_generator(gen, tf.float32, [])
        if prefetch:
            ds = ds.prefetch(2)
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        out = tf.py_func(work, [nxt], tf.float32)
        with tf.Session() as sess:
            sess.run(out)  # first element and executor build: not timed
            start = time.perf_counter()
            for _ in range(steps):
                sess.run(out)
            return (time.perf_counter() - start) / steps


def write_examples(path: str, records: int, floats: int) -> None:
    rng = np.random.default_rng(0)
    with tf.io.TFRecordWriter(path) as w:
        for i in range(records):
            ex = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "x": tf.train.Feature(
                            float_list=tf.train.FloatList(value=rng.random(floats, np.float32))
                        ),
                        "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10])),
                    }
                )
            )
            w.write(ex.SerializeToString())


def read_rate(module: Any, path: str) -> float:
    start = time.perf_counter()
    total = sum(len(r) for r in module.io.tf_record_iterator(path))
    return total / (time.perf_counter() - start) / 1e6


def parse_rate(module: Any, path: str, floats: int) -> float:
    feats = {
        "x": module.io.FixedLenFeature([floats], module.float32),
        "y": module.io.FixedLenFeature([], module.int64),
    }

    def parse(record: Any) -> Any:
        p = module.io.parse_single_example(record, feats)
        return p["x"], p["y"]

    with module.Graph().as_default():
        ds = module.data.TFRecordDataset(path).map(parse).batch(128)
        x, _ = module.data.make_one_shot_iterator(ds).get_next()
        count = 0
        with module.Session() as sess:
            start = time.perf_counter()
            try:
                while True:
                    count += len(sess.run(x))
            except module.errors.OutOfRangeError:
                pass
            return count / (time.perf_counter() - start)


def tensorflow_v1() -> Any:
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow

        v1 = tensorflow.compat.v1
        v1.disable_v2_behavior()
        return v1
    except ImportError:
        return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--input-ms", type=float, default=10.0)
    p.add_argument("--step-ms", type=float, default=10.0)
    p.add_argument("--records", type=int, default=20000)
    p.add_argument("--floats", type=int, default=784)
    args = p.parse_args()

    input_s, step_s = args.input_ms / 1000, args.step_ms / 1000
    serial = overlap(args.steps, input_s, step_s, prefetch=False)
    overlapped = overlap(args.steps, input_s, step_s, prefetch=True)
    speedup, ideal = serial / overlapped, (input_s + step_s) / max(input_s, step_s)
    print(f"overlap: input {args.input_ms} ms + step {args.step_ms} ms per element")
    print(f"  no prefetch   {serial * 1e3:7.2f} ms/step")
    print(f"  prefetch(2)   {overlapped * 1e3:7.2f} ms/step")
    mark = "" if speedup >= 0.8 * ideal else "   MISSED (target: 80 % of the ideal)"
    print(f"  speedup {speedup:.2f}x (ideal {ideal:.2f}x){mark}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "examples.tfrecord")
        write_examples(path, args.records, args.floats)
        size = os.path.getsize(path) / 1e6
        ours_read, ours_parse = read_rate(tf, path), parse_rate(tf, path, args.floats)
        print(f"files: {args.records} Examples of {args.floats} floats, {size:.1f} MB")
        print(f"  tf_record_iterator      antcolony {ours_read:8.1f} MB/s")
        print(f"  parse + batch(128)      antcolony {ours_parse:8.0f} elements/s")
        v1 = tensorflow_v1()
        if v1 is not None:
            tf_read, tf_parse = read_rate(v1, path), parse_rate(v1, path, args.floats)
            print(
                f"  tf_record_iterator     tensorflow {tf_read:8.1f} MB/s  (antcolony/TF {ours_read / tf_read:.2f})"
            )
            print(
                f"  parse + batch(128)     tensorflow {tf_parse:8.0f} elements/s  (antcolony/TF {ours_parse / tf_parse:.2f})"
            )


if __name__ == "__main__":
    main()
