package io.weft.fiber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §3.7 (issue 12, part 1): {@code Io.with(fiberIo)} from a plain thread runs its body as a
 * root task of the FiberIo, so a virtual clock counts it and one worker makes the run
 * deterministic. Before, the body ran on the calling thread, racing the workers: a race of a
 * 50 ms and a 100 ms sleeper returned the slower one in 29 of 50 runs on two workers.
 */
class IoWithRootTaskTest {

    private static String sleepThen(long ms, String value) {
        Io.sleep(Duration.ofMillis(ms));
        return value;
    }

    @Test
    void aRaceOfSleepersUnderIoWithIsExactOnAVirtualClock() {
        try (FiberIo io = FiberIo.builder().workers(2).virtualClock().build()) {
            for (int run = 0; run < 50; run++) {
                long start = io.nowMs();
                String winner = Io.with(io)
                        .call(() ->
                                Io.race(Io.async(() -> sleepThen(100, "slow")), Io.async(() -> sleepThen(50, "fast"))));
                assertEquals("fast", winner, "run " + run);
                assertEquals(50, io.nowMs() - start, "virtual time moved only to the winner's deadline, run " + run);
            }
        }
    }

    /** A 50-task program with sleeps, awaits and a race, printed as a trace. */
    private static List<String> program() {
        List<String> trace = new ArrayList<>();
        List<Future<Integer>> tasks = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            int n = i;
            tasks.add(Io.async(() -> {
                Io.sleep(Duration.ofMillis((n * 7) % 13));
                synchronized (trace) {
                    trace.add("t" + n + "@" + Io.current().nowMs());
                }
                if (n % 5 == 0) {
                    Io.race(Io.async(() -> sleepThen(3, "a")), Io.async(() -> sleepThen(2, "b")));
                }
                return n;
            }));
        }
        int sum = 0;
        for (Future<Integer> task : tasks) {
            sum += task.await();
        }
        trace.add("sum=" + sum + "@" + Io.current().nowMs());
        return trace;
    }

    @Test
    void oneWorkerAndAVirtualClockGiveTheSameTraceEveryRunUnderIoWith() {
        Set<List<String>> traces = new HashSet<>();
        for (int run = 0; run < 5; run++) {
            try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
                traces.add(Io.with(io).call(IoWithRootTaskTest::program));
            }
        }
        assertEquals(1, traces.size(), "different traces: " + traces);
    }

    @Test
    void theBodyRunsOnAFiberAndItsFailureComesBackAsItself() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            Thread caller = Thread.currentThread();
            assertNotSame(caller, Io.with(io).call(Thread::currentThread));
            IllegalArgumentException thrown = new IllegalArgumentException("from the body");
            assertEquals(
                    thrown,
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> Io.with(io).run(() -> {
                                throw thrown;
                            })));
        }
    }

    /** An interrupted caller stops waiting; the root task is cancelled and has unwound by then. */
    @Test
    void interruptingTheCallerCancelsTheRootTaskAndWaitsForItToUnwind() throws InterruptedException {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            AtomicReference<Future<?>> root = new AtomicReference<>();
            CompletableFuture<Void> unwound = new CompletableFuture<>();
            AtomicReference<Throwable> seen = new AtomicReference<>();
            Thread caller = Thread.ofPlatform().start(() -> {
                try {
                    Io.with(io).run(() -> {
                        root.set(Io.currentTask().orElseThrow());
                        try {
                            Io.sleep(Duration.ofHours(1));
                        } finally {
                            unwound.complete(null);
                        }
                    });
                } catch (Throwable t) {
                    seen.set(t);
                    if (!unwound.isDone()) {
                        seen.set(new AssertionError("returned before the root task unwound", t));
                    }
                }
            });
            org.awaitility.Awaitility.await()
                    .until(() -> root.get() != null && caller.getState() == Thread.State.WAITING);
            caller.interrupt();
            caller.join();
            assertTrue(seen.get() instanceof Cancelled, String.valueOf(seen.get()));
            assertEquals(Future.State.CANCELLED, root.get().state());
        }
    }

    @Test
    void aClosedFiberIoCannotBeEntered() {
        FiberIo io = FiberIo.builder().workers(1).build();
        io.close();
        IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> Io.with(io).call(() -> 1));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }

    /**
     * Issue 12, part 2: a fiber blocked on a contended monitor is readied by the JDK's unblocker
     * thread, outside the workers. Between the monitor's release and that submission every worker
     * may be idle; the virtual clock must not jump then (before: the blocked fiber entered the
     * monitor at the holder's next deadline, 1,000 ms late).
     */
    @Test
    void theVirtualClockWaitsForAFiberThatAContendedMonitorReleases() {
        try (FiberIo io = FiberIo.builder().workers(2).virtualClock().build()) {
            for (int round = 0; round < Integer.getInteger("monitorRounds", 100); round++) {
                Object lock = new Object();
                long[] times = Io.with(io).call(() -> {
                    java.util.concurrent.atomic.AtomicLong acquired = new java.util.concurrent.atomic.AtomicLong(-1);
                    Future<Void> holder = Io.async(() -> {
                        synchronized (lock) {
                            acquired.set(Io.current().nowMs());
                            Io.sleep(Duration.ofMillis(10)); // parks holding the monitor
                        }
                        Io.sleep(Duration.ofMillis(1_000)); // the next deadline after the release
                        return null;
                    });
                    while (acquired.get() < 0) {
                        Io.sleep(Duration.ofMillis(1));
                    }
                    long entered;
                    synchronized (lock) { // blocks (unmounted) until the holder leaves the monitor
                        entered = Io.current().nowMs();
                    }
                    holder.await();
                    return new long[] {acquired.get(), entered};
                });
                assertEquals(times[0] + 10, times[1], "round " + round + ": entered the monitor when it was released");
            }
        }
    }

    /** FiberIo.spawn hands a task over from a plain thread without waiting for it. */
    @Test
    void spawnFromAPlainThreadReturnsAtOnceAndRunsOnAFiber() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            CompletableFuture<Void> gate = new CompletableFuture<>();
            Future<Boolean> task = io.spawn(() -> {
                Future.from(gate).await();
                return Thread.currentThread().isVirtual() && Io.current() == io;
            });
            assertEquals(Future.State.PENDING, task.state(), "returned before the task could finish");
            gate.complete(null);
            assertTrue(task.await());
        }
        FiberIo closed = FiberIo.builder().workers(1).build();
        closed.close();
        assertThrows(IllegalStateException.class, () -> closed.spawn(() -> 1));
    }
}
