"""Kernels of graph/ops/image_codecs.py: file reads and writes, and image decoding / encoding
with Pillow (imported when a codec first runs; the ``image`` extra). Colour conversions follow
the libraries TF1 decodes with: a colour PNG to gray weighs R, G, B by 9797, 19234, 3737 / 32768
(Rec. 601 luma in 15-bit fixed point, rounded down, as TF1 asks libpng for it); a colour JPEG to gray asks the JPEG
decoder for its luma plane."""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError, NotFoundError, UnimplementedError

from .registry import Aliasing, Compute, KernelContext, register_kernel

_CPU = ("CPU",)
_PNG, _JPEG, _GIF, _BMP = b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"BM"


def _pil(op: Any) -> Any:
    try:
        from PIL import Image, ImageSequence
    except ImportError:
        raise UnimplementedError(
            None, op, f"{op.name}: image codecs need Pillow; pip install 'antcolony[image]'"
        ) from None
    return Image, ImageSequence


def _bytes(value: Any) -> bytes:
    item = value.item() if isinstance(value, np.ndarray) else value
    return item if isinstance(item, bytes) else str(item).encode()


@register_kernel("ReadFile", devices=_CPU, aliasing=Aliasing.FRESH)
def _read_file(ctx: KernelContext) -> Compute:
    op = ctx.op

    def compute(filename: Any) -> bytes:
        path = _bytes(filename).decode()
        try:
            with open(path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            raise NotFoundError(None, op, f"{path}; No such file or directory") from None

    return compute


@register_kernel("WriteFile", devices=_CPU)
def _write_file(ctx: KernelContext) -> Compute:
    def compute(filename: Any, contents: Any) -> None:
        path = _bytes(filename).decode()
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        with open(path, "wb") as f:
            f.write(_bytes(contents))

    return compute


def _png_gray(rgb: np.ndarray) -> np.ndarray:
    wide = rgb.astype(np.int64)
    gray = (9797 * wide[..., 0] + 19234 * wide[..., 1] + 3737 * wide[..., 2]) >> 15
    return gray.astype(rgb.dtype)


def _with_channels(arr: np.ndarray, want: int, opaque: int) -> np.ndarray:
    """``arr`` [h, w, c] as ``want`` channels (gray, gray+alpha, RGB, RGBA)."""
    have = arr.shape[-1]
    if want in (0, have):
        return arr
    color = arr[..., :3] if have >= 3 else np.repeat(arr[..., :1], 3, axis=-1)
    alpha = arr[..., -1:] if have in (2, 4) else np.full((*arr.shape[:-1], 1), opaque, arr.dtype)
    if want == 1:
        return _png_gray(color)[..., None] if have >= 3 else arr[..., :1]
    if want == 2:
        gray = _png_gray(color)[..., None] if have >= 3 else arr[..., :1]
        return np.concatenate([gray, alpha], axis=-1)
    if want == 3:
        return color
    return np.concatenate([color, alpha], axis=-1)


def _frame_array(img: Any) -> np.ndarray:
    if img.mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    elif img.mode in ("1", "CMYK", "YCbCr", "LAB", "HSV", "F"):
        img = img.convert("L" if img.mode in ("1", "F") else "RGB")
    arr = np.asarray(img)
    if arr.dtype.kind == "i" or arr.dtype == np.dtype(">u2") or arr.dtype == np.dtype("<u2"):
        arr = arr.astype(np.uint16)
    return arr[..., None] if arr.ndim == 2 else arr


def _decode(
    op: Any, data: bytes, channels: int, dtype: Any, ratio: int = 1, gif_frames: bool = False
) -> np.ndarray:
    image_cls, sequence = _pil(op)
    try:
        img = image_cls.open(io.BytesIO(data))
        if data.startswith(_JPEG):
            # the decoder's own gray (luma) and downscaling, as TF1's libjpeg path
            want_mode = "L" if channels == 1 else "RGB" if channels == 3 else img.mode
            img.draft(want_mode, (img.width // ratio, img.height // ratio))
        if gif_frames:
            frames = [_with_channels(_frame_array(f.convert("RGB")), 3, 255) for f in sequence.Iterator(img)]
            return np.stack(frames).astype(np.uint8)
        arr = _frame_array(img)
    except (OSError, ValueError, SyntaxError) as e:
        raise InvalidArgumentError(None, op, f"{op.name}: cannot decode the image: {e}") from None
    out_dt = np.dtype(dtype)
    if arr.dtype == np.uint16 and out_dt == np.uint8:
        arr = (arr >> 8).astype(np.uint8)
    elif arr.dtype == np.uint8 and out_dt == np.uint16:
        arr = arr.astype(np.uint16) * 257
    return _with_channels(arr, channels, np.iinfo(arr.dtype).max)


def _decoder(ctx: KernelContext, gif: bool = False) -> Compute:
    op = ctx.op
    channels = ctx.op.attrs.get("channels", 0)
    dtype = np.dtype(ctx.op.attrs.get("dtype", np.uint8))
    ratio = ctx.op.attrs.get("ratio", 1)
    return lambda contents: _decode(op, _bytes(contents), channels, dtype, ratio, gif)


for _t in ("DecodePng", "DecodeJpeg", "DecodeBmp"):
    register_kernel(_t, devices=_CPU, aliasing=Aliasing.FRESH)(_decoder)


@register_kernel("DecodeGif", devices=_CPU, aliasing=Aliasing.FRESH)
def _decode_gif(ctx: KernelContext) -> Compute:
    return _decoder(ctx, gif=True)


@register_kernel("DecodeImage", devices=_CPU, aliasing=Aliasing.FRESH)
def _decode_image(ctx: KernelContext) -> Compute:
    op = ctx.op
    channels, expand = op.attrs["channels"], op.attrs["expand_animations"]
    want = np.dtype(op.attrs["dtype"])

    def compute(contents: Any) -> np.ndarray:
        data = _bytes(contents)
        if not data.startswith((_PNG, _JPEG, _GIF, _BMP)):
            raise InvalidArgumentError(
                None, op, f"{op.name}: Unknown image file format. One of JPEG, PNG, GIF, BMP required."
            )
        is_gif = data.startswith(_GIF)
        raw_dt = np.uint16 if want == np.uint16 else np.uint8
        arr = _decode(op, data, 0 if is_gif else channels, raw_dt, 1, is_gif)
        if is_gif and not expand:
            arr = arr[0]
        if want.kind == "f":
            # divided by the integer range (TF1's kernel can differ in the last bit: its vectorised
            # division rounds some quotients down)
            return arr.astype(want) / want.type(np.iinfo(arr.dtype).max)
        return arr

    return compute


@register_kernel("EncodePng", devices=_CPU, aliasing=Aliasing.FRESH)
def _encode_png(ctx: KernelContext) -> Compute:
    op = ctx.op
    level = op.attrs["compression"]

    def compute(image: Any) -> bytes:
        image_cls, _ = _pil(op)
        arr = np.asarray(image)
        if arr.ndim != 3 or arr.shape[-1] not in (1, 2, 3, 4) or arr.dtype not in (np.uint8, np.uint16):
            raise InvalidArgumentError(
                None,
                op,
                f"{op.name}: image must be [height, width, 1-4] uint8 or uint16, got {arr.dtype} {arr.shape}",
            )
        if arr.dtype == np.uint16:
            if arr.shape[-1] != 1:
                raise InvalidArgumentError(
                    None, op, f"{op.name}: 16-bit PNGs of more than one channel are not supported"
                )
            img = image_cls.fromarray(arr[..., 0].astype("<u2"), mode="I;16")
        else:
            mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[arr.shape[-1]]
            img = image_cls.fromarray(arr[..., 0] if arr.shape[-1] == 1 else arr, mode=mode)
        out = io.BytesIO()
        img.save(out, format="PNG", compress_level=6 if level < 0 else int(level))
        return out.getvalue()

    return compute


@register_kernel("EncodeJpeg", devices=_CPU, aliasing=Aliasing.FRESH)
def _encode_jpeg(ctx: KernelContext) -> Compute:
    op = ctx.op
    attrs = op.attrs

    def compute(image: Any) -> bytes:
        image_cls, _ = _pil(op)
        arr = np.asarray(image)
        if arr.ndim != 3 or arr.shape[-1] not in (1, 3) or arr.dtype != np.uint8:
            raise InvalidArgumentError(
                None,
                op,
                f"{op.name}: image must be [height, width, 1 or 3] uint8, got {arr.dtype} {arr.shape}",
            )
        img = image_cls.fromarray(
            arr[..., 0] if arr.shape[-1] == 1 else arr, mode="L" if arr.shape[-1] == 1 else "RGB"
        )
        out = io.BytesIO()
        dpi = (attrs["x_density"], attrs["y_density"])
        img.save(
            out, format="JPEG", quality=attrs["quality"], progressive=attrs["progressive"],
            optimize=attrs["optimize_size"], subsampling=2 if attrs["chroma_downsampling"] else 0, dpi=dpi,
        )  # fmt: skip
        return out.getvalue()

    return compute
