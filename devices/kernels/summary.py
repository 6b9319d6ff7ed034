"""Kernels of ScalarSummary, HistogramSummary and MergeSummary: serialized Summary protos.

The protos come from tensorboardX (the optional ``summary`` extra), imported when a summary
kernel is first built, so graphs without summaries never need it. Histograms use TF's default
bucket limits: 0, then +-1e-12 growing by 10 % up to 1e20, and the largest doubles at the ends.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from antcolony.errors import FailedPreconditionError, InvalidArgumentError

from .registry import Compute, KernelContext, register_kernel


def _tensorboardx(ctx: KernelContext) -> Any:
    try:
        import tensorboardX.summary as tbx_summary
    except ImportError:
        raise FailedPreconditionError(
            None,
            ctx.op,
            f"summary op '{ctx.op.name}' needs tensorboardX; install it with pip install 'antcolony[summary]'",
        ) from None
    return tbx_summary


@functools.cache
def default_bucket_limits() -> np.ndarray:
    positive = []
    v = 1e-12
    while v < 1e20:
        positive.append(v)
        v *= 1.1
    big = np.finfo(np.float64).max
    return np.array([-big, *(-p for p in reversed(positive)), 0.0, *positive, big])


def _encoded(summary: Any) -> bytes:
    # A scalar string is a Python bytes object, as a fetched TF string scalar (numpy scalars
    # stand for the other dtypes' scalars the same way).
    return summary.SerializeToString()


def _host(value: Any) -> np.ndarray:
    get = getattr(value, "get", None)
    return np.asarray(get() if callable(get) and not isinstance(value, np.ndarray) else value)


@register_kernel("ScalarSummary", devices=("CPU",))
def _scalar_summary(ctx: KernelContext) -> Compute:
    tbx, tag = _tensorboardx(ctx), ctx.attr("tag")

    def compute(x: Any) -> bytes:
        v = _host(x)
        if v.size != 1:
            raise ValueError(f"tags and values are not the same shape: tag {tag!r}, value of shape {v.shape}")
        return _encoded(tbx.Summary(value=[tbx.Summary.Value(tag=tag, simple_value=float(v.reshape(())))]))

    return compute


@register_kernel("HistogramSummary", devices=("CPU",), expensive=True)
def _histogram_summary(ctx: KernelContext) -> Compute:
    tbx, tag = _tensorboardx(ctx), ctx.attr("tag")

    def compute(x: Any) -> bytes:
        v = _host(x).astype(np.float64).reshape(-1)
        if not np.all(np.isfinite(v)):
            raise ValueError(f"Nan in summary histogram for: {tag}")
        if v.size == 0:  # an empty histogram, as TF writes one
            hist = tbx.HistogramProto(min=0.0, max=0.0, num=0, sum=0.0, sum_squares=0.0)
        else:
            hist = tbx.make_histogram(v, default_bucket_limits())
        return _encoded(tbx.Summary(value=[tbx.Summary.Value(tag=tag, histo=hist)]))

    return compute


@register_kernel("MergeSummary", devices=("CPU",))
def _merge_summary(ctx: KernelContext) -> Compute:
    tbx, op = _tensorboardx(ctx), ctx.op

    def compute(*serialized: Any) -> bytes:
        merged = tbx.Summary()
        seen: set[str] = set()
        for s in serialized:
            part = tbx.Summary.FromString(s if isinstance(s, bytes) else bytes(np.asarray(s).reshape(())[()]))
            for value in part.value:
                if value.tag in seen:
                    raise InvalidArgumentError(
                        None,
                        op,
                        f"Duplicate tag {value.tag} found in summary inputs of '{op.name}'; "
                        "give each summary its own name",
                    )
                seen.add(value.tag)
                merged.value.append(value)
        return _encoded(merged)

    return compute
