"""Session: runs graph fragments with ``await sess.run(fetches, feed_dict)``, as TF1's DirectSession."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from functools import partial
from threading import get_ident
from typing import Any

from antcolony.actors.cached_executor import CachedExecutor
from antcolony.actors.device_context import SessionDevices, device_settings
from antcolony.actors.executor_cache import ExecutorCache
from antcolony.actors.feeds import convert_feed
from antcolony.actors.fetches import FetchPlan, as_user_value
from antcolony.actors.planner import bind_plans, plan_step
from antcolony.actors.remote_session import attach_remote_variables
from antcolony.actors.run_actions import (
    RUN_ACTIONS,
    RunAction,
    RunActionRegistry,
    RunContext,
    RunGroup,
    ordered,
    run_actions,
    run_actions_of,
)
from antcolony.actors.run_args import check_run_options, collect_feeds
from antcolony.actors.run_options import RunMetadata, RunOptions
from antcolony.actors.runtime import Runtime, get_runtime
from antcolony.actors.services.job import job_services
from antcolony.actors.services.resource_manager import ResourceManager
from antcolony.actors.services.statistics_action import StatisticsReporter
from antcolony.actors.session_stats import SessionStatistics, session_statistics
from antcolony.actors.step import StepState, new_step_id, of_aborted_step
from antcolony.actors.step_wait import deadline_of, settle, within
from antcolony.config.atomic_file import write_file_atomic_async
from antcolony.config.session_config import SessionConfig
from antcolony.devices.device_set import DeviceInfo, DeviceSet, get_device_set
from antcolony.devices.launch import DropLaunches
from antcolony.devices.resources import SessionResources
from antcolony.errors import (
    ActorError,
    AsyncOnlyError,
    CancelledError,
    InvalidArgumentError,
    SessionClosedError,
)
from antcolony.graph.core import Graph, Operation, Tensor, get_default_graph

logger = logging.getLogger(__name__)


class Session:
    """A TF1-style session over one graph; use as ``async with ac.Session(graph) as sess``.

    Executors are built per (feeds, fetches, targets) key on first use and cached; several
    ``run`` calls may be in flight at once. A failed step leaves the session usable.
    """

    def __init__(
        self, graph: Graph | None = None, config: SessionConfig | None = None, target: str = ""
    ) -> None:
        self._graph = graph if graph is not None else get_default_graph()
        self._config = config if config is not None else SessionConfig()
        self._resources = SessionResources()
        self._cache = ExecutorCache()
        # the cache's dicts (cleared in place): read by run's short path and session_stats
        self._executors = self._cache.executors
        self._plans = self._cache.plans
        self._run_actions = RunActionRegistry()
        # A task's session (target = a tf.train.Server of this process): variables placed on
        # other tasks are pulled before and pushed after each step, as two run actions.
        self.remote_variables = attach_remote_variables(self, target) if target else None
        self._resource_manager: ResourceManager | None = None
        self._statistics: StatisticsReporter | None = None
        self._inflight: set[StepState] = set()
        self._runtime: Runtime | None = None
        self._thread = 0  # the thread _attach last found running the runtime's loop
        self._devices: DeviceSet | None = None
        self._closed = False
        # SessionConfig.trace_file: every step is traced, written as one Chrome trace at close.
        self._trace_all = bool(self._config.trace_file)
        self._trace_log = RunMetadata()

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def config(self) -> SessionConfig:
        return self._config

    @property
    def closed(self) -> bool:
        return self._closed

    async def __aenter__(self) -> Session:
        self._attach()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def __enter__(self) -> Session:
        raise AsyncOnlyError(
            "ac.Session is asynchronous: use `async with ac.Session(...) as sess:` and `await sess.run(...)`; "
            "for blocking TF1-style code use `import antcolony.compat.v1 as tf` and `with tf.Session() as sess:`"
        )

    def __exit__(self, *exc: Any) -> None:
        return None

    def _attach(self) -> Runtime:
        if self._closed:
            raise SessionClosedError("Attempted to use a closed Session; create a new one")
        rt = self._runtime
        if rt is not None and rt.loop is asyncio.get_running_loop() and not rt.closed:
            self._thread = get_ident()
            return rt
        rt = get_runtime()
        if self._runtime is None or self._runtime.closed:
            self._runtime = rt
            self._devices = get_device_set(rt, device_settings(self._config))
            self._cache.clear()
            self._registries = (RUN_ACTIONS, run_actions_of(rt), self._run_actions)
            # the registries' pre and post lists, which they change in place: any() of them is
            # the per-run check for actions
            self._action_lists = tuple(lst for r in self._registries for lst in (r.pre, r.post))
            self._start_services()
        elif self._runtime is not rt:
            raise SessionClosedError("this Session belongs to another event loop; create one per loop")
        self._thread = get_ident()
        return rt

    def _start_services(self) -> None:
        """The job's AntMan services, when their files are set: resource manager, statistics.
        Both are the process's (one per file per Runtime), shared with its other sessions."""
        config, services = self._config, job_services(self._runtime)
        if config.resource_config_file and self._resource_manager is None:
            self._resource_manager = services.resource_manager(
                self._devices, config.resource_config_file, config.config_poll_interval
            )
            self._run_actions.add(self._resource_manager.action)
        if config.statistics_file and self._statistics is None:
            self._statistics = services.statistics(
                self._devices, config.statistics_file, config.statistics_interval
            )
            self._run_actions.add(self._statistics.action)

    @property
    def resource_manager(self) -> ResourceManager | None:
        """The job's resource manager (None without ``resource_config_file``)."""
        return self._resource_manager

    async def flush_statistics(self) -> bool:
        """Write the job's status file now (it is otherwise written when its figures change, as
        AntMan's); False when there is no ``statistics_file`` or nothing to report yet."""
        self._attach()
        return self._statistics is not None and await self._statistics.flush()

    # -- running -------------------------------------------------------------------------
    async def run(
        self,
        fetches: Any,
        feed_dict: dict[Any, Any] | None = None,
        options: RunOptions | None = None,
        run_metadata: RunMetadata | None = None,
    ) -> Any:
        """Run the graph fragment needed for ``fetches``; returns values in the same structure."""
        if options is not None or run_metadata is not None:
            check_run_options(options, run_metadata)
        rt = self._runtime
        # _attach's test, without its getpid system call (asyncio.get_running_loop): the
        # runtime's loop is the running one when it runs in the thread _attach found it in.
        if self._closed or rt is None or rt.closed or self._thread != get_ident() or not rt.loop.is_running():
            rt = self._attach()
        cls = fetches.__class__
        plan = self._plans.get(fetches) if cls is Tensor else fetches if cls is FetchPlan else None
        if plan is None:
            plan = self._cache.fetch_plan(self._graph, fetches)
        if feed_dict is None or (feed_dict.__class__ is dict and not feed_dict):
            feeds: dict[Tensor, Any] = {}
        else:
            feeds = self._convert_feeds(feed_dict)
        hit = plan.executors.get(tuple(feeds) if feeds else ())
        executor, perm = (
            hit
            if hit is not None
            else self._cache.executor_for(plan, feeds, partial(self._build_executor, rt))
        )
        # A deadline counts from the call: the run actions before and after the step (a job
        # suspended at its step boundary by perfControl 0, or paced) are inside it too.
        deadline = None if options is None else deadline_of(rt, options)
        trace = self._trace_all or (options is not None and options.trace_level >= RunOptions.FULL_TRACE)
        actions = any(self._action_lists)
        step_id = 0
        if actions:
            step_id = new_step_id()
            started = await self._run_actions_before(executor, step_id, options, deadline)
        step = executor.start(feeds, len(plan.tensors), trace, step_id)
        if step is None:  # its executors stopped: the cache builds new ones
            executor, perm = self._cache.executor_for(plan, feeds, partial(self._build_executor, rt))
            step = executor.start(feeds, len(plan.tensors), trace, step_id)
            assert step is not None
        if step.done and step.error is None and not rt.yield_due():
            values = step.fetched
        else:
            try:
                values = await settle(step, executor, self._inflight, options, deadline)
            except BaseException:
                del step, executor  # see step_wait.py: this frame must not keep them either
                raise
        if actions:
            await self._run_actions_after(executor, step, options, deadline, started)
        if trace:
            self._record_trace(step, run_metadata)
        if perm is not None:
            values = [values[i] for i in perm]
        if plan.single:
            return as_user_value(values[0])
        return plan.pack([as_user_value(v) for v in values])

    def make_callable(
        self,
        fetches: Any,
        feed_list: Sequence[Any] | None = None,
    ) -> Callable[..., Coroutine[Any, Any, Any]]:
        """An async callable running ``fetches`` with positional feed values for ``feed_list``."""
        plan = FetchPlan(self._graph, fetches)
        feed_tensors = [self._feed_tensor(k) for k in (feed_list or [])]
        if len(set(feed_tensors)) != len(feed_tensors):
            raise InvalidArgumentError(None, None, "make_callable: feed_list names a tensor twice")

        async def call(
            *args: Any, options: RunOptions | None = None, run_metadata: RunMetadata | None = None
        ) -> Any:
            if len(args) != len(feed_tensors):
                raise InvalidArgumentError(
                    None, None, f"callable expects {len(feed_tensors)} feed values, got {len(args)}"
                )
            # Session.run takes the plan built above as its fetches.
            return await self.run(plan, dict(zip(feed_tensors, args)), options, run_metadata)

        return call

    async def _run_actions_before(
        self, executor: CachedExecutor, step_id: int, options: RunOptions | None, deadline: float | None
    ) -> float:
        """Run the PRE actions of step ``step_id``; returns when it starts (for the POST actions)."""
        registries = self._registries
        if registries[0].pre or registries[1].pre or registries[2].pre:
            await within(
                deadline,
                options,
                "in the actions before the step",
                run_actions(
                    ordered(RunGroup.PRE, registries),
                    RunContext(self, executor.graph_id, executor.devices, step_id),
                ),
            )
        return time.perf_counter()

    async def _run_actions_after(
        self,
        executor: CachedExecutor,
        step: StepState,
        options: RunOptions | None,
        deadline: float | None,
        started: float,
    ) -> None:
        registries = self._registries
        if not (registries[0].post or registries[1].post or registries[2].post):
            return
        ctx = RunContext(
            self, executor.graph_id, executor.devices, step.id, (time.perf_counter() - started) * 1e6
        )
        where = "at the step boundary after the step (a job suspended by perfControl 0 waits there)"
        await within(deadline, options, where, run_actions(ordered(RunGroup.POST, registries), ctx))

    def _record_trace(self, step: StepState, run_metadata: RunMetadata | None) -> None:
        if run_metadata is not None:
            run_metadata._record(step.trace or [])
        if self._trace_all:
            self._trace_log._record(step.trace or [])
            del self._trace_log.step_stats[: -self._config.trace_max_events]

    def _build_executor(
        self, rt: Runtime, fetches: list[Tensor], targets: list[Operation], feeds: list[Tensor]
    ) -> CachedExecutor:
        assert self._devices is not None
        ctx = self._device_context()
        run_fetches, run_targets, run_feeds = fetches, targets, feeds
        if self._config.memory_optimizer != "off":
            from antcolony.graph.passes.recompute import optimize_for_run

            # The step runs a rewritten copy; names (and variables, by shared_name) carry over.
            g, _ = optimize_for_run(
                self._graph,
                [t.name for t in fetches],
                [o.name for o in targets],
                [t.name for t in feeds],
                self._config.memory_optimizer,
            )
            run_fetches, run_feeds = ([g.get_tensor_by_name(t.name) for t in ts] for ts in (fetches, feeds))
            run_targets = [g.get_operation_by_name(o.name) for o in targets]
        remote = self.remote_variables
        if remote is not None and remote.steps.active():
            # a task's session: ops on other tasks run there (actors/remote_partition.py)
            return remote.steps.build(rt, run_fetches, run_targets, run_feeds, feeds, ctx)
        plans = plan_step(run_fetches, run_targets, run_feeds, ctx)
        bind_plans(plans, ctx)
        return CachedExecutor(rt, plans, feeds, job_services(rt).next_graph_id())

    # -- feeds ----------------------------------------------------------------------------
    def _feed_tensor(self, key: Any) -> Tensor:
        try:
            el = self._graph.as_graph_element(key)
        except Exception as exc:
            raise InvalidArgumentError(None, None, f"Cannot feed {key!r}: {exc}") from None
        if isinstance(el, Operation):
            raise InvalidArgumentError(
                None, el, f"Cannot feed {key!r}: it names an Operation; feed its output tensor '{el.name}:0'"
            )
        return el

    def _convert_feeds(self, feed_dict: dict[Any, Any] | None) -> dict[Tensor, Any]:
        return collect_feeds(feed_dict, self._feed_tensor, convert_feed)

    # -- introspection and shutdown ---------------------------------------------------------
    def add_run_action(self, action: RunAction) -> RunAction:
        """Run ``action`` before or after every ``run`` of this session (see actors/run_actions.py)."""
        return self._run_actions.add(action)

    def _device_context(self) -> SessionDevices:
        assert self._devices is not None
        return SessionDevices(self._devices, self._resources, self._config)

    def _memory(self, device: str, readonly: bool = False) -> Any:
        # A closed session's figures stay readable: they show what its steps still hold.
        if not (readonly and self._closed and self._devices is not None):
            self._attach()
        ctx = self._device_context()
        try:
            return ctx.memory(f"/device:GPU:{ctx.devices.gpu_named(device)}")
        except ValueError as exc:
            raise InvalidArgumentError(None, None, str(exc)) from None

    def memory_stats(self, device: str = "/gpu:0") -> Any:
        """The allocator figures of a GPU for this process (every session of the runtime shares
        one allocator stack per GPU): ``bytes_in_use``, ``peak_bytes_in_use``, ``bytes_limit``,
        ``pool_bytes``, ``stable_bytes``, ``host_bytes_in_use``, ``host_peak_bytes_in_use``,
        ``num_allocs``, ``num_host_fallbacks``, ...). ``device`` is a GPU name or PCI bus id.
        Also readable after ``close()``."""
        return self._memory(device, readonly=True).memory_stats()

    def reset_memory_peak(self, device: str = "/gpu:0") -> None:
        """Start a new peak window (``window_peak_bytes_in_use``, host too) on a GPU."""
        self._memory(device).reset_peak()

    def adjust_memory_limit(self, device: str, new_limit: int) -> int:
        """Change the process's memory limit on a GPU now (clamped to the initial limit); returns
        the limit reached. When live data keeps it above ``new_limit`` a WARNING says which
        allocations block it, and the shrink is retried as they are freed (AntMan's adjustment)."""
        memory = self._memory(device)
        reached = memory.adjust_limit(int(new_limit))
        wanted = min(int(new_limit), memory.adjustable.max_limit)
        if reached > wanted:
            logger.warning(
                "%s: memory limit asked %d bytes, reached %d: %s",
                device,
                wanted,
                reached,
                memory.limit_shortfall(),
            )
        return reached

    def statistics(self) -> SessionStatistics:
        """Executors cached, executor actors alive, runs in flight, ... (see actors/session_stats.py)."""
        return session_statistics(self)

    def list_devices(self) -> list[DeviceInfo]:
        self._attach()
        assert self._devices is not None
        return list(self._devices.devices)

    async def _drop_gpu_work(self) -> None:
        """The GPUs drop the launches of aborted steps still queued (on the process's GPU
        workers, shared with other sessions, and on their streams), and this waits, at most
        ``CLOSE_DRAIN_S``, for the ones already running: the device and the memory the steps
        held are free when ``close`` returns."""
        devices, rt = self._devices, self._runtime
        if devices is None or rt is None or rt.closed or not devices.gpu_workers:
            return
        asks = [w.ask(DropLaunches(of_aborted_step)) for w in devices.gpu_workers if w.is_alive]
        replies = await asyncio.gather(*asks, return_exceptions=True)
        drained = [f for reply in replies if isinstance(reply, tuple) for f in reply[1]]
        dropped = sum(reply[0] for reply in replies if isinstance(reply, tuple))
        if not drained:
            return
        _, running = await asyncio.wait(drained, timeout=CLOSE_DRAIN_S)
        if running:
            logger.warning(
                "close: kernels of the closed session's steps still run on %d GPU stream(s) after "
                "%.0f s; their memory is freed when they end",
                len(running),
                CLOSE_DRAIN_S,
            )
        logger.debug("close: dropped %d queued GPU launches", dropped)

    async def close(self) -> None:
        """Cancel steps in flight (their callers get ``CancelledError``), stop executors, free state."""
        if self._closed:
            return
        self._closed = True
        had_steps = bool(self._inflight)
        for step in list(self._inflight):
            step.aborted = True
            error = CancelledError(None, None, "the session was closed while the step was running")
            step.rendezvous.abort(error)  # pending receives fail and drop the step
            step.fail(error)
        if had_steps:
            await self._drop_gpu_work()
        executors = list(self._executors.values())
        stops = [ref.stop() for ex in executors for ref in ex.refs if ref.is_alive]
        self._cache.clear()
        services = None
        if self._runtime is not None and (self._resource_manager or self._statistics):
            try:
                services = job_services(self._runtime)
            except ActorError:  # the runtime shut down first and closed the services itself
                services = None
        for service in (self._resource_manager, self._statistics):
            if service is not None and services is not None:
                if service is self._resource_manager:
                    service.wake()
                await services.release(service)
        if stops:
            await asyncio.gather(*stops, return_exceptions=True)
        for ex in executors:
            ex.release()
        self._resources.release()
        if self._trace_all and self._config.trace_file:
            await write_file_atomic_async(self._config.trace_file, self._trace_log.chrome_trace())
            logger.info("wrote the step trace to %s", self._config.trace_file)
        self._resources = SessionResources()


#: How long ``close`` waits for kernels of its steps already running on a GPU stream.
CLOSE_DRAIN_S = 10.0
