"""``ac.linalg`` / ``tf.linalg``: TF1's linear algebra under its names there."""

from __future__ import annotations

from .array_composite import eye
from .clip import global_norm
from .einsum import einsum
from .linalg import matmul
from .linalg import matrix_determinant as det
from .linalg import matrix_inverse as inv
from .linalg import matrix_solve as solve
from .linalg import matrix_triangular_solve as triangular_solve
from .linalg_decomp import cholesky, qr, svd
from .linalg_eigh import cross, logdet, matvec
from .linalg_eigh import self_adjoint_eig as eigh
from .linalg_eigh import self_adjoint_eigvals as eigvalsh
from .linalg_structure import adjoint, matrix_transpose, norm, tensor_diag, tensor_diag_part, trace
from .linalg_structure import matrix_band_part as band_part
from .linalg_structure import matrix_diag as diag
from .linalg_structure import matrix_diag_part as diag_part
from .linalg_structure import matrix_set_diag as set_diag
from .linalg_structure import matrix_transpose as transpose
from .math_composite import tensordot
from .normalization import l2_normalize

__all__ = [
    "adjoint",
    "band_part",
    "cholesky",
    "cross",
    "det",
    "diag",
    "diag_part",
    "eigh",
    "eigvalsh",
    "einsum",
    "eye",
    "global_norm",
    "inv",
    "l2_normalize",
    "logdet",
    "matmul",
    "matrix_transpose",
    "matvec",
    "norm",
    "qr",
    "set_diag",
    "solve",
    "svd",
    "tensor_diag",
    "tensor_diag_part",
    "tensordot",
    "trace",
    "transpose",
    "triangular_solve",
]
