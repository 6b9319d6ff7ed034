"""``tf.ConfigProto`` / ``tf.GPUOptions`` of TF1 programs, mapped onto ``SessionConfig``.

Only what has a meaning here is mapped; options that cannot be honoured are logged (not
silently dropped) with the SessionConfig field to use instead. Device settings (``device_count``,
the memory fraction) shape the process's devices, which the first session of an event loop
creates (one allocator stack per GPU per process): later sessions share them.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from antcolony.config.session_config import SessionConfig
from antcolony.errors import ConfigError

logger = logging.getLogger(__name__)


@dataclass
class GPUOptions:
    allow_growth: bool = False
    per_process_gpu_memory_fraction: float = 0.0
    visible_device_list: str = ""


@dataclass
class ConfigProto:
    """The ConfigProto fields TF1 programs set. Defaults are TF's (soft placement off)."""

    allow_soft_placement: bool = False
    log_device_placement: bool = False
    inter_op_parallelism_threads: int = 0
    intra_op_parallelism_threads: int = 0
    device_count: dict[str, int] = field(default_factory=dict)
    gpu_options: GPUOptions = field(default_factory=GPUOptions)
    # the devices a distributed session may use (TF: "/job:ps", "/job:worker/task:0"); accepted
    # as is: a session here only ever contacts the tasks its graph places variables on
    device_filters: list[str] = field(default_factory=list)

    def to_session_config(self, base: SessionConfig | None = None) -> SessionConfig:
        """A SessionConfig (from ``base``, default one from the environment) with these options applied."""
        start = base if base is not None else SessionConfig()
        changes: dict[str, Any] = {
            "allow_soft_placement": bool(self.allow_soft_placement),
            "log_device_placement": bool(self.log_device_placement),
            "allow_growth": bool(self.gpu_options.allow_growth) or start.allow_growth,
        }
        if self.inter_op_parallelism_threads < 0 or self.intra_op_parallelism_threads < 0:
            raise ConfigError("ConfigProto thread counts must be >= 0 (0 means the default)")
        if self.inter_op_parallelism_threads:
            changes["inter_op_threads"] = int(self.inter_op_parallelism_threads)
        if self.intra_op_parallelism_threads:
            changes["intra_op_threads"] = int(self.intra_op_parallelism_threads)
        gpus = self.device_count.get("GPU")
        if gpus is not None:
            if gpus < 0:
                raise ConfigError(f"ConfigProto.device_count['GPU'] must be >= 0, got {gpus}")
            if gpus == 0:
                # No GPU: an empty simulated GPU set, whatever the machine has.
                changes.update(gpu_backend="sim", sim_gpu_count=0)
            elif start.gpu_backend == "sim":
                changes["sim_gpu_count"] = min(int(gpus), start.sim_gpu_count)
        fraction = self.gpu_options.per_process_gpu_memory_fraction
        if fraction:
            if not 0.0 < fraction <= 1.0:
                raise ConfigError(f"per_process_gpu_memory_fraction must be in (0, 1], got {fraction}")
            if changes.get("gpu_backend", start.gpu_backend) == "sim":
                changes["gpu_memory_limit"] = int(fraction * start.sim_gpu_memory)
            else:
                logger.warning(
                    "per_process_gpu_memory_fraction=%s is not applied (the device size is known only once "
                    "devices start); set SessionConfig.gpu_memory_limit in bytes instead",
                    fraction,
                )
        if self.gpu_options.visible_device_list:
            logger.warning(
                "gpu_options.visible_device_list=%r is not applied; use CUDA_VISIBLE_DEVICES",
                self.gpu_options.visible_device_list,
            )
        return dataclasses.replace(start, **changes)
