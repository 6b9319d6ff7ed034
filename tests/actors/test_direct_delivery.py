"""``ActorRef.direct``: an idle actor with ``inline_receive`` handles a tell inside the sender's
turn; otherwise the tell is queued, and order, supervision and loop fairness hold as for tell."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from antcolony.actors import Actor, ActorRef, Runtime
from tests.waiting import LoopTurns, settle


class Log(Actor):
    inline_receive = True

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def on_receive(self, message: Any) -> None:
        if message == "boom":
            raise ValueError("boom")
        self.log.append(message)


class Relay(Actor):
    """Passes each message on to ``to`` with ``direct`` and records the order of events."""

    inline_receive = True

    def __init__(self, to: ActorRef | None, log: list[Any], name: str) -> None:
        self.send = to.direct if to is not None else None
        self.log = log
        self.name = name

    def on_receive(self, message: Any) -> None:
        self.log.append((self.name, "in", message))
        if self.send is not None:
            self.send(message)
        self.log.append((self.name, "out", message))


async def test_an_idle_actor_handles_a_direct_tell_before_the_call_returns(runtime: Runtime) -> None:
    log: list[Any] = []
    ref = runtime.spawn(Log, log)
    ref.direct(1)
    assert log == [1]


async def test_a_plain_actor_gets_a_queued_tell(runtime: Runtime) -> None:
    class Plain(Actor):
        def __init__(self, log: list[Any]) -> None:
            self.log = log

        def on_receive(self, message: Any) -> None:
            self.log.append(message)

    log: list[Any] = []
    ref = runtime.spawn(Plain, log)
    ref.direct(1)
    assert log == []
    await settle()
    assert log == [1]


async def test_a_busy_actor_queues_the_message_and_order_holds(runtime: Runtime) -> None:
    log: list[Any] = []
    ref = runtime.spawn(Log, log)
    ref.tell("first")  # queued: the actor now has a drain scheduled
    ref.direct("second")
    assert log == []
    await settle()
    assert log == ["first", "second"]


async def test_a_handler_that_sends_back_to_its_sender_does_not_reenter_it(runtime: Runtime) -> None:
    log: list[Any] = []

    class PingPong(Actor):
        inline_receive = True

        def __init__(self, name: str) -> None:
            self.name = name
            self.other: ActorRef | None = None
            self.busy = False

        def on_receive(self, message: Any) -> None:
            if isinstance(message, ActorRef):
                self.other = message
                return
            assert not self.busy, "re-entered"
            self.busy = True
            log.append((self.name, message))
            if message < 4 and self.other is not None:
                self.other.direct(message + 1)
            self.busy = False

    a, b = runtime.spawn(PingPong, "a"), runtime.spawn(PingPong, "b")
    a.tell(b)
    b.tell(a)
    await settle()
    # a runs inline, b inline inside it; b's reply to a is queued (a is busy), and a handles it
    # once its turn ends, still within this call: never inside its own handler
    a.direct(0)
    assert log == [("a", 0), ("b", 1), ("a", 2), ("b", 3), ("a", 4)]


async def test_a_failure_is_the_receivers_and_the_sender_goes_on(runtime: Runtime) -> None:
    log: list[Any] = []
    receiver = runtime.spawn(Log, log)
    relay_log: list[Any] = []
    relay = runtime.spawn(Relay, receiver, relay_log, "relay")
    relay.direct("boom")
    # the relay finished its turn; the receiver was stopped by its supervisor (the runtime)
    assert relay_log == [("relay", "in", "boom"), ("relay", "out", "boom")]
    assert not receiver.is_alive and relay.is_alive


async def test_a_long_chain_of_direct_tells_stays_within_the_stack(runtime: Runtime) -> None:
    log: list[Any] = []
    last = runtime.spawn(Log, log)
    ref = last
    for i in range(3 * sys.getrecursionlimit()):
        ref = runtime.spawn(Relay, ref, [], f"r{i}")
    ref.direct("x")  # nested up to the depth bound, then queued: no RecursionError
    await settle(50)
    for _ in range(100):
        if log:
            break
        await asyncio.sleep(0)
    assert log == ["x"]


async def test_direct_tells_let_the_loop_turn(runtime: Runtime) -> None:
    class Counter(Actor):
        inline_receive = True

        def __init__(self, done: asyncio.Future[None]) -> None:
            self.peer: Any = None
            self.done = done

        def on_receive(self, message: Any) -> None:
            if isinstance(message, ActorRef):
                self.peer = message.direct
            elif message:
                self.peer(message - 1)
            elif not self.done.done():
                self.done.set_result(None)

    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    a, b = runtime.spawn(Counter, done), runtime.spawn(Counter, done)
    a.tell(b)
    b.tell(a)
    await settle()
    async with LoopTurns() as turns:
        before = turns.count
        a.tell(20 * runtime.inline_budget)
        await done  # no other await here: only the runtime's dispatch lets the counter run
        during = turns.count - before
    assert during >= 10


async def test_a_tight_loop_of_inline_steps_still_lets_other_tasks_run() -> None:
    """A step of cheap CPU nodes completes inside ``session.run`` (awaiting its done future does
    not yield); the session still yields to the loop at least every millisecond."""
    import antcolony as ac

    g = ac.Graph()
    with g.as_default():
        x = ac.placeholder(ac.float32, [], name="x")
        y = ac.add(ac.multiply(x, 2.0), 1.0)
    async with ac.Session(g) as sess:
        await sess.run(y, {x: 1.0})
        loop = asyncio.get_running_loop()
        async with LoopTurns() as turns:
            before, start = turns.count, loop.time()
            while loop.time() - start < 0.05:  # no await in this loop but session.run's own
                assert await sess.run(y, {x: 1.0}) == 3.0
            during = turns.count - before
    assert during >= 10  # 50 ms of steps: about one yield per millisecond
