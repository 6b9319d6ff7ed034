"""Kernels of Print (tf.Print) and PrintV2 (tf.print): format the values and write one line.

The streams are looked up when the kernel runs, not when it is built, so a redirected
``sys.stdout`` (pytest's capture, contextlib.redirect_stdout) receives the output. Both kernels
are blocking (run on a worker thread): a write to a full pipe or a slow terminal must not stall
the event loop.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

import numpy as np

from .registry import Compute, KernelContext, register_kernel

logger = logging.getLogger(__name__)

_LOG_LEVELS = {"log(info)": logging.INFO, "log(warning)": logging.WARNING, "log(error)": logging.ERROR}


def to_host(value: Any) -> np.ndarray:
    """``value`` as a numpy array (a CuPy array copied to the host; numpy values pass through)."""
    get = getattr(value, "get", None)
    return np.asarray(get() if callable(get) and not isinstance(value, np.ndarray) else value)


def summarize_first(value: Any, n: int) -> str:
    """TF1 Print's form: the first ``n`` values in row-major order, ``...`` when there are more."""
    a = to_host(value)
    flat = a.reshape(-1)  # a scalar shows as [v] too, as TF1's Print
    shown = flat if n < 0 else flat[:n]
    text = " ".join(str(v) for v in shown.tolist())
    return f"[{text}{'...' if n >= 0 and flat.size > n else ''}]"


def summarize_edges(value: Any, n: int) -> str:
    """tf.print's form: numpy's layout with the first and last ``n`` values of each long dimension."""
    a = to_host(value)
    if a.ndim == 0:
        return str(a.item() if a.dtype != object else a[()])
    threshold = sys.maxsize if n < 0 else 2 * n
    return np.array2string(
        a, threshold=threshold, edgeitems=max(n, 1), separator=" ", max_line_width=sys.maxsize
    )


def _write(stream: str, text: str, end: str) -> None:
    if stream in _LOG_LEVELS:
        logger.log(_LOG_LEVELS[stream], "%s", text)
        return
    out = sys.stdout if stream == "stdout" else sys.stderr
    out.write(text + end)
    out.flush()


@register_kernel("Print", devices=("CPU",), blocking=True)
def _print(ctx: KernelContext) -> Compute:
    message, first_n, n = ctx.attr("message"), ctx.attr("first_n"), ctx.attr("summarize")
    lock = threading.Lock()  # concurrent steps must count first_n once each
    printed = [0]

    def compute(x: Any, *data: Any) -> Any:
        with lock:
            if 0 <= first_n <= printed[0]:
                return x
            printed[0] += 1
        _write("stderr", message + "".join(summarize_first(d, n) for d in data), "\n")
        return x

    return compute


@register_kernel("PrintV2", devices=("CPU",), blocking=True)
def _print_v2(ctx: KernelContext) -> Compute:
    literals, stream = ctx.attr("literals"), ctx.attr("stream")
    n, sep, end = ctx.attr("summarize"), ctx.attr("sep"), ctx.attr("end")

    def compute(*values: Any) -> None:
        it = iter(values)
        parts = [lit if lit is not None else summarize_edges(next(it), n) for lit in literals]
        _write(stream, sep.join(parts), end)

    return compute
