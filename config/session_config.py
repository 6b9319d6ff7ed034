"""SessionConfig: per-session settings, each also settable from the environment where noted."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from antcolony.config.env import env_bool, env_float, env_int, env_mib, env_str
from antcolony.errors import ConfigError

#: MXNet's MXNET_ENGINE_TYPE names, accepted as aliases of the engine kinds.
ENGINE_ALIASES = {
    "NaiveEngine": "naive",
    "ThreadedEngine": "pooled",
    "ThreadedEnginePooled": "pooled",
    "ThreadedEnginePerDevice": "per_device",
}


def _engine_name(name: str) -> str:
    if name in ENGINE_ALIASES:
        return ENGINE_ALIASES[name]
    raise ConfigError(
        f"SessionConfig.engine must be 'per_device', 'pooled' or 'naive' (or an MXNet engine name), got {name!r}"
    )


def _default_threads() -> int:
    return max(1, os.cpu_count() or 1)


def chosen_intra_op_threads(inter_op_threads: int, cores: int | None = None) -> int:
    """BLAS threads per kernel when the config leaves it to us: the cores shared among the
    kernels that may run at once, so ``inter_op_threads`` kernels never ask for more threads than
    there are cores. More than that oversubscribes the cores: a 2-core machine running 2 matmuls
    at once with 2 BLAS threads each was 1.6x slower beside a CPU-bound process
    (scripts/bench_executor.py, default/best)."""
    cores = max(1, cores if cores is not None else (os.cpu_count() or 1))
    return max(1, cores // max(1, inter_op_threads))


#: SessionConfig field -> (reader in config/env.py, environment variable); an explicit
#: argument wins over the variable, the variable over the field's default.
_FROM_ENV: dict[str, tuple[Callable[[str], object], str]] = {
    "inter_op_threads": (env_int, "ANTCOLONY_INTER_OP_THREADS"),
    "inline_threshold": (env_int, "ANTCOLONY_INLINE_THRESHOLD"),
    "bulk_segments": (env_bool, "ANTCOLONY_BULK_SEGMENTS"),
    "fuse_loops": (env_bool, "ANTCOLONY_FUSE_LOOPS"),
    "gpu_pipeline": (env_bool, "ANTCOLONY_GPU_PIPELINE"),
    "intra_op_threads": (env_int, "ANTCOLONY_INTRA_OP_THREADS"),
    "allow_soft_placement": (env_bool, "ANTCOLONY_ALLOW_SOFT_PLACEMENT"),
    "gpu_backend": (env_str, "ANTCOLONY_GPU_BACKEND"),
    "sim_gpu_count": (env_int, "ANTCOLONY_SIM_GPU_COUNT"),
    "sim_gpu_memory": (env_int, "ANTCOLONY_SIM_GPU_MEMORY"),
    "gpu_compute_streams": (env_int, "ANTCOLONY_GPU_WORKER_NTHREADS"),
    "gpu_copy_streams": (env_int, "ANTCOLONY_GPU_COPY_NTHREADS"),
    "cpu_priority_threads": (env_int, "ANTCOLONY_CPU_PRIORITY_NTHREADS"),
    "engine": (env_str, "ANTCOLONY_ENGINE_TYPE"),
    "trace_file": (env_str, "ANTCOLONY_TRACE_FILE"),
    "memory_optimizer": (env_str, "ANTCOLONY_MEMORY_OPTIMIZER"),
    "resource_config_file": (env_str, "GPU_CONFIG_FILE"),
    "statistics_file": (env_str, "GPU_STATUS_FILE"),
    "config_poll_interval": (env_float, "ANTCOLONY_CONFIG_POLL_INTERVAL"),
    "statistics_interval": (env_float, "ANTCOLONY_STATISTICS_INTERVAL"),
    "gpu_memory_limit": (env_int, "ANTCOLONY_GPU_MEMORY_LIMIT"),
    "allow_growth": (env_bool, "TF_FORCE_GPU_ALLOW_GROWTH"),
    "vmem": (env_bool, "TF_GPU_VMEM"),
    "host_mem_limit": (env_mib, "TF_CUDA_HOST_MEM_LIMIT_IN_MB"),
    "host_memory_retain": (env_int, "ANTCOLONY_HOST_MEMORY_RETAIN"),
    "cuda_virtual_memory": (env_str, "ANTCOLONY_CUDA_VIRTUAL_MEMORY"),
}


@dataclass
class SessionConfig:
    """Settings of one Session.

    inter_op_threads: worker threads running expensive CPU kernels (env
        ``ANTCOLONY_INTER_OP_THREADS``; default: number of cores). The pool belongs to the event
        loop's Runtime, so the first session on a loop sizes it.
    intra_op_threads: BLAS threads each kernel may use (env ``ANTCOLONY_INTRA_OP_THREADS``),
        like TF's ``intra_op_parallelism_threads``. Default None: chosen as the cores divided
        among ``inter_op_threads`` kernels (at least 1; see ``chosen_intra_op_threads``), so the
        kernels running at once never oversubscribe the cores. 0 leaves numpy's BLAS as
        configured. The limit is applied process-wide with threadpoolctl while the loop's
        Runtime lives (BLAS thread counts are global); the first session on a loop decides.
        Large optimizer updates, convolutions and pooling also split their work over a shared
        pool as wide as the cores, whatever this limit (devices/kernels/elementwise.py).
    inline_threshold: an expensive kernel (matmul, reductions, ...) whose inputs hold fewer
        elements than this runs inline on the node actor's turn instead of on a worker thread
        (env ``ANTCOLONY_INLINE_THRESHOLD``); a kernel making one cheap pass over its inputs
        (AddN) up to a multiple of it (its kernel's ``inline_scale``).
    bulk_segments: host a partition's cheap CPU nodes of a graph without control flow in one
        segment actor that runs them in dataflow order (MXNet's bulk execution), instead of an
        actor each (env ``ANTCOLONY_BULK_SEGMENTS``; default True). Cheap kernels run on the
        loop's thread either way, so nothing runs less in parallel; each node costs less.
    fuse_loops: run each CPU while loop without variables, random or other shared state (its
        TensorArrays and gradient accumulators are per run), blocking kernels or nested loops as
        one node that iterates itself, instead of a message per op per iteration: inline on the
        event loop when all its kernels are cheap, else as one launch on the CPU worker; ~10x
        faster iterations, same results (env ``ANTCOLONY_FUSE_LOOPS``; default on). Off: every
        loop runs node by node.
    gpu_pipeline: a GPU kernel feeding another on the same GPU hands it its output at launch,
        not at completion: the dependent is enqueued at once and ordered after it on the device
        (same stream, or a stream waiting on an event), so a chain of GPU ops never waits for a
        completion to reach the loop (env ``ANTCOLONY_GPU_PIPELINE``; default on). Off: every
        GPU node sends its value when its ``KernelDone`` arrives.
    allow_soft_placement: place an op on the CPU when its requested device does not exist or has
        no kernel for it; when False that is an ``InvalidArgumentError`` (env
        ``ANTCOLONY_ALLOW_SOFT_PLACEMENT``).
    log_device_placement: log each node's device when an executor is built.
    default_device: where ops without an ``ac.device`` scope run (default the CPU; "/gpu:0"
        gives TF1's GPU-first placement).
    gpu_backend: "auto" (CUDA through CuPy when it imports and sees a device, else simulated),
        "cuda" or "sim" (env ``ANTCOLONY_GPU_BACKEND``).
    sim_gpu_count / sim_gpu_memory: number and memory size (bytes) of simulated GPUs (env
        ``ANTCOLONY_SIM_GPU_COUNT`` / ``ANTCOLONY_SIM_GPU_MEMORY``).
    gpu_compute_streams / gpu_copy_streams: compute and copy workers (each owning a stream) per
        GPU (env ``ANTCOLONY_GPU_WORKER_NTHREADS`` / ``ANTCOLONY_GPU_COPY_NTHREADS``, MXNet's names
        under our prefix).
    cpu_priority_threads: the high-priority CPU worker pool shared by all devices (env
        ``ANTCOLONY_CPU_PRIORITY_NTHREADS``).
    engine: the dependency engine ordering variable reads and writes: "per_device", "pooled" or
        "naive" (one op at a time, for debugging); env ``ANTCOLONY_ENGINE_TYPE``.
    gpu_memory_limit: bytes each GPU may use (default: all of it; env
        ``ANTCOLONY_GPU_MEMORY_LIMIT``). Changed at run time through the resource config file.
    allow_growth: GPU memory regions start small and double as needed instead of one region of the
        whole limit (env ``TF_FORCE_GPU_ALLOW_GROWTH``, as TF). Default on, unlike TF1: a process
        sharing a GPU must not reserve all of it up front, and limits shrink region by region.
    vmem: when a GPU allocation does not fit, place it in host memory instead of failing (AntMan's
        universal memory; env ``TF_GPU_VMEM``, default on). Off: ``ResourceExhaustedError``.
    host_mem_limit: bytes of host memory the fallback may use per GPU (env
        ``TF_CUDA_HOST_MEM_LIMIT_IN_MB``, in MiB, as AntMan; default 64 GiB).
    host_memory_retain: bytes of freed host memory the process keeps for reuse instead of giving
        it back to the kernel (glibc malloc's trim threshold; devices/host_malloc.py): a step
        that frees large arrays then finds their pages mapped at the next step instead of
        faulting them in again (env ``ANTCOLONY_HOST_MEMORY_RETAIN``; default 64 MiB; 0 leaves
        malloc as it is). Process-wide, like the BLAS limit.
    cuda_virtual_memory: how a CUDA GPU's pool gets memory (env ``ANTCOLONY_CUDA_VIRTUAL_MEMORY``):
        "auto" (default) through CUDA's virtual memory management when ``cuda.bindings`` imports
        and the device supports it (one range that grows in place and unmaps what it hands back,
        as PyTorch's expandable segments), else cudaMalloc regions; "on" requires it; "off" always
        uses cudaMalloc regions. The simulated GPU always grows in place.
    resource_config_file: the job's AntMan resource config (``{"gpuConfigInfo": {<bus id>:
        {"maxDeviceMem": bytes}}, "perfControl": 0..100}``), polled every
        ``config_poll_interval`` seconds and applied at step boundaries (env ``GPU_CONFIG_FILE``).
    statistics_file: where the job's status (memory figures, step times) is written, checked
        every ``statistics_interval`` seconds (env ``GPU_STATUS_FILE``).
    trace_file: trace every step and write them as one Chrome trace JSON file (Perfetto,
        chrome://tracing) when the session closes (env ``ANTCOLONY_TRACE_FILE``); the newest
        ``trace_max_events`` node executions are kept.
    memory_optimizer: recomputation of cheap activations for the gradients (Grappler's
        memory_optimizer, graph/passes/recompute.py): "off" (default), "manual" (ops marked with
        ``_recompute_hint``) or "heuristics" (cheap elementwise ops); env ``ANTCOLONY_MEMORY_OPTIMIZER``.
    Device settings (threads, backend, GPUs, engine, GPU memory) belong to the event loop's
    Runtime, i.e. the process: the first session on a loop decides them, and a later session
    with different ones is refused with a ConfigError.

    Precedence: an argument given to the constructor wins; a field left out takes its
    environment variable when set, else its default.
    """

    inter_op_threads: int = field(default_factory=_default_threads)
    intra_op_threads: int | None = None
    # 3/4 of 2^16: a 256x128 float32 reduction (the embedding row's loss, 32768 elements) runs
    # inline, not handed to a worker; in the bench_models rows, no mlp, word2vec or LSTM kernel,
    # nor any of the CNN's, changes place against 32768 (the CNN's first Conv2D, 50976 input
    # elements, would at 65536)
    inline_threshold: int = 49152
    bulk_segments: bool = True
    fuse_loops: bool = True
    gpu_pipeline: bool = True
    allow_soft_placement: bool = True
    log_device_placement: bool = False
    default_device: str = "/cpu:0"
    gpu_backend: str = "auto"
    sim_gpu_count: int = 1
    sim_gpu_memory: int = 16 << 30
    gpu_compute_streams: int = 2
    gpu_copy_streams: int = 1
    cpu_priority_threads: int = 4
    engine: str = "per_device"
    gpu_memory_limit: int | None = None
    allow_growth: bool = True
    vmem: bool = True
    host_mem_limit: int = 64 << 30
    host_memory_retain: int = 64 << 20
    cuda_virtual_memory: str = "auto"
    resource_config_file: str | None = None
    statistics_file: str | None = None
    config_poll_interval: float = 1.0
    statistics_interval: float = 10.0
    trace_file: str | None = None
    trace_max_events: int = 1_000_000
    memory_optimizer: str = "off"

    def __post_init__(self) -> None:
        explicit: frozenset[str] = getattr(self, "_explicit", frozenset())
        for name, (read, variable) in _FROM_ENV.items():
            if name in explicit:
                continue
            value = read(variable)
            if value is not None:
                setattr(self, name, value)
        self.validate()

    def validate(self) -> None:
        if not isinstance(self.inter_op_threads, int) or self.inter_op_threads < 1:
            raise ConfigError(
                f"SessionConfig.inter_op_threads must be an integer >= 1, got {self.inter_op_threads!r}"
            )
        if self.intra_op_threads is not None and (
            not isinstance(self.intra_op_threads, int) or self.intra_op_threads < 0
        ):
            raise ConfigError(
                "SessionConfig.intra_op_threads must be None (chosen from the cores), 0 (leave "
                f"numpy's BLAS as configured) or a positive integer, got {self.intra_op_threads!r}"
            )
        if self.engine not in ("per_device", "pooled", "naive"):
            self.engine = _engine_name(self.engine)
        if self.gpu_backend not in ("auto", "cuda", "sim"):
            raise ConfigError(
                f"SessionConfig.gpu_backend must be 'auto', 'cuda' or 'sim', got {self.gpu_backend!r}"
            )
        if self.cuda_virtual_memory not in ("auto", "on", "off"):
            raise ConfigError(
                "SessionConfig.cuda_virtual_memory must be 'auto', 'on' or 'off', "
                f"got {self.cuda_virtual_memory!r}"
            )
        for name in ("sim_gpu_count",):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
                raise ConfigError(
                    f"SessionConfig.{name} must be an integer >= 0, got {getattr(self, name)!r}"
                )
        for name in ("sim_gpu_memory", "gpu_compute_streams", "gpu_copy_streams", "cpu_priority_threads"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ConfigError(
                    f"SessionConfig.{name} must be an integer >= 1, got {getattr(self, name)!r}"
                )
        if self.gpu_memory_limit is not None and (
            not isinstance(self.gpu_memory_limit, int) or self.gpu_memory_limit < 0
        ):
            raise ConfigError(
                f"SessionConfig.gpu_memory_limit must be None or bytes >= 0, got {self.gpu_memory_limit!r}"
            )
        for name in ("host_mem_limit", "host_memory_retain"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
                raise ConfigError(f"SessionConfig.{name} must be bytes >= 0, got {getattr(self, name)!r}")
        for name in ("config_poll_interval", "statistics_interval"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"SessionConfig.{name} must be a number of seconds > 0, got {value!r}")
        if self.memory_optimizer not in ("off", "manual", "heuristics"):
            raise ConfigError(
                "SessionConfig.memory_optimizer must be 'off', 'manual' or 'heuristics', "
                f"got {self.memory_optimizer!r}"
            )
        for flag in ("fuse_loops", "gpu_pipeline"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(f"SessionConfig.{flag} must be True or False, got {getattr(self, flag)!r}")
        if not isinstance(self.inline_threshold, int) or self.inline_threshold < 0:
            raise ConfigError(
                f"SessionConfig.inline_threshold must be an integer >= 0, got {self.inline_threshold!r}"
            )


def _record_explicit(init: Callable[..., None]) -> Callable[..., None]:
    """Wrap the dataclass ``__init__`` to remember which fields the caller passed (they beat env)."""
    names = [f.name for f in dataclasses.fields(SessionConfig)]

    def __init__(self: SessionConfig, *args: object, **kwargs: object) -> None:
        object.__setattr__(self, "_explicit", frozenset(names[: len(args)]) | frozenset(kwargs))
        init(self, *args, **kwargs)

    __init__.__doc__ = init.__doc__
    return __init__


SessionConfig.__init__ = _record_explicit(SessionConfig.__init__)  # type: ignore[method-assign]
