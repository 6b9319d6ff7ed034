"""antcolony: TF1-style dataflow graphs run by asyncio actors on CPUs and (shared) GPUs.

``import antcolony as ac``; names mirror ``tf.compat.v1`` where TF has them.

Names are loaded on first use (PEP 562): every module of the project imports this package
first, so an eager ``__init__`` would make ``import antcolony.actors.actor`` or
``import antcolony.graph`` load the session, the devices and their kernels too.
"""

from __future__ import annotations

# Imported under private names: this module's namespace is the public API.
import importlib as _importlib
import logging as _logging
import typing as _typing

from . import errors as errors  # the bottom layer: standard library only

if _typing.TYPE_CHECKING:
    from antcolony import train as train
    from antcolony.actors.session import Session as Session
    from antcolony.runner import run as run

    from .api import *  # noqa: F403

_logging.getLogger(__name__).addHandler(_logging.NullHandler())

__version__ = "0.1.0"

# The name -> module table: the names this face adds to the shared API ("module:attribute") and
# its namespaces ("module"). The implementation subpackages (actors, config, devices, graph) are
# not listed: they are no part of the API (Python still binds each to this package once imported).
_LAZY: dict[str, str] = {
    "Session": "antcolony.actors.session:Session",
    "run": "antcolony.runner:run",
    "train": "antcolony.train",
}
_OWN_API = ("Session", "errors", "run", "train")
# Every other public name comes from the shared API (antcolony/api.py), loaded as a whole: it
# is graph/ plus two small modules, and listing its ~170 names again here would drift from it.
_SHARED_API = "antcolony.api"


def _api_names() -> list[str]:
    return list(_importlib.import_module(_SHARED_API).__all__)


def _load(name: str) -> _typing.Any:
    if name == "__all__":
        return sorted({*_api_names(), *_OWN_API})
    if name in _LAZY:
        module, _, attribute = _LAZY[name].partition(":")
        loaded = _importlib.import_module(module)
        return getattr(loaded, attribute) if attribute else loaded
    if not name.startswith("_"):
        api = _importlib.import_module(_SHARED_API)
        if name in api.__all__:
            return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __getattr__(name: str) -> _typing.Any:
    value = _load(name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    # The public names and the module's dunders; not the helpers this file imports for itself.
    dunders = {name for name in globals() if name.startswith("__")}
    return sorted({*dunders, "__all__", "errors", *_LAZY, *_api_names()})
