package io.weft.fiber;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.RawTask;
import io.weft.TimedOut;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** FiberIo beyond the conformance kit: building, root tasks, fibers, shutdown, the JVM flag. */
class FiberIoTest {

    @Test
    void createUsesOneWorkerPerProcessor() {
        try (FiberIo io = FiberIo.create()) {
            assertEquals(Runtime.getRuntime().availableProcessors(), io.workers());
            assertFalse(io.hasVirtualClock());
        }
    }

    /**
     * On one worker, the tasks a task spawns in a row start in the order it spawned them (the
     * first from the LIFO slot, the rest from the queue), so a race whose winner was spawned first
     * is decided before the loser starts, and the loser is cancelled without ever running. With
     * the newest spawn in the slot, the loser would start first and "c, b, a" would be the order.
     */
    @Test
    void spawnsRunInTheOrderMadeSoARacesSecondSpawnedLoserNeverStarts() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            List<String> order = new CopyOnWriteArrayList<>();
            List<String> loserRan = new CopyOnWriteArrayList<>();
            int winner = Io.with(io)
                    .call(() -> Io.async(() -> {
                                List<Future<Boolean>> spawned = new ArrayList<>();
                                for (String name : List.of("a", "b", "c")) {
                                    spawned.add(Io.async(() -> order.add(name)));
                                }
                                Io.yield(); // to the back of the queue: the worker runs them in its own order
                                for (Future<Boolean> f : spawned) {
                                    f.await(); // (an await would run an unstarted one in place, in await order)
                                }
                                Future<Integer> first = Io.async(() -> 1);
                                Future<Integer> second = Io.async(() -> {
                                    loserRan.add("started");
                                    Io.sleep(Duration.ofHours(1));
                                    return 2;
                                });
                                int won = Io.race(first, second);
                                assertEquals(Future.State.CANCELLED, second.state());
                                return won;
                            })
                            .await());
            assertEquals(List.of("a", "b", "c"), order);
            assertEquals(1, winner);
            assertEquals(List.of(), loserRan, "the loser was cancelled before it started");
        }
    }

    /**
     * A caller whose interrupt flag is set when it closes still gets a clean close: the wait for
     * the workers to end is not cut short (before, every join threw at once and a worker a few
     * microseconds from its end was reported stuck), and the flag is still set afterwards.
     */
    @Test
    void anInterruptedCallerClosesCleanlyAndKeepsItsInterrupt() {
        for (int round = 0; round < 20; round++) {
            FiberIo io = FiberIo.builder().workers(4).build();
            assertEquals(1, Io.with(io).call(() -> Io.async(() -> 1).await()));
            Thread.currentThread().interrupt();
            try {
                io.close();
            } finally {
                assertTrue(Thread.interrupted(), "round " + round + ": the caller's interrupt is kept");
            }
            assertTrue(io.isClosed());
        }
    }

    /**
     * A caller of Io.with that stops waiting (here, an interrupted plain thread) cancels its
     * root task and waits for it to unwind. A root that failed as it unwound (its cleanup threw)
     * lost that failure: nobody else holds the root. It now rides on the caller's Cancelled.
     */
    @Test
    void aRootsFailureWhileItUnwindsReachesTheCallerThatStoppedWaiting() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            IllegalStateException cleanup = new IllegalStateException("the root's cleanup failed (test)");
            CountDownLatch sleeping = new CountDownLatch(1);
            java.util.concurrent.atomic.AtomicReference<Throwable> caught =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Thread caller = Thread.ofPlatform().daemon().start(() -> {
                try {
                    Io.with(io).call(() -> {
                        try {
                            sleeping.countDown();
                            Io.sleep(Duration.ofHours(1));
                            return null;
                        } catch (io.weft.Cancelled c) {
                            throw cleanup;
                        }
                    });
                } catch (Throwable t) {
                    caught.set(t);
                }
            });
            sleeping.await();
            await().until(() -> caller.getState() == Thread.State.WAITING);
            caller.interrupt();
            caller.join(30_000);
            Throwable t = caught.get();
            assertTrue(
                    t == cleanup || List.of(t.getSuppressed()).contains(cleanup),
                    () -> "the root's failure is lost: " + t);
        }
    }

    /** One worker per processor, at most the 64 a FiberIo has: on a larger machine create() used to throw. */
    @Test
    void theDefaultWorkerCountFollowsTheProcessorsUpTo64() {
        assertEquals(1, FiberIo.defaultWorkers(1));
        assertEquals(2, FiberIo.defaultWorkers(2));
        assertEquals(64, FiberIo.defaultWorkers(64));
        assertEquals(64, FiberIo.defaultWorkers(128));
        assertThrows(IllegalArgumentException.class, () -> FiberIo.builder().workers(128));
    }

    @Test
    void theBuilderRejectsBadOptionsClearly() {
        assertThrows(IllegalArgumentException.class, () -> FiberIo.builder().workers(0));
        assertThrows(IllegalArgumentException.class, () -> FiberIo.builder().workers(65));
        assertThrows(IllegalArgumentException.class, () -> FiberIo.builder().runQueueCapacity(3));
        assertThrows(IllegalArgumentException.class, () -> FiberIo.builder().closeTimeout(Duration.ZERO));
        NullPointerException npe =
                assertThrows(NullPointerException.class, () -> FiberIo.builder().closeTimeout(null));
        assertEquals("timeout", npe.getMessage());
    }

    /**
     * A close timeout too long for a count of nanoseconds ("forever") threw ArithmeticException
     * from inside close, after every task was cancelled and before the workers were stopped: the
     * FiberIo could never be closed. It saturates now.
     */
    @Test
    void aCloseTimeoutTooLongForNanosecondsStillCloses() {
        FiberIo io = FiberIo.builder()
                .workers(1)
                .closeTimeout(Duration.ofMillis(Long.MAX_VALUE))
                .build();
        Future<Object> parked = io.spawn(() -> {
            Io.sleep(Duration.ofHours(1));
            return null;
        });
        io.close();
        assertTrue(io.isClosed());
        assertEquals(Future.State.CANCELLED, parked.state());
        FiberIo other = FiberIo.builder().workers(1).build();
        assertEquals(List.of(), other.shutdown(Duration.ofSeconds(Long.MAX_VALUE)));
        assertTrue(other.isClosed());
    }

    /**
     * From one of its own tasks, call runs root as a child on this FiberIo, also where the task
     * installed another Io that Weft does not know (it used to spawn on that one).
     */
    @Test
    void callFromItsOwnTaskSpawnsOnItselfEvenUnderAnotherInstalledIo() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            Io wrapper = new Io() {
                @Override
                public void spawnRaw(RawTask task) {
                    io.spawnRaw(task);
                }

                @Override
                public void suspendRaw(ParkToken park) {
                    io.suspendRaw(park);
                }

                @Override
                public void ready(ParkToken park) {
                    io.ready(park);
                }

                @Override
                public long poll(long deadlineMs) {
                    return io.poll(deadlineMs);
                }

                @Override
                public long nowMs() {
                    return io.nowMs();
                }

                @Override
                public io.weft.TimerHandle armTimer(long deadlineMs, ParkToken park) {
                    return io.armTimer(deadlineMs, park);
                }
            };
            Io seen = io.call(() -> Io.with(wrapper).call(() -> io.call(Io::current)));
            assertSame(io, seen);
        }
    }

    @Test
    void callRunsTheRootTaskOnAFiberAndReturnsItsValue() {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            List<Boolean> virtual = io.call(() -> {
                List<Future<Boolean>> children = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    children.add(Io.async(() -> Thread.currentThread().isVirtual() && Io.current() == io));
                }
                List<Boolean> seen = new ArrayList<>();
                seen.add(Thread.currentThread().isVirtual());
                for (Future<Boolean> child : children) {
                    seen.add(child.await());
                }
                return seen;
            });
            assertEquals(101, virtual.size());
            assertTrue(
                    virtual.stream().allMatch(Boolean::booleanValue),
                    "every task ran on a fiber with the Io installed");
        }
    }

    @Test
    void threadLocalsAndScopedValuesWorkInsideFibers() {
        ScopedValue<String> request = ScopedValue.newInstance();
        ThreadLocal<String> local = new ThreadLocal<>();
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            String seen = io.call(() -> ScopedValue.where(request, "req-1").call(() -> {
                local.set("mine");
                Io.sleep(Duration.ofMillis(5)); // unmount, maybe move to another carrier
                return request.get() + "/" + local.get();
            }));
            assertEquals("req-1/mine", seen);
        }
    }

    @Test
    void virtualClockSleepsTakeNoTime() {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            long wallStart = System.nanoTime();
            long at = io.call(() -> {
                Io.sleep(Duration.ofHours(1));
                return io.nowMs();
            });
            assertEquals(Duration.ofHours(1).toMillis(), at);
            assertTrue(
                    System.nanoTime() - wallStart < TimeUnit.SECONDS.toNanos(5),
                    "an hour of virtual sleep took real time");
        }
    }

    @Test
    void spawningAfterCloseFailsClearly() {
        FiberIo io = FiberIo.builder().workers(1).build();
        io.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> io.call(() -> "late"));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertTrue(io.isClosed());
    }

    @Test
    void closeCancelsLiveTasksAndLetsTheirFinallyRun() throws InterruptedException {
        List<String> log = new CopyOnWriteArrayList<>();
        FiberIo io = FiberIo.builder().workers(2).build();
        List<Future<String>> tasks = new ArrayList<>();
        java.util.concurrent.CountDownLatch sleeping = new java.util.concurrent.CountDownLatch(10);
        for (int i = 0; i < 10; i++) {
            int n = i;
            tasks.add(Io.with(io)
                    .call(() -> Io.async(() -> {
                        try {
                            sleeping.countDown();
                            Io.sleep(Duration.ofHours(1));
                            return "slept";
                        } finally {
                            log.add("finally " + n);
                        }
                    })));
        }
        assertTrue(sleeping.await(20, TimeUnit.SECONDS));
        io.close();
        assertEquals(10, log.size());
        for (Future<String> task : tasks) {
            assertEquals(Future.State.CANCELLED, task.state());
        }
        assertEquals(0, io.liveTasks());
    }

    @Test
    void aChildLeftInTheLifoSlotIsStolenByAnIdleWorker() {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            String result = io.call(() -> {
                java.util.concurrent.atomic.AtomicBoolean childRan = new java.util.concurrent.atomic.AtomicBoolean();
                Future<String> child = Io.async(() -> {
                    childRan.set(true);
                    return "child";
                });
                // The parent computes without suspending until the child has run: only another
                // worker, taking the child out of this worker's LIFO slot, can make that happen.
                while (!childRan.get()) {
                    Thread.onSpinWait();
                }
                return child.await();
            });
            assertEquals("child", result);
        }
    }

    @Test
    void aSpawnRacingCloseIsRefusedOrCancelledNeverLost() throws InterruptedException {
        for (int round = 0; round < 50; round++) {
            FiberIo io = FiberIo.builder().workers(2).build();
            List<Future<String>> spawned = new CopyOnWriteArrayList<>();
            java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
            Thread spawner = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 200; i++) {
                    try {
                        spawned.add(Io.with(io)
                                .call(() -> Io.async(() -> {
                                    Io.sleep(Duration.ofHours(1));
                                    return "slept";
                                })));
                    } catch (IllegalStateException closed) {
                        refused.incrementAndGet();
                    }
                }
            });
            io.close(); // throws if a task that got in was never cancelled
            spawner.join();
            for (Future<String> f : spawned) {
                assertTrue(f.isDone(), "round " + round + ": " + f + " is not done after close; " + io);
                assertEquals(Future.State.CANCELLED, f.state(), "round " + round);
            }
            assertEquals(200, spawned.size() + refused.get());
        }
    }

    @Test
    void closeIsIdempotent() {
        FiberIo io = FiberIo.builder().workers(1).build();
        io.close();
        io.close();
        assertTrue(io.isClosed());
    }

    /**
     * Starts a task of {@code io} that parks inside a shield, so a close's cancel cannot end it,
     * and returns it once it is parked.
     */
    private static Future<String> startStubbornTask(FiberIo io) {
        CompletableFuture<Void> parked = new CompletableFuture<>();
        Future<String> stubborn = Io.with(io)
                .call(() -> Io.async(() -> Io.shield(() -> {
                    ParkToken park = ParkToken.create();
                    parked.complete(null);
                    Io.current().suspendRaw(park); // shielded: close's cancel cannot end it
                    return "never";
                })));
        parked.join();
        return stubborn;
    }

    @Test
    void closeReportsTasksThatDoNotUnwindInTime() {
        FiberIo io = FiberIo.builder()
                .workers(1)
                .closeTimeout(Duration.ofMillis(200))
                .build();
        Future<String> stubborn = startStubbornTask(io);
        IllegalStateException e = assertThrows(IllegalStateException.class, io::close);
        assertTrue(
                e.getMessage().contains("1 task(s)")
                        && e.getMessage().contains(stubborn.toString().substring(0, 5)),
                e.getMessage());
        assertTrue(io.isClosed());
    }

    @Test
    void shutdownReturnsTheUnfinishedTasks() {
        FiberIo io = FiberIo.builder().workers(1).build();
        Future<String> stubborn = startStubbornTask(io);
        List<RawTask> unfinished = io.shutdown(Duration.ofMillis(100));
        assertEquals(1, unfinished.size());
        assertSame(stubborn, unfinished.get(0));
    }

    /**
     * Two shutdowns at once (a shutdown hook and a try-with-resources): the one that waited for the
     * other used to return an empty list, as if every task had finished, while the stubborn one
     * still ran. Both now name it; so does a later call while it still runs.
     */
    @Test
    void aShutdownThatWaitedForAnotherReturnsTheTasksStillUnfinished() throws Exception {
        FiberIo io = FiberIo.builder().workers(1).build();
        Future<String> stubborn = startStubbornTask(io);
        // Two platform threads released together (the common pool may have one thread: it would
        // run them one after the other, and the second would never wait for the first)
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<List<RawTask>>> answers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            CompletableFuture<List<RawTask>> answer = new CompletableFuture<>();
            answers.add(answer);
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    go.await();
                    answer.complete(io.shutdown(Duration.ofMillis(300)));
                } catch (Throwable e) {
                    answer.completeExceptionally(e);
                }
            });
        }
        go.countDown();
        for (CompletableFuture<List<RawTask>> answer : answers) {
            assertEquals(List.of(stubborn), answer.get(10, TimeUnit.SECONDS));
        }
        assertEquals(List.of(stubborn), io.shutdown(Duration.ZERO), "a later call, while it still runs");
        io.close(); // closed before: nothing to report again
    }

    /**
     * A plain thread's timed await of a task that outlived its FiberIo's close waits on that
     * FiberIo's clock, whose timers only the workers fired: after the close it never timed out,
     * whether it began before the close or after. The JDK's delay scheduler fires them now.
     */
    @Test
    void aTimedAwaitOfATaskThatOutlivedTheCloseStillTimesOut() throws Exception {
        FiberIo io = FiberIo.builder()
                .workers(1)
                .closeTimeout(Duration.ofMillis(100))
                .build();
        Future<String> stubborn = startStubbornTask(io);
        CompletableFuture<Throwable> before = new CompletableFuture<>();
        Thread.ofPlatform()
                .daemon()
                .start(
                        () -> { // its own thread: not the common pool's only one
                            try {
                                stubborn.await(Duration.ofMillis(400)); // armed before the close, due after it
                                before.complete(null);
                            } catch (Throwable e) {
                                before.complete(e);
                            }
                        });
        assertThrows(IllegalStateException.class, io::close, "the stubborn task is reported");
        assertInstanceOf(TimedOut.class, before.get(10, TimeUnit.SECONDS));
        assertTimeoutPreemptively(
                Duration.ofSeconds(10),
                () -> assertThrows(TimedOut.class, () -> stubborn.await(Duration.ofMillis(20))),
                "armed after the close");
    }

    /**
     * A shutdown used to lock the FiberIo's own monitor: a task holding it (user code may lock any
     * object) kept the close from starting, so from cancelling that task, and the close waited for
     * good, with no timeout. The close now cancels it (its blocking wait is interrupted) and returns.
     */
    @Test
    void aTaskHoldingTheFiberIosMonitorDoesNotKeepItFromClosing() throws Exception {
        FiberIo io = FiberIo.builder().workers(1).build();
        CountDownLatch holding = new CountDownLatch(1);
        Future<Object> holder = io.spawn(() -> {
            synchronized (io) {
                holding.countDown();
                new CountDownLatch(1).await(); // until its cancel interrupts it
            }
            return null;
        });
        holding.await();
        assertTimeoutPreemptively(Duration.ofSeconds(10), io::close);
        assertEquals(Future.State.CANCELLED, holder.state());
    }

    @Test
    void closingAClosedFiberIoFromAnywhereDoesNothing() {
        FiberIo io = FiberIo.builder().workers(1).build();
        FiberIo other = FiberIo.builder().workers(1).build();
        io.close();
        String seen = other.call(() -> {
            io.close(); // from a fiber of another FiberIo: closed already, nothing to do
            return "fine";
        });
        assertEquals("fine", seen);
        other.close();
    }

    @Test
    @SuppressWarnings("try") // closes the resource explicitly, from inside: that is the point
    void closingFromOneOfItsOwnTasksFails() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            Throwable e = io.call(() -> {
                try {
                    io.close();
                    return null;
                } catch (IllegalStateException expected) {
                    return expected;
                }
            });
            assertTrue(e.getMessage().contains("own tasks"), String.valueOf(e));
        }
    }

    @Test
    void noWorkerThreadIsLeftBehindAfterClose() {
        FiberIo io = FiberIo.builder().workers(3).name("leak-check").build();
        io.call(() -> Io.async(() -> 1).await());
        assertEquals(3, workerThreads("leak-check").size());
        io.close();
        assertEquals(Set.of(), workerThreads("leak-check"));
    }

    static Set<String> workerThreads(String name) {
        Set<String> names = ConcurrentHashMap.newKeySet();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(name + "-worker-") && t.isAlive()) {
                names.add(t.getName());
            }
        }
        return names;
    }

    @Test
    void withoutTheAddOpensFlagBuildingFailsWithAMessageNamingIt() throws IOException, InterruptedException {
        ChildJvm.Result child = ChildJvm.run(false, 60, NoFlagProbe.class);
        assertTrue(child.output().contains("--add-opens java.base/java.lang=ALL-UNNAMED"), child.output());
        assertEquals(3, child.exitCode(), child.output());
    }

    /** Run in a JVM without the flag: building a FiberIo must fail naming it. */
    static final class NoFlagProbe {
        public static void main(String[] args) {
            try (FiberIo io = FiberIo.create()) {
                System.out.println("built without the flag: " + io);
                System.exit(0);
            } catch (IllegalStateException e) {
                System.out.println(e.getMessage());
                System.exit(3);
            }
        }
    }
}
