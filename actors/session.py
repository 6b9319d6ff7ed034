"""Session: runs graph fragments with ``await sess.run(fetches, feed_dict)``, as TF1's DirectSession."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from threading import get_ident
from typing import Any, NoReturn

from antcolony.actors.cached_executor import CachedExecutor
from antcolony.actors.device_context import SessionDevices
from antcolony.actors.executor import ExecutorActor
from antcolony.actors.feeds import convert_feed
from antcolony.actors.fetches import FetchPlan
from antcolony.actors.messages import AbortStep
from antcolony.actors.planner import bind_plans, plan_step
from antcolony.actors.remote_session import attach_remote_variables
from antcolony.actors.rendezvous import NO_RENDEZVOUS, LocalRendezvous
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
from antcolony.actors.runtime import Runtime, clock, get_runtime
from antcolony.actors.services.job import job_services
from antcolony.actors.services.resource_manager import ResourceManager
from antcolony.actors.services.statistics_action import StatisticsReporter
from antcolony.actors.session_stats import SessionStatistics, session_statistics
from antcolony.actors.step import StepState, of_aborted_step
from antcolony.config.atomic_file import write_file_atomic_async
from antcolony.config.session_config import SessionConfig, chosen_intra_op_threads
from antcolony.devices.device_set import DeviceInfo, DeviceSet, DeviceSettings, get_device_set
from antcolony.devices.launch import DropLaunches
from antcolony.devices.resources import SessionResources
from antcolony.errors import (
    ActorError,
    AsyncOnlyError,
    CancelledError,
    DeadlineExceededError,
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
        self._executors: dict[tuple[Any, ...], CachedExecutor] = {}
        self._plans: dict[Any, FetchPlan] = {}
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
            self._devices = get_device_set(rt, _device_settings(self._config))
            self._executors.clear()
            self._plans.clear()
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
        # The checks below are _attach's, _fetch_plan's and check_run_options' short paths:
        # a repeated run of a cheap step costs a few microseconds, most of it these layers.
        if options is not None or run_metadata is not None:
            check_run_options(options, run_metadata)
        rt = self._runtime
        # The runtime's loop is the running one when it runs and this is the thread _attach found
        # it running in (one thread runs one loop at a time). asyncio.get_running_loop, _attach's
        # exact test, makes a getpid system call: 0.2 us, a twelfth of a cheap step.
        if self._closed or rt is None or rt.closed or self._thread != get_ident() or not rt.loop.is_running():
            rt = self._attach()
        plan = self._plans.get(fetches) if fetches.__class__ is Tensor else None
        if plan is None:
            plan = self._fetch_plan(fetches)
        if feed_dict is None or (feed_dict.__class__ is dict and not feed_dict):
            feeds: dict[Tensor, Any] = {}
        else:
            feeds = self._convert_feeds(feed_dict)
        if options is not None or self._trace_all or any(self._action_lists):
            return plan.pack(await self._run_plan(rt, plan, feeds, options, run_metadata))
        # no run actions, no tracing, no deadline: _run_plan's steps, shortened
        hit = plan.executors.get(tuple(feeds) if feeds else ())
        executor, perm = hit if hit is not None and hit[0].cell.alive else self._executor_for(rt, plan, feeds)
        step = StepState(  # _new_step's, inlined: one call fewer on the fixed-cost path
            [feeds[t] for t in executor.feeds] if feeds else (),
            len(plan.tensors),
            False,
            executor.refs,
            executor.coordinator,
            LocalRendezvous(rt.loop) if executor.partitioned else NO_RENDEZVOUS,
            executor.units,
        )
        for start in executor.starts:
            start(step)  # the step itself is the start message
        # yield_due's test inlined: it is false on nearly every step
        if step.done and step.error is None and (clock() - rt.yielded_at < rt.yield_s or not rt.yield_due()):
            values = step.fetched
        else:
            try:
                values = await self._settle(step, executor, None)
            except BaseException:
                del step, executor  # see _settle: this frame must not keep them either
                raise
        if perm is not None:
            values = [values[i] for i in perm]
        return values[0] if plan.single else plan.pack(values)

    def _fetch_plan(self, fetches: Any) -> FetchPlan:
        # Plans of a tensor, op or name, or a flat list or tuple of them, are reused: a training
        # loop fetches the same ``[loss, train_op]`` every step.
        key = _plan_key(fetches)
        plan = self._plans.get(key) if key is not None else None
        if plan is not None:
            return plan
        plan = FetchPlan(self._graph, fetches)
        if key is not None and len(self._plans) < 1024:
            self._plans[key] = plan
        return plan

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
            check_run_options(options, run_metadata)
            rt = self._attach()
            feeds = {t: convert_feed(t, v) for t, v in zip(feed_tensors, args)}
            return plan.pack(await self._run_plan(rt, plan, feeds, options, run_metadata))

        return call

    async def _run_plan(
        self,
        rt: Runtime,
        plan: FetchPlan,
        feeds: dict[Tensor, Any],
        options: RunOptions | None,
        run_metadata: RunMetadata | None,
    ) -> list[Any]:
        # A deadline counts from the call: the run actions before and after the step (a job
        # suspended at its step boundary by perfControl 0, or paced) are inside it too.
        deadline = _deadline(rt, options)
        executor, perm = self._executor_for(rt, plan, feeds)
        trace = self._trace_all or (options is not None and options.trace_level >= RunOptions.FULL_TRACE)
        step = self._new_step(rt, executor, feeds, len(plan.tensors), trace)
        registries = self._registries
        if registries[0].pre or registries[1].pre or registries[2].pre:
            await _within(
                deadline,
                options,
                "in the actions before the step",
                run_actions(
                    ordered(RunGroup.PRE, registries),
                    RunContext(self, executor.graph_id, executor.devices, step.id),
                ),
            )
        post = registries[0].post or registries[1].post or registries[2].post
        started = time.perf_counter() if post else 0.0
        for start in executor.starts:
            start(step)  # the step itself is the start message
        if step.done and step.error is None and not rt.yield_due():
            values = step.fetched
        else:
            try:
                values = await self._settle(step, executor, options, deadline)
            except BaseException:
                del step, executor  # see _settle: this frame must not keep them either
                raise
        if post:
            ctx = RunContext(
                self, executor.graph_id, executor.devices, step.id, (time.perf_counter() - started) * 1e6
            )
            where = "at the step boundary after the step (a job suspended by perfControl 0 waits there)"
            await _within(deadline, options, where, run_actions(ordered(RunGroup.POST, registries), ctx))
        if trace:
            self._record_trace(step, run_metadata)
        return values if perm is None else [values[i] for i in perm]

    @staticmethod
    def _new_step(
        rt: Runtime, executor: CachedExecutor, feeds: dict[Tensor, Any], num_fetches: int, trace: bool
    ) -> StepState:
        return StepState(
            [feeds[t] for t in executor.feeds] if feeds else (),
            num_fetches,
            trace,
            executor.refs,
            executor.coordinator,
            LocalRendezvous(rt.loop) if executor.partitioned else NO_RENDEZVOUS,
            executor.units,
        )

    async def _settle(
        self,
        step: StepState,
        executor: CachedExecutor,
        options: RunOptions | None,
        deadline: float | None = None,
    ) -> list[Any]:
        """The values of a started step that is not simply done: awaited if it did not end within
        the call that started it (it is in flight until then, and ``close`` fails it), its error
        raised if it failed there, else after one yield to the loop, which a step run entirely
        inline never gave (``Runtime.yield_due`` says when one is due)."""
        if step.done:
            if step.error is not None:
                self._raise(step)
            await asyncio.sleep(0)
            return step.fetched
        inflight = self._inflight
        inflight.add(step)
        try:
            if deadline is None:
                values: list[Any] = await step.waiter()
            else:
                assert options is not None  # a deadline comes from its options
                values = await self._await_step(step, executor, options, deadline)
        except BaseException as exc:
            inflight.discard(step)
            if isinstance(exc, asyncio.CancelledError):
                self._cancel(step, executor)
            # The error's traceback keeps this frame; the frame must not keep the step (whose
            # future holds the error): error -> frame -> step -> future -> error is a cycle that
            # holds the executor's device tensors until the garbage collector happens to run.
            del step, executor
            raise
        inflight.discard(step)
        return values

    @staticmethod
    def _raise(step: StepState) -> NoReturn:
        """Raise the error of a step that failed within the call that started it. The step
        hands the error over: the raise gives it a traceback holding the caller's frame, which
        holds the step, and step -> error -> traceback -> frame -> step would be a cycle keeping
        the executor's tensors until the garbage collector runs."""
        error = step.error
        assert error is not None
        step.error = None
        try:
            raise error
        finally:
            del error

    def _record_trace(self, step: StepState, run_metadata: RunMetadata | None) -> None:
        if run_metadata is not None:
            run_metadata._record(step.trace or [])
        if self._trace_all:
            self._trace_log._record(step.trace or [])
            del self._trace_log.step_stats[: -self._config.trace_max_events]

    async def _await_step(
        self, step: StepState, executor: CachedExecutor, options: RunOptions, deadline: float
    ) -> list[Any]:
        timeout_ms = options.timeout_in_ms
        try:
            async with asyncio.timeout_at(deadline):
                return await step.waiter()
        except TimeoutError:
            pass  # raised below, outside this handler, so the error does not chain the TimeoutError
        except BaseException:
            del step, executor  # as in _run_plan
            raise
        error = DeadlineExceededError(
            None, None, f"Timed out after {timeout_ms} ms waiting for step {step.id}"
        )
        executor.refs[0].tell(AbortStep(step, error))
        try:
            raise error
        finally:
            # as in _run_plan: no cycle error -> this frame -> step (or error) -> error
            del error, step, executor

    @staticmethod
    def _cancel(step: StepState, executor: CachedExecutor) -> None:
        if not step.done:
            executor.refs[0].tell(
                AbortStep(step, CancelledError(None, None, "the caller's task was cancelled"))
            )

    def _executor_for(
        self, rt: Runtime, plan: FetchPlan, feeds: dict[Tensor, Any]
    ) -> tuple[CachedExecutor, list[int] | None]:
        """The cached executor for the sorted (feeds, fetches, targets), and where each fetch lands."""
        fast_key = tuple(feeds)
        hit = plan.executors.get(fast_key)
        if hit is not None and hit[0].alive:
            return hit
        feed_list = sorted(feeds, key=lambda t: t.name)
        fetch_list = sorted(plan.tensors, key=lambda t: t.name)
        key = (
            tuple(t.name for t in feed_list),
            tuple(t.name for t in fetch_list),
            tuple(sorted(o.name for o in plan.targets)),
        )
        ex = self._executors.get(key)
        if ex is None or not ex.alive:
            ex = self._executors[key] = self._build_executor(rt, fetch_list, plan.targets, feed_list)
        position = {id(t): i for i, t in enumerate(fetch_list)}
        perm = [position[id(t)] for t in plan.tensors]
        hit = plan.executors[fast_key] = (ex, None if perm == list(range(len(perm))) else perm)
        return hit

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
        plans = plan_step(run_fetches, run_targets, run_feeds, ctx)
        bind_plans(plans, ctx)
        n = len(self._executors)
        refs = [rt.spawn(ExecutorActor, p, name=f"executor-{n}:{p.device}") for p in plans]
        logger.debug(
            "built executor %d: %s", n, ", ".join(f"{p.device}: {len(p.specs)} nodes" for p in plans)
        )
        return CachedExecutor(plans, refs, feeds, job_services(rt).next_graph_id())

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
        self._executors.clear()
        self._plans.clear()
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


def _deadline(rt: Runtime, options: RunOptions | None) -> float | None:
    """The loop time by which a run with ``options`` must end (None: no deadline; TF1 reads a
    timeout of 0 or less as none)."""
    if options is None or options.timeout_in_ms <= 0:
        return None
    return rt.loop.time() + options.timeout_in_ms / 1000.0


async def _within(
    deadline: float | None, options: RunOptions | None, where: str, work: Awaitable[None]
) -> None:
    """Await ``work`` (run actions) before ``deadline``; past it, the run fails with
    ``DeadlineExceededError`` saying where it waited."""
    if deadline is None:
        await work
        return
    try:
        async with asyncio.timeout_at(deadline):
            await work
        return
    except TimeoutError:
        pass  # raised below, outside this handler, so the error does not chain the TimeoutError
    assert options is not None
    raise DeadlineExceededError(
        None,
        None,
        f"Timed out after {options.timeout_in_ms} ms (RunOptions.timeout_in_ms) {where}; raise the "
        "timeout, or resume the job (perfControl > 0) when it is suspended",
    )


def _intra_op_threads(config: SessionConfig) -> int | None:
    """BLAS threads for the runtime; None leaves BLAS alone (the config's 0)."""
    if config.intra_op_threads is None:
        return chosen_intra_op_threads(config.inter_op_threads)
    return config.intra_op_threads or None


_LEAVES = (Tensor, Operation, str)


def _plan_key(fetches: Any) -> Any:
    """The key of a reusable fetch plan, or None. The sequence's type is part of the key: a
    namedtuple equals a plain tuple of the same elements, and a list packs differently."""
    cls = fetches.__class__
    if cls is list or cls is tuple:
        for leaf in fetches:
            if not isinstance(leaf, _LEAVES):
                return None
        return (cls, *fetches)
    return fetches if isinstance(fetches, _LEAVES) else None


def _device_settings(config: SessionConfig) -> DeviceSettings:
    return DeviceSettings(
        inter_op_threads=config.inter_op_threads,
        intra_op_threads=_intra_op_threads(config),
        cpu_priority_threads=config.cpu_priority_threads,
        gpu_backend=config.gpu_backend,
        sim_gpu_count=config.sim_gpu_count,
        sim_gpu_memory=config.sim_gpu_memory,
        gpu_compute_streams=config.gpu_compute_streams,
        gpu_copy_streams=config.gpu_copy_streams,
        engine=config.engine,
        gpu_memory_limit=config.gpu_memory_limit,
        allow_growth=config.allow_growth,
        vmem=config.vmem,
        host_mem_limit=config.host_mem_limit,
        host_memory_retain=config.host_memory_retain,
    )
