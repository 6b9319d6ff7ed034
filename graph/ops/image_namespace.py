"""``ac.image`` / ``tf.image``: TF1's image functions under their names there."""

from __future__ import annotations

from .image_color import (
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    convert_image_dtype,
    grayscale_to_rgb,
    per_image_standardization,
    random_brightness,
    random_contrast,
    rgb_to_grayscale,
)
from .image_geometry import (
    central_crop,
    crop_to_bounding_box,
    flip_left_right,
    flip_up_down,
    pad_to_bounding_box,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
    resize_image_with_crop_or_pad,
    rot90,
    transpose_image,
)
from .image_geometry import resize_image_with_crop_or_pad as resize_with_crop_or_pad
from .image_geometry import transpose_image as transpose
from .image_gradients import image_gradients, total_variation
from .image_hsv import (
    adjust_hue,
    adjust_saturation,
    hsv_to_rgb,
    psnr,
    random_hue,
    random_saturation,
    rgb_to_hsv,
    rgb_to_yiq,
    rgb_to_yuv,
    yiq_to_rgb,
    yuv_to_rgb,
)
from .image_resize import (
    ResizeMethod,
    resize_area,
    resize_bicubic,
    resize_bilinear,
    resize_images,
    resize_nearest_neighbor,
)
from .image_resize import resize_images as resize

__all__ = [
    "ResizeMethod",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "central_crop",
    "convert_image_dtype",
    "crop_to_bounding_box",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "hsv_to_rgb",
    "image_gradients",
    "pad_to_bounding_box",
    "per_image_standardization",
    "psnr",
    "random_brightness",
    "random_contrast",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "random_hue",
    "random_saturation",
    "resize",
    "resize_area",
    "resize_bicubic",
    "resize_bilinear",
    "resize_image_with_crop_or_pad",
    "resize_images",
    "resize_nearest_neighbor",
    "resize_with_crop_or_pad",
    "rgb_to_grayscale",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "rot90",
    "total_variation",
    "transpose",
    "transpose_image",
    "yiq_to_rgb",
    "yuv_to_rgb",
]
