"""Differential test against TensorFlow 1: ``tf.read_file`` / ``tf.write_file`` and the image
codecs (``tf.image.decode_png`` / ``decode_jpeg`` / ``decode_bmp`` / ``decode_gif`` /
``decode_image``, ``encode_png`` / ``encode_jpeg``): files written by TF decode here to TF's
pixels (JPEG within a few levels: TF1 decodes with libjpeg's fast integer DCT, Pillow with the
accurate one), files written here decode in TF to the same pixels, for each
``channels`` setting."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tensorflow")
PIL_Image = pytest.importorskip("PIL.Image")

from .tf1_diff import FRAMEWORKS, park_tf_objects, rng, run_both  # noqa: F401, E402

RGB = rng("codec-rgb").integers(0, 256, (7, 9, 3)).astype(np.uint8)
RGBA = np.concatenate([RGB, rng("codec-a").integers(0, 256, (7, 9, 1)).astype(np.uint8)], -1)
GRAY = rng("codec-g").integers(0, 256, (7, 9, 1)).astype(np.uint8)
SMOOTH = (np.add.outer(np.arange(16), np.arange(24))[..., None] * np.array([3, 5, 7]) % 256).astype(np.uint8)


def _tf_files(folder: pathlib.Path) -> dict[str, str]:
    """PNG and JPEG files written by TensorFlow, plus a BMP and a two-frame GIF written by Pillow."""
    tf = FRAMEWORKS["tensorflow"]
    paths = {
        name: str(folder / name) for name in ("rgb.png", "rgba.png", "gray.png", "smooth.jpg", "gray.jpg")
    }
    with tf.Graph().as_default(), tf.Session() as sess:
        sess.run(
            [
                tf.write_file(paths["rgb.png"], tf.image.encode_png(RGB)),
                tf.write_file(paths["rgba.png"], tf.image.encode_png(RGBA)),
                tf.write_file(paths["gray.png"], tf.image.encode_png(GRAY)),
                tf.write_file(paths["smooth.jpg"], tf.image.encode_jpeg(SMOOTH, quality=90)),
                tf.write_file(paths["gray.jpg"], tf.image.encode_jpeg(SMOOTH[..., :1])),
            ]
        )
    paths["rgb.bmp"] = str(folder / "rgb.bmp")
    PIL_Image.fromarray(RGB).save(paths["rgb.bmp"])
    paths["two.gif"] = str(folder / "two.gif")
    frames = [PIL_Image.fromarray(SMOOTH), PIL_Image.fromarray(SMOOTH[::-1].copy())]
    frames[0].save(paths["two.gif"], save_all=True, append_images=frames[1:])
    return paths


def _decoded(tf: Any, paths: dict[str, str]) -> dict[str, np.ndarray]:
    with tf.Graph().as_default():
        png = {c: tf.image.decode_png(tf.read_file(paths["rgb.png"]), channels=c) for c in (0, 1, 3, 4)}
        outs = {f"rgb.png/{c}": t for c, t in png.items()}
        for name in ("rgba.png", "gray.png"):
            for c in (0, 1, 3, 4):
                outs[f"{name}/{c}"] = tf.image.decode_png(tf.io.read_file(paths[name]), channels=c)
        outs["rgb.png/uint16"] = tf.image.decode_png(tf.read_file(paths["rgb.png"]), dtype=tf.uint16)
        for name in ("smooth.jpg", "gray.jpg"):
            for c in (0, 1, 3):
                outs[f"{name}/{c}"] = tf.image.decode_jpeg(tf.read_file(paths[name]), channels=c)
        outs["bmp"] = tf.image.decode_bmp(tf.read_file(paths["rgb.bmp"]))
        outs["gif"] = tf.image.decode_gif(tf.read_file(paths["two.gif"]))
        for name in ("rgba.png", "smooth.jpg", "rgb.bmp", "two.gif"):
            outs[f"image/{name}"] = tf.image.decode_image(tf.read_file(paths[name]))
        outs["image/float"] = tf.image.decode_image(tf.read_file(paths["rgb.png"]), dtype=tf.float32)
        with tf.Session() as sess:
            return sess.run(outs)


def test_files_written_by_tf1_decode_as_in_tf1(tmp_path: pathlib.Path) -> None:
    paths = _tf_files(tmp_path)
    got = run_both(lambda tf: _decoded(tf, paths))
    ours, theirs = got["antcolony"], got["tensorflow"]
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        a, t = np.asarray(ours[key]), np.asarray(theirs[key])
        assert a.dtype == t.dtype and a.shape == t.shape, (key, a.shape, t.shape)
        if "jpg" in key:
            diff = np.abs(a.astype(int) - t.astype(int))
            assert diff.max() <= 4 and diff.mean() < 1.0, (key, diff.max(), diff.mean())
        elif a.dtype.kind == "f":
            np.testing.assert_allclose(a, t, rtol=2e-7, err_msg=key)  # one float32 ulp
        else:
            np.testing.assert_array_equal(a, t, err_msg=key)


def test_images_encoded_here_decode_in_tf1(tmp_path: pathlib.Path) -> None:
    ac = FRAMEWORKS["antcolony"]
    png_path, jpg_path = str(tmp_path / "ours.png"), str(tmp_path / "ours.jpg")
    with ac.Graph().as_default(), ac.Session() as sess:
        sess.run(
            [
                ac.write_file(png_path, ac.image.encode_png(RGBA)),
                ac.write_file(jpg_path, ac.image.encode_jpeg(SMOOTH)),
            ]
        )
    tf = FRAMEWORKS["tensorflow"]
    with tf.Graph().as_default(), tf.Session() as sess:
        png, jpg = sess.run(
            [tf.image.decode_png(tf.read_file(png_path)), tf.image.decode_jpeg(tf.read_file(jpg_path))]
        )
    np.testing.assert_array_equal(png, RGBA)
    assert jpg.shape == SMOOTH.shape and np.abs(jpg.astype(int) - SMOOTH.astype(int)).mean() < 3.0


def test_static_shapes_and_errors_as_tf1(tmp_path: pathlib.Path) -> None:
    def build(tf: Any) -> list[Any]:
        with tf.Graph().as_default():
            data = tf.placeholder(tf.string, [])
            shapes = [
                str(t.shape)
                for t in (
                    tf.image.decode_png(data, channels=3), tf.image.decode_jpeg(data), tf.image.decode_gif(data),
                    tf.image.decode_image(data, channels=3), tf.image.decode_image(data, expand_animations=False),
                    tf.read_file(data), tf.image.encode_png(tf.zeros([2, 2, 3], tf.uint8)),
                )
            ]  # fmt: skip
            with tf.Session() as sess:
                try:
                    sess.run(tf.read_file(str(tmp_path / "missing.png")))
                    error = "none"
                except tf.errors.OpError as e:
                    error = type(e).__name__
            return [shapes, error]

    got = run_both(build)
    assert got["antcolony"] == got["tensorflow"]
