"""``ac.layers`` and ``tf.layers`` (one module): TF1's functional layers, the names antcolony
implements (defined in graph/layers.py, graph/conv_layers.py, graph/conv3d_layers.py and graph/batch_norm_layer.py)."""

from __future__ import annotations

from antcolony.graph.batch_norm_layer import batch_normalization
from antcolony.graph.conv1d_layers import average_pooling1d, conv1d, max_pooling1d
from antcolony.graph.conv3d_layers import average_pooling3d, conv3d, conv3d_transpose, max_pooling3d
from antcolony.graph.conv_layers import average_pooling2d, conv2d, conv2d_transpose, max_pooling2d
from antcolony.graph.layer_classes import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    BatchNormalization,
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    Dense,
    Dropout,
    Flatten,
    Layer,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
)
from antcolony.graph.layers import dense, dropout, flatten

__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "AveragePooling3D",
    "BatchNormalization",
    "Conv1D",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "Dense",
    "Dropout",
    "Flatten",
    "Layer",
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
    "average_pooling1d",
    "average_pooling2d",
    "average_pooling3d",
    "batch_normalization",
    "conv1d",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "conv3d_transpose",
    "dense",
    "dropout",
    "flatten",
    "max_pooling1d",
    "max_pooling2d",
    "max_pooling3d",
]
