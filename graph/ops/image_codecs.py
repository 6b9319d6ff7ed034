"""Files and image codecs as TF1 spells them: ``tf.read_file`` / ``tf.io.read_file``,
``tf.write_file``, ``tf.image.decode_png`` / ``decode_jpeg`` / ``decode_bmp`` / ``decode_gif`` /
``decode_image`` and ``encode_png`` / ``encode_jpeg``. Decoded images are ``[height, width,
channels]`` (GIFs ``[frames, height, width, 3]``); ``channels=0`` keeps the file's. The kernels
(devices/kernels/image_codecs.py) decode with Pillow, the ``image`` extra."""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..core import Operation, Tensor
from ..gradients import not_differentiable
from ..op_builder import convert_to_tensor, make_op
from ..registry import register_op

__all__ = [
    "decode_bmp",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "encode_jpeg",
    "encode_png",
    "read_file",
    "write_file",
]

_DECODERS = ("DecodePng", "DecodeJpeg", "DecodeBmp")


@register_op("ReadFile", stateful=True)
def _read_file_shape(op: Operation) -> list:
    return [(dtypes.string, ())]


@register_op("WriteFile", stateful=True)
def _write_file_shape(op: Operation) -> list:
    return []


def _decoded(op: Operation) -> list:
    channels = op.attrs.get("channels", 0)
    return [(op.attrs.get("dtype", dtypes.uint8), (None, None, channels or None))]


for _t in _DECODERS:
    register_op(_t)(_decoded)


@register_op("DecodeGif")
def _gif_shape(op: Operation) -> list:
    return [(dtypes.uint8, (None, None, None, 3))]


@register_op("DecodeImage")
def _image_shape(op: Operation) -> list:
    channels = op.attrs.get("channels", 0)
    if op.attrs.get("expand_animations", True):
        return [(op.attrs["dtype"], None)]
    return [(op.attrs["dtype"], (None, None, channels or None))]


@register_op("EncodePng")
@register_op("EncodeJpeg")
def _encoded_shape(op: Operation) -> list:
    return [(dtypes.string, ())]


not_differentiable("ReadFile", "WriteFile", *_DECODERS, "DecodeGif", "DecodeImage", "EncodePng", "EncodeJpeg")


def read_file(filename: Any, name: str | None = None) -> Tensor:
    """The bytes of the file ``filename`` (a scalar string)."""
    path = convert_to_tensor(filename, dtype=dtypes.string)
    return make_op("ReadFile", [path], None, name or "ReadFile").outputs[0]


def write_file(filename: Any, contents: Any, name: str | None = None) -> Operation:
    """Writes ``contents`` (a scalar string) to ``filename``, creating its folder."""
    parts = [
        convert_to_tensor(filename, dtype=dtypes.string),
        convert_to_tensor(contents, dtype=dtypes.string),
    ]
    return make_op("WriteFile", parts, None, name or "WriteFile")


def _channels(channels: Any, allowed: tuple[int, ...], what: str) -> int:
    n = 0 if channels is None else int(channels)
    if n not in allowed:
        raise ValueError(f"{what}: channels must be one of {allowed}, got {channels!r}")
    return n


def _decode(op_type: str, contents: Any, name: str, **attrs: Any) -> Tensor:
    data = convert_to_tensor(contents, dtype=dtypes.string)
    return make_op(op_type, [data], attrs, name).outputs[0]


def decode_png(
    contents: Any, channels: int = 0, dtype: Any = dtypes.uint8, name: str | None = None
) -> Tensor:
    """A PNG's pixels, uint8 or uint16 (16-bit files scaled to 8 bits for uint8)."""
    dt = dtypes.as_dtype(dtype)
    if dt not in (dtypes.uint8, dtypes.uint16):
        raise ValueError(f"decode_png: dtype must be uint8 or uint16, got {dt.name}")
    return _decode(
        "DecodePng",
        contents,
        name or "DecodePng",
        channels=_channels(channels, (0, 1, 3, 4), "decode_png"),
        dtype=dt,
    )


def decode_jpeg(
    contents: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    name: str | None = None,
) -> Tensor:
    """A JPEG's pixels, uint8 (``ratio`` 1, 2, 4 or 8 scales it down). Decoded with the accurate
    integer DCT whatever ``dct_method``: pixels may differ from TF1's (its default is the fast
    DCT) by a few levels."""
    if int(ratio) not in (1, 2, 4, 8):
        raise ValueError(f"decode_jpeg: ratio must be 1, 2, 4 or 8, got {ratio!r}")
    return _decode(
        "DecodeJpeg", contents, name or "DecodeJpeg",
        channels=_channels(channels, (0, 1, 3), "decode_jpeg"), ratio=int(ratio), dtype=dtypes.uint8,
    )  # fmt: skip


def decode_bmp(contents: Any, channels: int = 0, name: str | None = None) -> Tensor:
    """A BMP's pixels, uint8."""
    return _decode(
        "DecodeBmp",
        contents,
        name or "DecodeBmp",
        channels=_channels(channels, (0, 3, 4), "decode_bmp"),
        dtype=dtypes.uint8,
    )


def decode_gif(contents: Any, name: str | None = None) -> Tensor:
    """A GIF's frames, ``[frames, height, width, 3]`` uint8."""
    return _decode("DecodeGif", contents, name or "DecodeGif")


def decode_image(
    contents: Any,
    channels: int | None = None,
    dtype: Any = dtypes.uint8,
    name: str | None = None,
    expand_animations: bool = True,
) -> Tensor:
    """Any of PNG, JPEG, BMP or GIF, by its first bytes (a GIF ``[frames, h, w, 3]`` unless
    ``expand_animations`` is False); a float ``dtype`` scales to [0, 1]."""
    dt = dtypes.as_dtype(dtype)
    return _decode(
        "DecodeImage", contents, name or "decode_image",
        channels=_channels(channels, (0, 1, 3, 4), "decode_image"), dtype=dt,
        expand_animations=bool(expand_animations),
    )  # fmt: skip


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> Tensor:
    """PNG bytes of a ``[height, width, channels]`` uint8 / uint16 image (1 to 4 channels)."""
    x = convert_to_tensor(image)
    return make_op("EncodePng", [x], {"compression": int(compression)}, name or "EncodePng").outputs[0]


def encode_jpeg(
    image: Any,
    format: str = "",
    quality: int = 95,
    progressive: bool = False,
    optimize_size: bool = False,
    chroma_downsampling: bool = True,
    density_unit: str = "in",
    x_density: int = 300,
    y_density: int = 300,
    xmp_metadata: str = "",
    name: str | None = None,
) -> Tensor:
    """JPEG bytes of a ``[height, width, 1 or 3]`` uint8 image."""
    attrs = {
        "format": format, "quality": int(quality), "progressive": bool(progressive),
        "optimize_size": bool(optimize_size), "chroma_downsampling": bool(chroma_downsampling),
        "density_unit": density_unit, "x_density": int(x_density), "y_density": int(y_density),
    }  # fmt: skip
    return make_op("EncodeJpeg", [convert_to_tensor(image)], attrs, name or "EncodeJpeg").outputs[0]
