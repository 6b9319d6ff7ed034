"""Tests of the actor kernel: mailbox order and fairness, ask, stop, supervision, shutdown."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from antcolony.actors import Actor, ActorRef, Directive, Envelope, Runtime, get_runtime
from antcolony.errors import ActorDeadError, ActorError, ActorStartError, AskTimeoutError
from tests.waiting import settle


class Recorder(Actor):
    """Records every message; ``("get",)`` asks return the record."""

    def __init__(self, log: list[Any] | None = None) -> None:
        self.log = log if log is not None else []
        self.stopped = False

    def on_receive(self, message: Any) -> Any:
        if message == "get":
            return list(self.log)
        if message == "boom":
            raise ValueError("boom")
        self.log.append(message)
        return None

    def on_stop(self) -> None:
        self.stopped = True


async def test_messages_from_one_sender_are_handled_in_send_order(runtime: Runtime) -> None:
    ref = runtime.spawn(Recorder)
    for i in range(1000):
        ref.tell(i)
    assert await ref.ask("get") == list(range(1000))


async def test_two_busy_actors_interleave_by_batch(runtime: Runtime) -> None:
    class Small(Recorder):
        mailbox_batch = 4

    shared: list[Any] = []
    a = runtime.spawn(Small, shared, name="a")
    b = runtime.spawn(Small, shared, name="b")
    for i in range(20):
        a.tell(("a", i))
    for i in range(20):
        b.tell(("b", i))
    await a.ask("get")
    await b.ask("get")
    senders = [who for who, _ in shared]
    assert senders[:8] == ["a"] * 4 + ["b"] * 4
    assert senders.count("a") == senders.count("b") == 20


async def test_ask_returns_the_handler_result(runtime: Runtime) -> None:
    class Doubler(Actor):
        def on_receive(self, message: Any) -> Any:
            return message * 2

    ref = runtime.spawn(Doubler)
    assert await ref.ask(21) == 42
    assert await ref.ask(5, timeout=1.0) == 10


async def test_ask_error_reaches_the_caller_and_the_actor_survives(runtime: Runtime) -> None:
    ref = runtime.spawn(Recorder)
    ref.tell(1)
    with pytest.raises(ValueError, match="boom"):
        await ref.ask("boom")
    ref.tell(2)
    assert await ref.ask("get") == [1, 2]
    assert ref.is_alive


async def test_ask_timeout_raises_ask_timeout_error_naming_actor_and_message(runtime: Runtime) -> None:
    gate = asyncio.Event()

    class Slow(Actor):
        async def on_receive(self, message: Any) -> Any:
            await gate.wait()
            return message

    ref = runtime.spawn(Slow, name="slowpoke")
    with pytest.raises(AskTimeoutError, match=r"slowpoke.*int") as info:
        await ref.ask(1, timeout=0.01)
    assert isinstance(info.value, TimeoutError)
    gate.set()
    assert await ref.ask(2, timeout=1.0) == 2


async def test_ask_to_a_dead_actor_raises_actor_dead_error(runtime: Runtime) -> None:
    ref = runtime.spawn(Recorder, name="gone")
    await ref.stop()
    assert not ref.is_alive
    with pytest.raises(ActorDeadError, match="gone"):
        await ref.ask("get")


async def test_stop_is_ordered_after_earlier_messages(runtime: Runtime) -> None:
    log: list[Any] = []
    ref = runtime.spawn(Recorder, log)
    instance_ask = ref.ask("get")
    for i in range(5):
        ref.tell(i)
    stopped = ref.stop()
    late_ask = ref.ask("get")
    ref.tell("late")
    assert ref.stop() is stopped
    await stopped
    assert log == [0, 1, 2, 3, 4]
    assert await instance_ask == []
    with pytest.raises(ActorDeadError):
        await late_ask
    assert runtime.dead_letters[-1] == (ref.name, "'late'")


async def test_on_start_failure_raises_actor_start_error_and_the_actor_never_runs(runtime: Runtime) -> None:
    handled: list[Any] = []

    class Broken(Actor):
        def on_start(self) -> None:
            self.ref.tell("hello")
            raise RuntimeError("no start")

        def on_receive(self, message: Any) -> Any:
            handled.append(message)

    with pytest.raises(ActorStartError) as info:
        runtime.spawn(Broken)
    assert isinstance(info.value.__cause__, RuntimeError)
    await settle()
    assert handled == []
    assert runtime.stats().actors_alive == 0


class Parent(Actor):
    """Spawns a ``Recorder`` child and applies a fixed directive to its failures."""

    def __init__(self, directive: Directive, child_cls: type[Actor] = Recorder) -> None:
        self.directive = directive
        self.child_cls = child_cls
        self.failures: list[BaseException] = []

    def on_start(self) -> None:
        self.child = self.spawn(self.child_cls, name=f"{self.ref.name}.child")

    def on_receive(self, message: Any) -> Any:
        if message == "child":
            return self.child
        if message == "failures":
            return list(self.failures)
        return None

    def on_failure(self, exc: BaseException) -> None:
        self.failures.append(exc)

    def supervise(self, child: ActorRef, exc: BaseException) -> Directive:
        return self.directive


async def test_resume_keeps_the_child_state(runtime: Runtime) -> None:
    parent = runtime.spawn(Parent, Directive.RESUME)
    child = await parent.ask("child")
    child.tell(1)
    child.tell("boom")
    child.tell(2)
    assert await child.ask("get") == [1, 2]


async def test_restart_gives_fresh_state_and_keeps_the_ref_and_later_messages(runtime: Runtime) -> None:
    starts: list[int] = []

    class Counting(Recorder):
        def on_start(self) -> None:
            starts.append(1)

    parent = runtime.spawn(Parent, Directive.RESTART, Counting)
    child = await parent.ask("child")
    child.tell(1)
    child.tell("boom")
    child.tell(2)
    assert await child.ask("get") == [2]
    assert child.is_alive
    assert len(starts) == 2


async def test_stop_directive_stops_the_child_and_later_tells_are_dead_letters(runtime: Runtime) -> None:
    parent = runtime.spawn(Parent, Directive.STOP)
    child = await parent.ask("child")
    child.tell("boom")
    pending = child.ask("get")
    with pytest.raises(ActorDeadError):
        await pending
    assert not child.is_alive
    before = runtime.dead_letter_count
    child.tell("after")
    assert runtime.dead_letter_count == before + 1
    assert parent.is_alive


async def test_escalate_reaches_the_grandparent(runtime: Runtime) -> None:
    decisions: list[tuple[str, str]] = []

    class Grandparent(Actor):
        def on_start(self) -> None:
            self.middle = self.spawn(Parent, Directive.ESCALATE, name="middle")

        def on_receive(self, message: Any) -> Any:
            return self.middle

        def supervise(self, child: ActorRef, exc: BaseException) -> Directive:
            decisions.append((child.name, str(exc)))
            return Directive.STOP

    grandparent = runtime.spawn(Grandparent)
    middle = await grandparent.ask("middle")
    child = await middle.ask("child")
    child.tell("boom")
    await middle.stop()
    assert decisions == [("middle", "boom")]
    assert not middle.is_alive and not child.is_alive
    assert grandparent.is_alive


async def test_dead_letters_are_logged_and_counted(runtime: Runtime, caplog: Any) -> None:
    ref = runtime.spawn(Recorder, name="ghost")
    await ref.stop()
    caplog.set_level(logging.WARNING, logger="antcolony.actors")
    for i in range(105):
        ref.tell(i)
    assert runtime.dead_letter_count == 105
    assert runtime.stats().dead_letter_count == 105
    assert len(runtime.dead_letters) == 100
    assert runtime.dead_letters[-1] == ("ghost", "104")
    assert any("ghost" in r.getMessage() and "int" in r.getMessage() for r in caplog.records)


async def test_async_on_receive_pauses_the_mailbox_and_keeps_order(runtime: Runtime) -> None:
    events: list[Any] = []

    class Awaiting(Actor):
        async def on_receive(self, message: Any) -> Any:
            events.append(("start", message))
            await asyncio.sleep(0)
            await asyncio.sleep(0.001 * (3 - message % 3))
            events.append(("end", message))
            return message

    ref = runtime.spawn(Awaiting)
    for i in range(5):
        ref.tell(i)
    assert await ref.ask(5) == 5
    expected = [(kind, i) for i in range(6) for kind in ("start", "end")]
    assert events == expected


async def test_a_message_sent_to_self_goes_after_the_current_queue(runtime: Runtime) -> None:
    log: list[Any] = []

    class Echo(Actor):
        def on_receive(self, message: Any) -> Any:
            log.append(message)
            if message == "first":
                self.ref.tell("echo")

    ref = runtime.spawn(Echo)
    ref.tell("first")
    ref.tell("second")
    ref.stop()
    await ref.stop()
    assert log == ["first", "second"]


async def test_a_told_envelope_reaches_on_receive_unchanged(runtime: Runtime) -> None:
    ref = runtime.spawn(Recorder)
    envelope = Envelope("inner")
    ref.tell(envelope)
    assert await ref.ask("get") == [envelope]


async def test_a_sync_handler_raising_cancelled_error_is_an_ordinary_failure(runtime: Runtime) -> None:
    class Cancelling(Actor):
        def on_receive(self, message: Any) -> Any:
            raise asyncio.CancelledError()

    seen: list[BaseException] = []

    class Recording(Parent):
        def supervise(self, child: ActorRef, exc: BaseException) -> Directive:
            seen.append(exc)
            return Directive.RESUME

    parent = runtime.spawn(Recording, Directive.RESUME, Cancelling)
    child = await parent.ask("child")
    with pytest.raises(asyncio.CancelledError):
        await child.ask(1)
    child.tell(2)
    await settle()
    assert [type(exc) for exc in seen] == [asyncio.CancelledError]
    assert child.is_alive


async def test_stopping_a_parent_stops_its_children_first() -> None:
    rt = get_runtime()
    order: list[str] = []

    class Node(Actor):
        def __init__(self, depth: int) -> None:
            self.depth = depth

        def on_start(self) -> None:
            if self.depth:
                self.spawn(Node, self.depth - 1, name=f"{self.ref.name}/a")
                self.spawn(Node, self.depth - 1, name=f"{self.ref.name}/b")

        def on_stop(self) -> None:
            order.append(self.ref.name)

    root = rt.spawn(Node, 2, name="r")
    await root.stop()
    assert order == ["r/b/b", "r/b/a", "r/b", "r/a/b", "r/a/a", "r/a", "r"]
    assert rt.stats().actors_alive == 0
    await rt.shutdown()


async def test_shutdown_leaves_no_pending_task_and_closes_extensions_in_reverse_order() -> None:
    before = asyncio.all_tasks()
    rt = get_runtime()
    closed: list[str] = []

    class Sync:
        def close(self) -> None:
            closed.append("sync")

    class Async:
        async def aclose(self) -> None:
            await asyncio.sleep(0)
            closed.append("async")

    class Forever(Actor):
        async def on_receive(self, message: Any) -> Any:
            await asyncio.Event().wait()

    rt.extension("sync", lambda _: Sync())
    assert rt.extension("async", lambda _: Async()) is rt.extension("async", lambda _: Async())
    busy = rt.spawn(Forever)
    busy.tell("wait")
    stuck_ask = busy.ask("never")
    rt.create_task(asyncio.sleep(3600), name="sleeper")
    rt.spawn(Recorder).tell(1)
    await settle()
    assert rt.stats().tasks_pending == 2

    await rt.shutdown(timeout=0.05)

    assert asyncio.all_tasks() <= before
    assert closed == ["async", "sync"]
    assert rt.closed and rt.stats().actors_alive == 0
    with pytest.raises(ActorDeadError):
        await stuck_ask
    with pytest.raises(ActorError):
        rt.spawn(Recorder)
    await rt.shutdown()
    assert get_runtime() is not rt
    await get_runtime().shutdown()


class Failing(Actor):
    def on_receive(self, message: Any) -> Any:
        raise KeyError(message)


class Restarter(Actor):
    """Spawns ``middle_cls(Directive.ESCALATE, Failing)`` and restarts it when it fails."""

    def __init__(self, middle_cls: type[Actor] = Parent) -> None:
        self.middle_cls = middle_cls

    def on_start(self) -> None:
        self.middle = self.spawn(self.middle_cls, Directive.ESCALATE, Failing, name="mid")

    def on_receive(self, message: Any) -> Any:
        return self.middle

    def supervise(self, child: ActorRef, exc: BaseException) -> Directive:
        return Directive.RESTART


async def test_an_escalated_failure_restarted_above_gives_the_parent_a_fresh_instance_and_child(
    runtime: Runtime,
) -> None:
    top = runtime.spawn(Restarter)
    middle = await top.ask(None)
    first_child = await middle.ask("child")
    first_child.tell("x")
    await settle()
    assert not first_child.is_alive
    second_child = await middle.ask("child")
    assert second_child is not first_child and second_child.is_alive
    assert await middle.ask("failures") == []


async def test_restarting_a_paused_actor_cancels_its_handler_and_keeps_its_mailbox(runtime: Runtime) -> None:
    gate = asyncio.Event()

    class PausingParent(Parent):
        async def on_receive(self, message: Any) -> Any:
            if message == "wait":
                await gate.wait()
            return Parent.on_receive(self, message)

    top = runtime.spawn(Restarter, PausingParent)
    middle = await top.ask(None)
    first_child = await middle.ask("child")
    waiting = middle.ask("wait")
    later = middle.ask("child")
    await settle()
    first_child.tell("x")
    with pytest.raises(ActorError, match="restarted"):
        await waiting
    second_child = await later
    assert second_child is not first_child and second_child.is_alive
    assert not first_child.is_alive


async def test_top_level_failure_is_logged_and_stops_the_actor(runtime: Runtime, caplog: Any) -> None:
    ref = runtime.spawn(Recorder, name="lonely")
    ref.tell("boom")
    await ref.stop()
    assert not ref.is_alive
    assert any("lonely" in r.getMessage() and r.levelno == logging.ERROR for r in caplog.records)


async def test_duplicate_given_names_get_a_suffix(runtime: Runtime) -> None:
    first = runtime.spawn(Recorder, name="twin")
    second = runtime.spawn(Recorder, name="twin")
    assert first.name == "twin"
    assert second.name != "twin" and second.name.startswith("twin")


@settings(max_examples=40, deadline=None)
@given(
    schedule=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 5)), max_size=60),
    batch=st.integers(1, 8),
)
def test_random_interleavings_of_several_senders_keep_per_sender_order(
    schedule: list[tuple[int, int]], batch: int
) -> None:
    async def scenario() -> None:
        rt = get_runtime()

        class Target(Recorder):
            mailbox_batch = batch

        class Sender(Actor):
            def __init__(self, sender_id: int, target: ActorRef) -> None:
                self.sender_id = sender_id
                self.target = target
                self.seq = 0

            def on_receive(self, message: Any) -> Any:
                for _ in range(message):
                    self.target.tell((self.sender_id, self.seq))
                    self.seq += 1

        target = rt.spawn(Target)
        senders = [rt.spawn(Sender, i, target) for i in range(4)]
        for step, (who, burst) in enumerate(schedule):
            senders[who].tell(burst)
            if step % 3 == 0:
                await asyncio.sleep(0)
        for sender in senders:
            await sender.ask(0)
        log = await target.ask("get")
        for sender_id in range(4):
            seqs = [seq for who, seq in log if who == sender_id]
            assert seqs == list(range(sum(b for w, b in schedule if w == sender_id)))
        await rt.shutdown()

    asyncio.run(scenario())
