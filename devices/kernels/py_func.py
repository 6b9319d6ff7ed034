"""Kernel of PyFunc / PyFuncStateless: the user's Python function on numpy values.

It is a *blocking* kernel: it always runs on a CPU worker thread (the function may sleep, do I/O
or take the GIL for long), never on the event loop. Whatever the function raises fails the step
as an InvalidArgumentError naming the node, as TF reports py_func errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from antcolony.errors import InvalidArgumentError
from antcolony.graph.ops.script_ops import lookup_py_func

from .registry import Aliasing, Compute, KernelContext, register_kernel


def _py_func(ctx: KernelContext) -> Compute:
    op = ctx.op
    token, touts = ctx.attr("token"), ctx.attr("Tout")

    def fail(why: str) -> InvalidArgumentError:
        return InvalidArgumentError(None, op, f"py_func '{op.name}': {why}")

    def compute(*args: Any) -> Any:
        func = lookup_py_func(token)
        if func is None:
            raise fail("its Python function is gone (the graph was imported into another process?)")
        try:
            result = func(*(np.asarray(a) for a in args))  # numpy arrays, 0-d ones too, as TF
        except Exception as exc:
            raise fail(f"the function raised {type(exc).__name__}: {exc}") from exc
        if not touts:
            return None
        if len(touts) == 1:
            results = [result[0]] if isinstance(result, tuple) and len(result) == 1 else [result]
        elif isinstance(result, (list, tuple)):
            results = list(result)
        else:
            raise fail(f"the function returned one value, Tout declares {len(touts)}")
        if len(results) != len(touts):
            raise fail(f"the function returned {len(results)} values, Tout declares {len(touts)}")
        try:
            out = [np.asarray(r, dtype=dt) for r, dt in zip(results, touts)]
        except (TypeError, ValueError) as exc:
            raise fail(f"cannot convert the function's result to the declared Tout {touts}: {exc}") from exc
        return out[0] if len(out) == 1 else tuple(out)

    return compute


for _t in ("PyFunc", "PyFuncStateless"):
    # HELD: the function may return an array it keeps, or one of its inputs
    register_kernel(_t, devices=("CPU",), expensive=True, blocking=True, aliasing=Aliasing.HELD)(_py_func)
