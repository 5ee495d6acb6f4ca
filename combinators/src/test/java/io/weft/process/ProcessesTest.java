package io.weft.process;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.TimedOut;
import io.weft.channel.Channel;
import io.weft.combinators.RetryPolicy;
import io.weft.fiber.FiberIo;
import io.weft.testing.Ios;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link Processes}: routing, ask, dead letters, restarts, shutdown; on every Io. */
class ProcessesTest {
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    /** A counter's messages. */
    sealed interface Msg permits Add, Get, Boom, Hold {}

    record Add(int amount) implements Msg {}

    record Get(Reply<Long> reply) implements Msg {}

    record Boom() implements Msg {}

    /** Says it started, then waits on {@code gate} while handling, so the mailbox fills behind it. */
    record Hold(Channel<String> gate, Channel<String> started) implements Msg {}

    /** A counter that remembers what it was sent, fails on Boom, and answers Get. */
    static final class Counter implements Handler<Msg> {
        final List<Integer> seen = new ArrayList<>();
        long total;

        @Override
        public void handle(ProcessContext<Msg> self, Msg message) {
            switch (message) {
                case Add add -> {
                    seen.add(add.amount());
                    total += add.amount();
                }
                case Get get -> get.reply().complete(total);
                case Boom boom -> throw new IllegalStateException("boom in " + self.self());
                case Hold hold -> {
                    hold.started().trySend("busy");
                    hold.gate().receive();
                }
            }
        }
    }

    static Stream<Named<Ios.Kind>> realClockConcurrent() {
        return Ios.concurrent().filter(named -> !named.getPayload().virtualClock());
    }

    private static Processes quietRegistry(List<DeadLetter> dead, List<Throwable> failures) {
        return Processes.builder()
                .deadLetters(dead::add)
                .onFailure((pid, failure) -> failures.add(failure))
                .build();
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void sendRoutesByPidInOrderAndAskAnswers(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                try (Processes processes = Processes.create()) {
                    List<Counter> counters = new CopyOnWriteArrayList<>();
                    Pid<Msg> a = processes.spawn("a", () -> {
                        Counter c = new Counter();
                        counters.add(c);
                        return c;
                    });
                    Pid<Msg> b = processes.spawn("b", Counter::new);
                    for (int i = 1; i <= 100; i++) {
                        processes.send(a, new Add(i));
                        processes.send(b, new Add(1));
                    }
                    long totalA =
                            processes.<Msg, Long>ask(a, Get::new, PATIENCE).await();
                    long totalB =
                            processes.<Msg, Long>ask(b, Get::new, PATIENCE).await();
                    assertEquals(5050, totalA);
                    assertEquals(100, totalB);
                    List<Integer> expected = new ArrayList<>();
                    for (int i = 1; i <= 100; i++) {
                        expected.add(i);
                    }
                    assertEquals(expected, counters.getFirst().seen, "handled in the order sent");
                    assertTrue(processes.isAlive(a));
                    assertEquals(2, processes.processes().size());
                    assertEquals("a", a.name());
                    assertTrue(a.id() != b.id());
                }
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void anAskNobodyAnswersTimesOutOnTheIosClockAndAFailedReplyFailsTheFuture(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                try (Processes processes = Processes.create()) {
                    Pid<Reply<String>> silent = processes.spawn("silent", () -> (self, reply) -> {});
                    long start = opened.io().nowMs();
                    Future<String> answer = processes.ask(silent, reply -> reply, Duration.ofMillis(40));
                    TimedOut timedOut = assertThrows(TimedOut.class, answer::await);
                    assertTrue(timedOut.getMessage().contains("silent#"), timedOut.getMessage());
                    assertTrue(opened.io().nowMs() - start >= 40, "waited the timeout");

                    IllegalArgumentException refused = new IllegalArgumentException("no");
                    Pid<Reply<String>> refuser = processes.spawn("refuser", () -> (self, reply) -> reply.fail(refused));
                    Future<String> failed = processes.ask(refuser, reply -> reply, PATIENCE);
                    assertSame(refused, assertThrows(IllegalArgumentException.class, failed::await));
                }
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void anUnknownOrEndedPidIsAClearErrorAndQueuedMessagesBecomeDeadLetters(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                List<DeadLetter> dead = new CopyOnWriteArrayList<>();
                List<Throwable> failures = new CopyOnWriteArrayList<>();
                try (Processes processes = quietRegistry(dead, failures);
                        Processes other = Processes.create()) {
                    Pid<String> elsewhere = other.spawn("elsewhere", () -> (self, m) -> {});
                    ProcessNotFound unknown =
                            assertThrows(ProcessNotFound.class, () -> processes.send(elsewhere, "hi"));
                    assertTrue(unknown.getMessage().contains("elsewhere#"), unknown.getMessage());

                    // a process that stops on "stop": what was queued behind it becomes dead letters
                    Pid<String> stopper = processes.spawn("stopper", () -> (self, m) -> {
                        if (m.equals("stop")) {
                            self.stop();
                            assertThrows(
                                    ProcessNotFound.class, () -> self.registry().send(self.self(), "late"));
                        }
                    });
                    Future<Void> ended = processes.termination(stopper);
                    processes.send(stopper, "stop");
                    ended.await(PATIENCE);
                    assertFalse(processes.isAlive(stopper));
                    assertThrows(ProcessNotFound.class, () -> processes.send(stopper, "after"));
                    assertThrows(ProcessNotFound.class, () -> processes.termination(stopper));
                    assertTrue(dead.isEmpty(), "nothing was queued: " + dead);
                    assertTrue(failures.isEmpty());
                }
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aFailingProcessIsReportedAndRestartedWithBackOffOnTheIosClockThenEndsFailed(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                List<DeadLetter> dead = new CopyOnWriteArrayList<>();
                List<Throwable> failures = new CopyOnWriteArrayList<>();
                List<Long> builtAt = new CopyOnWriteArrayList<>();
                RetryPolicy restart = RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialDelay(Duration.ofMillis(30))
                        .multiplier(2)
                        .build();
                try (Processes processes = quietRegistry(dead, failures)) {
                    Pid<Msg> counter = processes.spawn("counter", Mailbox.unbounded(), restart, () -> {
                        builtAt.add(Io.current().nowMs());
                        return new Counter();
                    });
                    Future<Void> ended = processes.termination(counter);
                    processes.send(counter, new Add(5));
                    processes.send(counter, new Boom());
                    processes.send(counter, new Add(7));
                    assertEquals(
                            7L,
                            processes
                                    .<Msg, Long>ask(counter, Get::new, PATIENCE)
                                    .await(),
                            "the restarted handler starts over, and handles what waited");
                    processes.send(counter, new Boom()); // the second handler fails: a third is built
                    processes.send(counter, new Boom()); // the third fails: no attempt left
                    IllegalStateException last = assertThrows(IllegalStateException.class, () -> ended.await(PATIENCE));
                    assertTrue(last.getMessage().startsWith("boom in counter#"), last.getMessage());
                    assertEquals(3, builtAt.size(), "the first handler and two restarts: " + builtAt);
                    assertTrue(builtAt.get(1) - builtAt.get(0) >= 30, "first back-off: " + builtAt);
                    assertTrue(builtAt.get(2) - builtAt.get(1) >= 60, "the back-off doubles: " + builtAt);
                    assertEquals(3, failures.size(), "each failure reported: " + failures);
                    assertEquals(3, dead.size(), "each failing message is a dead letter: " + dead);
                    assertTrue(dead.get(0).message() instanceof Boom);
                    assertTrue(
                            dead.get(0).reason().contains("handler failed"),
                            dead.get(0).reason());
                    assertThrows(ProcessNotFound.class, () -> processes.send(counter, new Add(1)));
                }
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void manySendersReachOneProcessThatHandlesOneMessageAtATime(Ios.Kind kind) {
        int senders = 4;
        int each = 2_000;
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                AtomicBoolean inside = new AtomicBoolean();
                AtomicInteger overlaps = new AtomicInteger();
                AtomicInteger handled = new AtomicInteger();
                try (Processes processes = Processes.create()) {
                    Pid<Integer> sink = processes.spawn("sink", () -> (self, m) -> {
                        if (!inside.compareAndSet(false, true)) {
                            overlaps.incrementAndGet();
                        }
                        handled.incrementAndGet();
                        inside.set(false);
                    });
                    List<Future<Void>> sending = new ArrayList<>();
                    for (int s = 0; s < senders; s++) {
                        sending.add(Io.async(() -> {
                            for (int i = 0; i < each; i++) {
                                processes.send(sink, i);
                            }
                            return null;
                        }));
                    }
                    for (Future<Void> f : sending) {
                        f.await();
                    }
                    await().atMost(PATIENCE)
                            .pollInterval(Duration.ofMillis(1))
                            .until(() -> handled.get() == senders * each);
                }
                assertEquals(0, overlaps.get(), "a process's handler ran twice at once");
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("realClockConcurrent")
    void aBoundedMailboxRefusesTrySendWhenFullAndShutdownReportsWhatDidNotEnd(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<DeadLetter> dead = new CopyOnWriteArrayList<>();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            Processes processes = quietRegistry(dead, failures);
            Channel<String> started = Channel.bounded(2);
            Channel<String> gate = Channel.bounded(1);
            Pid<Msg> busy = Io.with(opened.io())
                    .call(() -> processes.spawn(
                            "busy", Mailbox.bounded(2), RetryPolicy.builder().build(), Counter::new));
            Pid<String> stubborn = Io.with(opened.io())
                    .call(() -> processes.spawn("stubborn", () -> (self, m) -> {
                        started.trySend("stubborn");
                        Io.shield(() -> Io.sleep(Duration.ofSeconds(1))); // ignores the shutdown's cancel
                    }));
            Io.with(opened.io()).run(() -> {
                processes.send(busy, new Hold(gate, started)); // its run waits at the gate
                processes.send(stubborn, "sleep");
            });
            List<String> in = new ArrayList<>();
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(1)).until(() -> {
                String next = started.tryReceive();
                if (next != null) {
                    in.add(next);
                }
                return in.size() == 2;
            });
            assertTrue(processes.trySend(busy, new Add(1)));
            assertTrue(processes.trySend(busy, new Add(2)));
            assertFalse(processes.trySend(busy, new Add(99)), "a full bounded mailbox refuses");
            List<Pid<?>> notEnded = Io.with(opened.io()).call(() -> processes.shutdown(Duration.ofMillis(200)));
            assertEquals(List.of(stubborn), notEnded, "the shielded sleeper is reported");
            assertFalse(processes.isAlive(busy), "the busy process was cancelled at its gate");
            assertEquals(2, dead.size(), "the two queued messages became dead letters: " + dead);
            assertTrue(dead.stream().allMatch(d -> d.to().equals(busy)), dead.toString());
            assertThrows(IllegalStateException.class, () -> processes.spawn("late", () -> (self, m) -> {}));
            assertThrows(ProcessNotFound.class, () -> processes.send(busy, new Add(1)));
            assertTrue(failures.isEmpty(), "a shutdown is not a failure: " + failures);
        }
    }

    /**
     * A shutdown timeout too long for the clock waits for the processes to end. It used to
     * overflow the deadline: every process was reported as not ended without a wait (a timeout of
     * Long.MAX_VALUE ms), or the call threw ArithmeticException after the registry had closed
     * (ChronoUnit.FOREVER).
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aShutdownTimeoutBeyondTheClocksRangeWaitsForTheProcesses(Ios.Kind kind) {
        for (Duration forever : List.of(Duration.ofMillis(Long.MAX_VALUE), ChronoUnit.FOREVER.getDuration())) {
            try (Ios.Opened opened = Ios.open(kind)) {
                List<Pid<?>> notEnded = opened.call(() -> {
                    Processes processes = Processes.create();
                    Pid<Msg> a = processes.spawn("a", Counter::new);
                    processes.send(a, new Add(1));
                    assertEquals(
                            1L, processes.<Msg, Long>ask(a, Get::new, PATIENCE).await());
                    return processes.shutdown(forever);
                });
                assertEquals(List.of(), notEnded, "shutdown(" + forever + ")");
            }
        }
    }

    /**
     * A shutdown whose caller is cancelled while it waits stops waiting and throws Cancelled. It
     * used to take the caller's Cancelled for a process that ended with a failure, go on, and
     * return as if every process had ended.
     */
    @Test
    void aCancelledShutdownThrowsRatherThanReportingEveryProcessEnded() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            Processes processes =
                    Processes.builder().onFailure((pid, failure) -> {}).build();
            Channel<String> started = Channel.bounded(1);
            Pid<String> stubborn = Io.with(io)
                    .call(() -> processes.spawn("stubborn", () -> (self, m) -> {
                        started.trySend("in");
                        Io.shield(() -> Io.sleep(Duration.ofSeconds(2))); // ignores the shutdown's cancel a while
                    }));
            Io.with(io).run(() -> processes.send(stubborn, "go"));
            await().atMost(PATIENCE).until(() -> started.tryReceive() != null);
            AtomicBoolean returned = new AtomicBoolean();
            AtomicReference<Thread> callerThread = new AtomicReference<>();
            Future<Object> caller = io.spawn(() -> {
                callerThread.set(Thread.currentThread());
                processes.shutdown(Duration.ofSeconds(30));
                returned.set(true);
                return null;
            });
            await().atMost(PATIENCE) // waiting for the stubborn process to end
                    .until(() ->
                            callerThread.get() != null && callerThread.get().getState() == Thread.State.WAITING);
            assertTrue(caller.cancel());
            assertThrows(Cancelled.class, () -> caller.await(PATIENCE));
            assertFalse(returned.get(), "the cancelled shutdown returned as if the stubborn process had ended");
        }
    }

    /**
     * A restart whose behavior threw used to escape the run: the process stayed alive with a run
     * counted and none running, so later messages were never handled nor dead-lettered, and its
     * termination never came. Now it ends, failed with that, which is reported too.
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aProcessWhoseRestartThrowsEndsFailedAndLosesNothing(Ios.Kind kind) {
        IllegalStateException cannotBuild = new IllegalStateException("no second handler");
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                List<DeadLetter> dead = new CopyOnWriteArrayList<>();
                List<Throwable> failures = new CopyOnWriteArrayList<>();
                AtomicInteger builds = new AtomicInteger();
                RetryPolicy restart = RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialDelay(Duration.ZERO)
                        .build();
                try (Processes processes = quietRegistry(dead, failures)) {
                    Pid<Msg> counter = processes.spawn("counter", Mailbox.unbounded(), restart, () -> {
                        if (builds.incrementAndGet() > 1) {
                            throw cannotBuild;
                        }
                        return new Counter();
                    });
                    Future<Void> ended = processes.termination(counter);
                    processes.send(counter, new Boom());
                    assertSame(cannotBuild, assertThrows(IllegalStateException.class, () -> ended.await(PATIENCE)));
                    assertFalse(processes.isAlive(counter));
                    assertThrows(ProcessNotFound.class, () -> processes.send(counter, new Add(1)));
                    assertEquals(2, failures.size(), "the handler's failure, then the restart's: " + failures);
                    assertSame(cannotBuild, failures.get(1));
                    assertEquals(1, dead.size(), "the message its handler failed on: " + dead);
                }
                return null;
            });
        }
    }

    /** A handler that stops its process and then fails used to be rebuilt all the same (a zero back-off). */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aProcessStoppedByItsFailingHandlerIsNotRestarted(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                AtomicInteger builds = new AtomicInteger();
                RetryPolicy restart = RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialDelay(Duration.ZERO)
                        .build();
                try (Processes processes = quietRegistry(new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>())) {
                    Pid<String> quitter = processes.spawn("quitter", Mailbox.unbounded(), restart, () -> {
                        builds.incrementAndGet();
                        return (self, message) -> {
                            self.stop();
                            throw new IllegalStateException("failed as it stopped");
                        };
                    });
                    Future<Void> ended = processes.termination(quitter);
                    processes.send(quitter, "go");
                    ended.await(PATIENCE);
                    assertEquals(1, builds.get(), "no handler is built for a stopped process");
                }
                return null;
            });
        }
    }

    /** stop() called while no message is being handled (here, by the test after the handler ran) used to end nothing. */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aProcessStoppedWhileIdleEndsAtOnce(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                AtomicReference<ProcessContext<String>> context = new AtomicReference<>();
                try (Processes processes = Processes.create()) {
                    Pid<String> idle = processes.spawn("idle", () -> (self, message) -> context.set(self));
                    Future<Void> ended = processes.termination(idle);
                    processes.send(idle, "remember your context");
                    await().atMost(PATIENCE).until(() -> context.get() != null);
                    context.get().stop();
                    assertEquals(null, ended.await(PATIENCE), "stopped, not failed");
                    assertFalse(processes.isAlive(idle));
                    assertThrows(ProcessNotFound.class, () -> processes.send(idle, "late"));
                }
                return null;
            });
        }
    }

    /**
     * Every caller used to get the one termination future of a process: a caller that cancelled
     * it (a race, a timeout around its await) cancelled it for everyone, and shutdown then took
     * the process for ended.
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void cancellingOnesTerminationFutureEndsNothingAndAffectsNoOtherCaller(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                try (Processes processes = Processes.create()) {
                    Pid<Msg> counter = processes.spawn("counter", Counter::new);
                    Future<Void> mine = processes.termination(counter);
                    assertTrue(mine.cancel());
                    Future<Void> theirs = processes.termination(counter);
                    assertFalse(theirs.isDone());
                    assertTrue(processes.isAlive(counter));
                    assertEquals(List.of(), processes.shutdown(PATIENCE));
                    assertEquals(null, theirs.await(PATIENCE), "it ended when shut down");
                }
                return null;
            });
        }
    }

    /**
     * A process that ended during the shutdown with an Error (or a TimedOut of its own) used to
     * make shutdown throw that Error (an AssertionError escaping close), or report the process as
     * one that did not end.
     */
    @ParameterizedTest
    @MethodSource("realClockConcurrent")
    void aProcessThatFailsAsItIsShutDownCountsAsEnded(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                List<Throwable> failures = new CopyOnWriteArrayList<>();
                Processes processes = quietRegistry(new CopyOnWriteArrayList<>(), failures);
                Channel<String> started = Channel.bounded(2);
                Channel<String> gate = Channel.bounded(1);
                List<Throwable> endings =
                        List.of(new AssertionError("its cleanup failed"), new TimedOut("its own wait"));
                for (Throwable ending : endings) {
                    Pid<String> process =
                            processes.spawn("ends-with-" + ending.getClass().getSimpleName(), () -> (self, message) -> {
                                started.trySend("busy");
                                try {
                                    gate.receive();
                                } catch (Cancelled shutDown) {
                                    throw Rethrow.unchecked(ending);
                                }
                            });
                    processes.send(process, "work");
                }
                started.receive();
                started.receive();
                assertEquals(List.of(), processes.shutdown(PATIENCE), "both ended");
                assertEquals(Set.copyOf(endings), Set.copyOf(failures));
                return null;
            });
        }
    }

    /** Throws any unchecked throwable as it is: the handler's way to end with an Error or a TimedOut alike. */
    private static final class Rethrow {
        static RuntimeException unchecked(Throwable t) {
            if (t instanceof RuntimeException r) {
                throw r;
            }
            throw (Error) t;
        }
    }

    /**
     * A send whose run the closed Io refused used to leave the process alive with a run counted
     * and none running: every later send was taken and stranded, and shutdown could not end it.
     */
    @Test
    void aSendWhoseRunTheClosedIoRefusesEndsTheProcess() {
        List<DeadLetter> dead = new CopyOnWriteArrayList<>();
        Processes processes = quietRegistry(dead, new CopyOnWriteArrayList<>());
        FiberIo io = FiberIo.builder().workers(1).build();
        Pid<Msg> counter;
        try {
            counter = Io.with(io).call(() -> processes.spawn("counter", Counter::new));
        } finally {
            io.close();
        }
        assertThrows(IllegalStateException.class, () -> processes.send(counter, new Add(1)));
        assertFalse(processes.isAlive(counter));
        assertEquals(1, dead.size(), "the refused message is a dead letter: " + dead);
        assertThrows(ProcessNotFound.class, () -> processes.send(counter, new Add(2)));
        assertEquals(List.of(), processes.shutdown(PATIENCE));
    }

    @Test
    void badInputIsRefusedWithAClearError() {
        try (Processes processes = Processes.create()) {
            assertThrows(NullPointerException.class, () -> processes.spawn(null, Counter::new));
            assertThrows(NullPointerException.class, () -> processes.spawn("x", null));
            assertThrows(NullPointerException.class, () -> processes.spawn("x", () -> null));
            assertThrows(IllegalArgumentException.class, () -> Mailbox.bounded(0));
            Pid<Msg> pid = processes.spawn("x", Counter::new);
            assertThrows(NullPointerException.class, () -> processes.send(pid, null));
            assertThrows(NullPointerException.class, () -> processes.ask(pid, reply -> null, PATIENCE));
            assertThrows(NullPointerException.class, () -> processes.send(null, new Add(1)));
        }
    }
}
