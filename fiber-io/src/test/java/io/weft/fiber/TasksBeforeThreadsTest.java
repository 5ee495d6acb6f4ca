package io.weft.fiber;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The engine's "tasks before threads" (DESIGN §4): tasks reuse runner fibers without seeing each
 * other's thread state, awaiting an unstarted task runs it in place, and resumed fibers are not
 * starved by new tasks.
 */
class TasksBeforeThreadsTest {
    private static final ThreadLocal<String> LOCAL = new ThreadLocal<>();
    private static final InheritableThreadLocal<String> INHERITABLE = new InheritableThreadLocal<>();

    /** What a task saw of its thread when it started. */
    record Seen(Thread thread, String local, String inheritable, boolean interrupted, String name) {
        static Seen now() {
            Thread t = Thread.currentThread();
            return new Seen(t, LOCAL.get(), INHERITABLE.get(), t.isInterrupted(), t.getName());
        }
    }

    /** Leaves everything it can on its thread. */
    static Seen litter() {
        Seen seen = Seen.now();
        LOCAL.set("left behind");
        INHERITABLE.set("left behind");
        Thread.currentThread().setName("renamed by a task");
        Thread.currentThread().interrupt();
        return seen;
    }

    @Test
    void aTaskOnAReusedThreadSeesNothingAnEarlierTaskLeftThere() {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            Seen[] seen = io.call(() -> {
                Future<Seen> first = Io.async(TasksBeforeThreadsTest::litter);
                Io.sleep(Duration.ofMillis(1)); // lets it run on its own runner (not in place: it is not awaited)
                Future<Seen> second = Io.async(Seen::now);
                Io.sleep(Duration.ofMillis(1));
                return new Seen[] {first.await(), second.await()};
            });
            assertSame(seen[0].thread(), seen[1].thread(), "the second task reuses the first one's fiber");
            assertNull(seen[1].local());
            assertNull(seen[1].inheritable());
            assertFalse(seen[1].interrupted());
            assertEquals(seen[0].name(), seen[1].name());
        }
    }

    @Test
    void awaitingATaskThatHasNotStartedRunsItInPlaceWithItsOwnThreadState() {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            io.run(() -> {
                LOCAL.set("awaiter's");
                String name = Thread.currentThread().getName();
                AtomicReference<Future<?>> current = new AtomicReference<>();
                Future<Seen> child = Io.async(() -> {
                    current.set(Io.currentTask().orElseThrow());
                    return litter();
                });
                Seen seen = child.await(); // not started yet (one worker, and this task is running): in place

                assertSame(Thread.currentThread(), seen.thread(), "it ran on the awaiter's stack");
                assertSame(child, current.get(), "under its own task");
                assertNull(seen.local(), "it does not see the awaiter's ThreadLocal");
                assertEquals("awaiter's", LOCAL.get(), "the awaiter's ThreadLocal is back");
                assertFalse(Thread.currentThread().isInterrupted());
                assertEquals(name, Thread.currentThread().getName());
                LOCAL.remove();
            });
        }
    }

    /**
     * Every part of the per-thread state comes back after a help, whether the helped task changed
     * it (the first child) or not (the second): the awaiter's ThreadLocal maps, its interrupt
     * status (set before the await, and not seen by the helped task), name, context class loader
     * and own handler. A named helped task shows its name after the awaiter's meanwhile; an
     * unnamed one, the awaiter's. Both run with the awaiter's class loader and handler.
     */
    @Test
    void anAwaiterGetsBackAllItsThreadStateAfterATaskRanInPlace() {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            io.run(() -> {
                Thread self = Thread.currentThread();
                LOCAL.set("awaiter's");
                INHERITABLE.set("awaiter's inheritable");
                ClassLoader loader = new ClassLoader(null) {};
                self.setContextClassLoader(loader);
                Thread.UncaughtExceptionHandler handler = (t, e) -> {};
                self.setUncaughtExceptionHandler(handler);
                String name = self.getName();
                Future<Seen> child = Io.async("child", () -> {
                    Seen seen = litter();
                    self.setContextClassLoader(new ClassLoader(null) {});
                    self.setUncaughtExceptionHandler((t, e) -> {});
                    return seen;
                });
                self.interrupt(); // the awaiter's own interrupt status, set before the await
                Seen seen = child.await();
                boolean stillInterrupted = Thread.interrupted();

                assertSame(self, seen.thread(), "it ran in place");
                assertNull(seen.local());
                assertNull(seen.inheritable());
                assertFalse(seen.interrupted(), "the awaiter's interrupt status is not the helped task's");
                assertEquals(name + "/child", seen.name());
                assertAwaitersStateIsBack(stillInterrupted, loader, handler, name);

                AtomicReference<ClassLoader> loaderSeen = new AtomicReference<>();
                AtomicReference<Thread.UncaughtExceptionHandler> handlerSeen = new AtomicReference<>();
                Future<Seen> quiet = Io.async(
                        () -> { // changes nothing
                            loaderSeen.set(self.getContextClassLoader());
                            handlerSeen.set(self.getUncaughtExceptionHandler());
                            return Seen.now();
                        });
                self.interrupt();
                Seen quietSeen = quiet.await();
                stillInterrupted = Thread.interrupted();

                assertSame(self, quietSeen.thread(), "it ran in place");
                assertNull(quietSeen.local());
                assertNull(quietSeen.inheritable());
                assertFalse(quietSeen.interrupted());
                assertEquals(name, quietSeen.name(), "an unnamed task keeps the thread's name");
                assertSame(loader, loaderSeen.get(), "it runs with the awaiter's class loader");
                assertSame(handler, handlerSeen.get(), "and handler");
                assertAwaitersStateIsBack(stillInterrupted, loader, handler, name);
                LOCAL.remove();
                INHERITABLE.remove();
            });
        }
    }

    /** What anAwaiterGetsBackAllItsThreadStateAfterATaskRanInPlace's awaiter set, found again. */
    private static void assertAwaitersStateIsBack(
            boolean stillInterrupted, ClassLoader loader, Thread.UncaughtExceptionHandler handler, String name) {
        Thread self = Thread.currentThread();
        assertTrue(stillInterrupted, "the awaiter's interrupt status is back");
        assertEquals("awaiter's", LOCAL.get());
        assertEquals("awaiter's inheritable", INHERITABLE.get());
        assertSame(loader, self.getContextClassLoader());
        assertSame(handler, self.getUncaughtExceptionHandler());
        assertEquals(name, self.getName());
    }

    @Test
    void aTaskRunInPlaceThatAwaitsItsAwaiterFailsInsteadOfHanging() {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            Throwable failure = io.call(() -> {
                Future<?> me = Io.currentTask().orElseThrow();
                Future<Object> child = Io.async(me::await);
                try {
                    child.await();
                    return null;
                } catch (IllegalStateException e) {
                    return e;
                }
            });
            assertInstanceOf(IllegalStateException.class, failure);
            assertTrue(failure.getMessage().contains("in place"), failure.getMessage());
        }
    }

    /**
     * With one worker, each await below finds its task not started and runs it in place: the child
     * runs above its parent, which runs above the grandparent, on one stack. A race of the two can
     * have no first input, and raceAndJoin with one of them could never join it as the loser; both
     * parked for good before, and now fail at once. The kit's RaceContract has the inline Io's case.
     * The virtual clock starts no spare worker (on a real clock one could steal a task before its
     * await helps it), and a child not run in place fails before it races instead of hanging.
     */
    @Test
    void racingTwoTasksThatRunTheRacerInPlaceFailsInsteadOfHanging() {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            List<String> failures = Collections.synchronizedList(new ArrayList<>());
            AtomicReference<Thread> grandparentThread = new AtomicReference<>();
            AtomicInteger ranInPlace = new AtomicInteger();
            String out = io.call(() -> Io.async(() -> {
                        grandparentThread.set(Thread.currentThread());
                        Future<?> g = Io.currentTask().orElseThrow();
                        return Io.async(() -> {
                                    Future<?> p = Io.currentTask().orElseThrow();
                                    for (boolean join : new boolean[] {false, true}) {
                                        Future<Object> child = Io.async(() -> {
                                            if (Thread.currentThread() != grandparentThread.get()) {
                                                throw new AssertionError("not run in place: the race would hang");
                                            }
                                            ranInPlace.incrementAndGet();
                                            return join
                                                    ? Io.raceAndJoin(p, Future.from(new CompletableFuture<>()))
                                                    : Io.race(p, g);
                                        });
                                        failures.add(assertThrows(IllegalStateException.class, child::await)
                                                .getMessage());
                                    }
                                    return "the parent went on";
                                })
                                .await();
                    })
                    .await());
            assertEquals("the parent went on", out);
            assertEquals(2, ranInPlace.get(), "both children were meant to run in place, on the grandparent's thread");
            assertTrue(failures.get(0).contains("neither can finish before it does"), failures.get(0));
            assertTrue(failures.get(1).contains("could never be joined as the loser"), failures.get(1));
        }
    }

    /**
     * A cycle of awaits that passes through a task run in place: P runs X in place (it awaited X
     * before X started), X awaits Y, Y awaits P. P waits for X as surely as an await would, but
     * the help recorded no await link, so no one walked the cycle and all three hung, where the
     * same program without the help (X started on its own fiber) fails with "await cycle". Both
     * orders of closing it: Y's await last, and X's.
     */
    @Test
    void anAwaitCycleThroughATaskRunInPlaceFailsInsteadOfHanging() {
        assertAwaitCycleThroughAHelpFails(10, 5); // Y awaits P first; X's await closes the cycle
        assertAwaitCycleThroughAHelpFails(5, 10); // X awaits Y first; Y's await closes it
    }

    private static void assertAwaitCycleThroughAHelpFails(long xSleepsMs, long ySleepsMs) {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            AtomicReference<Future<Object>> y = new AtomicReference<>();
            AtomicReference<Thread> pThread = new AtomicReference<>();
            AtomicBoolean ranInPlace = new AtomicBoolean();
            List<Future<Object>> tasks = io.call(() -> {
                AtomicReference<Future<Object>> x = new AtomicReference<>();
                Future<Object> p = Io.async(() -> {
                    pThread.set(Thread.currentThread());
                    x.set(Io.async(() -> {
                        ranInPlace.set(Thread.currentThread() == pThread.get());
                        Io.sleep(Duration.ofMillis(xSleepsMs));
                        return y.get().await();
                    }));
                    return x.get().await(); // X has not started: it runs here, in place
                });
                y.set(Io.async(() -> {
                    Io.sleep(Duration.ofMillis(ySleepsMs));
                    return p.await();
                }));
                Io.sleep(Duration.ofSeconds(1)); // the cycle closes at 10 ms of virtual time
                return List.of(p, x.get(), y.get());
            });
            assertTrue(ranInPlace.get(), "X was meant to run in place, on P's thread");
            assertTrue(tasks.stream().allMatch(Future::isDone), () -> "the cycle hung: " + tasks);
            assertTrue(
                    tasks.stream()
                            .filter(t -> t.state() == Future.State.FAILED)
                            .map(Future::exceptionNow)
                            .anyMatch(e -> e instanceof IllegalStateException
                                    && e.getMessage().contains("await cycle")),
                    () -> "no task failed with the cycle: " + tasks);
        }
    }

    @Test
    void cancellingAnAwaiterReachesTheTaskItRunsInPlace() {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            AtomicReference<Future<?>> helped = new AtomicReference<>();
            AtomicBoolean parkedInside = new AtomicBoolean();
            Future<Object> awaiter = Io.with(io)
                    .call(() -> Io.async(() -> {
                        Future<Object> child = Io.async(() -> {
                            helped.set(Io.currentTask().orElseThrow());
                            parkedInside.set(true);
                            Io.sleep(Duration.ofDays(1));
                            return "slept";
                        });
                        return child.await();
                    }));
            await().untilTrue(parkedInside);
            assertTrue(awaiter.cancel());
            assertThrows(Cancelled.class, awaiter::await);
            assertEquals(Future.State.CANCELLED, helped.get().state(), "it unwound as cancelled");
        }
    }

    /**
     * A task run in place is part of its awaiter: a cancel of the awaiter reaches it in a blocking
     * JDK call too, as it reaches the awaiter's own (issue 13), and as it would have reached the
     * awaiter had the task started elsewhere (the awaiter, parked in await, wakes at once). It
     * used to wake only a task parked at a Weft suspend point: the awaiter stayed stuck under a
     * latch's await for good. Also: a shield of the task run in place holds the interrupt back
     * until it ends, and the interrupt is never left on the thread for the next task.
     */
    @Test
    void cancellingAnAwaiterInterruptsTheTaskItRunsInPlaceInABlockingCall() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            for (boolean shielded : new boolean[] {false, true}) {
                AtomicReference<Future<?>> helped = new AtomicReference<>();
                AtomicReference<Thread> awaiterThread = new AtomicReference<>();
                AtomicReference<Thread> helpedThread = new AtomicReference<>();
                CountDownLatch inside = new CountDownLatch(1);
                CountDownLatch shieldGate = new CountDownLatch(1);
                AtomicBoolean interruptedInShield = new AtomicBoolean();
                AtomicBoolean interrupted = new AtomicBoolean();
                Future<Object> awaiter = io.spawn(() -> {
                    awaiterThread.set(Thread.currentThread());
                    Future<Object> child = Io.async(() -> {
                        helped.set(Io.currentTask().orElseThrow());
                        helpedThread.set(Thread.currentThread());
                        if (shielded) {
                            Io.shield(() -> {
                                inside.countDown();
                                try {
                                    shieldGate.await(); // a shield: the cancel's interrupt waits for its end
                                } catch (InterruptedException e) {
                                    interruptedInShield.set(true);
                                }
                                return null;
                            });
                        } else {
                            inside.countDown();
                        }
                        try {
                            new CountDownLatch(1).await(); // blocks the thread: no Weft suspend point
                        } catch (InterruptedException e) {
                            interrupted.set(true);
                            throw e;
                        }
                        return "never";
                    });
                    return child.await();
                });
                inside.await();
                assertSame(awaiterThread.get(), helpedThread.get(), "the child ran in place, on its awaiter's thread");
                assertTrue(awaiter.cancel());
                if (shielded) {
                    shieldGate.countDown();
                }
                assertThrows(Cancelled.class, () -> awaiter.await(Duration.ofSeconds(10)));
                assertTrue(interrupted.get(), "the blocking call of the task run in place gave up");
                assertFalse(interruptedInShield.get(), "not inside the shield");
                assertEquals(Future.State.CANCELLED, helped.get().state(), "it unwound as cancelled");
                assertFalse(
                        io.call(() -> Thread.currentThread().isInterrupted()),
                        "no interrupt is left for the next task");
            }
        }
    }

    /**
     * Awaits run in place inside one another (A runs B, B runs C): a cancel of A reaches C, parked
     * two levels up, and every level unwinds as cancelled.
     */
    @Test
    void cancellingAnAwaiterReachesEveryTaskRunInPlaceAboveIt() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            AtomicReference<Future<?>> middle = new AtomicReference<>();
            AtomicReference<Future<?>> top = new AtomicReference<>();
            AtomicBoolean parkedOnTop = new AtomicBoolean();
            Future<Object> awaiter = Io.with(io)
                    .call(() -> Io.async(() -> Io.async(() -> {
                                middle.set(Io.currentTask().orElseThrow());
                                return Io.async(() -> {
                                            top.set(Io.currentTask().orElseThrow());
                                            parkedOnTop.set(true);
                                            Io.sleep(Duration.ofDays(1));
                                            return "slept";
                                        })
                                        .await();
                            })
                            .await()));
            await().untilTrue(parkedOnTop);
            assertTrue(awaiter.cancel());
            assertThrows(Cancelled.class, awaiter::await);
            assertEquals(Future.State.CANCELLED, middle.get().state(), "the middle task unwound as cancelled");
            assertEquals(Future.State.CANCELLED, top.get().state(), "the top task unwound as cancelled");
        }
    }

    /**
     * A short run of the stress profile's race of a cancel against the start of a task run in place:
     * 10,000 rounds, fewer (at least 1,000) if they take over 20 s (a loaded machine).
     */
    @Test
    void aCancelRacingTheStartOfAHelpIsSeenAtTheHelpedTasksCheckpoints() {
        FiberIoStressTest.cancelRacingTheStartOfAHelp(10_000, Duration.ofSeconds(20));
    }

    /**
     * A cancel that comes while the awaiter runs a task in place interrupts that task (part of the
     * awaiter: cancellingAnAwaiterInterruptsTheTaskItRunsInPlaceInABlockingCall), whose end takes
     * the interrupt off the thread; the awaiter gets it back once it is on top again, so a
     * blocking JDK call it makes after the await throws, as it would had the cancel come a moment
     * later.
     */
    @Test
    void aCancelHeldBackWhileATaskRanInPlaceInterruptsTheAwaitersNextBlockingCall() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            AtomicBoolean inside = new AtomicBoolean();
            AtomicBoolean cancelRequested = new AtomicBoolean();
            AtomicReference<Seen> helpedSaw = new AtomicReference<>();
            AtomicReference<Thread> awaiterThread = new AtomicReference<>();
            Future<Object> awaiter = Io.with(io)
                    .call(() -> Io.async(() -> {
                        awaiterThread.set(Thread.currentThread());
                        Future<Object> child = Io.async(() -> {
                            inside.set(true);
                            while (!cancelRequested.get()) { // no suspend point: only an interrupt could reach it
                                Thread.onSpinWait();
                            }
                            helpedSaw.set(Seen.now());
                            return "helped";
                        });
                        child.await(); // one worker, this task running: it runs in place
                        new CountDownLatch(1).await(); // never counted down: only an interrupt ends it
                        return "woke";
                    }));
            await().untilTrue(inside);
            assertTrue(awaiter.cancel());
            cancelRequested.set(true);
            assertThrows(Cancelled.class, awaiter::await, "the blocking call after the help was interrupted");
            assertSame(awaiterThread.get(), helpedSaw.get().thread(), "it ran in place");
            assertTrue(helpedSaw.get().interrupted(), "the cancel's interrupt reached the task run in place");
        }
    }

    /**
     * A short run of the stress profile's race of a cancel against the start of a help: 10,000
     * rounds, fewer (at least 1,000) if they take over 20 s (a loaded machine).
     */
    @Test
    void aCancelRacingAHelpReachesTheTaskOnTopAndIsNeverLost() {
        FiberIoStressTest.cancelRacingAHelp(10_000, Duration.ofSeconds(20));
    }

    @Test
    void aTaskKeepsItsThreadAcrossSuspensions() {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            List<Boolean> stable = io.call(() -> {
                List<Future<Boolean>> tasks = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    tasks.add(Io.async(() -> {
                        Thread before = Thread.currentThread();
                        Io.sleep(Duration.ofMillis(1));
                        return Thread.currentThread() == before;
                    }));
                }
                List<Boolean> all = new ArrayList<>();
                for (Future<Boolean> t : tasks) {
                    all.add(t.await());
                }
                return all;
            });
            assertFalse(stable.contains(false));
        }
    }

    /**
     * Weft's own lookups of the installed Io and current task leave no JDK scoped-value cache on a
     * runner fiber (an Object[32], 144 bytes per parked task): Context reads its binding from the
     * thread (InnermostBinding). A task's own ScopedValue still works, and the Io is found inside it.
     */
    @Test
    void weftsOwnLookupsLeaveNoScopedValueCacheOnARunner() throws ReflectiveOperationException {
        Method cacheOfThisThread = Thread.class.getDeclaredMethod("scopedValueCache"); // the JDK's lookup cache
        cacheOfThisThread.setAccessible(true);
        ScopedValue<String> users = ScopedValue.newInstance();
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            Object[] seen = io.call(() -> Io.async(() -> {
                        Io.async(() -> 1).await(); // a spawn and an await: both look the context up
                        Object cache = cacheOfThisThread.invoke(null);
                        Io inUsersBinding = ScopedValue.where(users, "x").call(Io::current);
                        return new Object[] {cache, inUsersBinding, Io.current(), users.isBound()};
                    })
                    .await());
            assertNull(seen[0], "the runner made a scoped-value cache for Weft's lookups");
            assertSame(io, seen[1], "the installed Io, found under a task's own binding");
            assertSame(io, seen[2]);
            assertEquals(false, seen[3], "the task's binding ended with its call");
        }
    }

    /**
     * A stream of new tasks (each spawning the next) must not keep a readied fiber from running:
     * runners take work in the worker's order, and the readied fiber's continuation is in it.
     */
    @Test
    void aResumedFiberIsNotStarvedByAStreamOfNewTasks() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            AtomicBoolean resumed = new AtomicBoolean();
            AtomicInteger links = new AtomicInteger();
            int spawnedBefore = io.call(() -> {
                AtomicReference<ParkToken> token = new AtomicReference<>();
                Future<Object> waiter = Io.async(() -> {
                    ParkToken park = ParkToken.create();
                    token.set(park);
                    Io.current().suspendRaw(park);
                    resumed.set(true);
                    return null;
                });
                while (token.get() == null) {
                    Io.sleep(Duration.ofMillis(1));
                }
                Io.async(new Chain(resumed, links)); // each link spawns the next, until the waiter ran
                Io.current().ready(token.get());
                waiter.await();
                return links.get();
            });
            assertTrue(resumed.get());
            assertTrue(spawnedBefore < 1_000, "the readied fiber waited behind " + spawnedBefore + " new tasks");
        }
    }

    /** A link of an endless chain of new tasks, which ends once {@code stop} is set. */
    record Chain(AtomicBoolean stop, AtomicInteger links) implements java.util.concurrent.Callable<Object> {
        @Override
        public Object call() {
            links.incrementAndGet();
            if (!stop.get()) {
                Io.async(this);
            }
            return null;
        }
    }

    /** A spawn racing close is refused or settled (done), never left pending. */
    @Test
    void aSpawnRacingCloseIsRefusedOrSettledNeverLost() throws InterruptedException {
        for (int round = 0; round < 20; round++) {
            FiberIo io = FiberIo.builder().workers(2).build();
            List<Future<Integer>> accepted = new ArrayList<>();
            Thread spawner = Thread.ofPlatform().start(() -> {
                try {
                    while (true) {
                        accepted.add(Io.with(io).call(() -> Io.async(() -> 1)));
                    }
                } catch (IllegalStateException closed) { // Cancelled is one too
                    // refused (closed), or the root task that spawns was cancelled by close
                }
            });
            await().until(() -> io.liveTasks() > 0 || !accepted.isEmpty());
            io.close();
            spawner.join();
            for (Future<Integer> f : accepted) {
                assertTrue(f.isDone(), "a task accepted before close is done after it: " + f);
            }
            assertNotSame(0, accepted.size());
        }
    }

    /**
     * A task run in place is done when its helper finishes it, and no longer live, though its
     * queued entry is still waiting for a worker (before: it counted as live until a worker took
     * that entry, so liveTasks() said 101 here, and 324 after a Skynet run).
     */
    @Test
    void aTaskRunInPlaceIsNoLongerLiveOnceItEnds() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            int liveInside = io.call(() -> {
                List<Future<Integer>> children = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    children.add(Io.async(() -> 1));
                }
                int sum = 0;
                for (Future<Integer> child : children) {
                    sum += child.await(); // the only worker runs this task: every child runs in place
                }
                assertEquals(100, sum);
                return io.liveTasks();
            });
            assertEquals(1, liveInside, "only the root task is live");
            await().until(() -> io.liveTasks() == 0);
        }
    }

    /**
     * Awaiting a burst of spawns in order runs each in place, and its queued entry, then at the
     * head of the worker's queue, goes with it: nothing is left for a stealer to take and look at.
     * The first spawn sits in the LIFO slot (stealers take the slot only from an empty queue), so
     * its entry stays until the worker takes it.
     */
    @Test
    void entriesOfTasksRunInPlaceInOrderDoNotStayQueued() {
        // No spare worker: one started for a stall would steal from the queue and change the depths
        try (FiberIo io =
                FiberIo.builder().workers(1).stallThreshold(Duration.ZERO).build()) {
            int[] depths = io.call(() -> {
                List<Future<Integer>> children = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    children.add(Io.async(() -> 1));
                }
                int before = io.metrics().workers().get(0).localQueueDepth();
                for (Future<Integer> child : children) {
                    child.await();
                }
                return new int[] {before, io.metrics().workers().get(0).localQueueDepth()};
            });
            assertEquals(100, depths[0], "the LIFO slot and 99 queued");
            assertEquals(1, depths[1], "only the LIFO slot's entry is left");
        }
    }

    /**
     * A task that awaits its spawns newest first (here chains of awaits, each link run in place)
     * leaves their entries queued, and its worker takes nothing while it runs. Once they fill the
     * queue, a push drops the dead ones at its head instead of growing the queue or moving them
     * to the shared queue (RunQueue's notes, "Sweeping a full ring"). Before, 3,000 chains of 30
     * in one task left about 90,000 entries, almost all of them in the shared queue.
     */
    @Test
    void entriesOfTasksRunInPlaceNewestFirstDoNotPileUp() {
        try (FiberIo io = FiberIo.builder()
                .workers(1)
                .runQueueCapacity(256)
                .stallThreshold(Duration.ZERO)
                .build()) {
            FiberMetrics after = io.call(() -> {
                for (int round = 0; round < 3_000; round++) {
                    Future<Integer> previous = Io.async(() -> 0);
                    for (int i = 1; i < 30; i++) {
                        Future<Integer> before = previous;
                        previous = Io.async(() -> before.await() + 1);
                    }
                    assertEquals(29, previous.await());
                }
                return io.metrics();
            });
            assertEquals(0, after.injectorDepth(), "no entry overflowed into the shared queue");
            await().until(() -> io.liveTasks() == 0);
            assertEquals(90_001, io.metrics().completed(), "every task, and the root, ended once");
        }
    }

    /**
     * The entries of tasks cancelled before they started are dead too: a full queue drops them,
     * and counts each one's end where it drops it (as a worker that meets one does), once.
     */
    @Test
    void tasksCancelledBeforeTheyStartAreCountedOnceWhenAFullQueueDropsThem() {
        try (FiberIo io = FiberIo.builder()
                .workers(1)
                .runQueueCapacity(256)
                .stallThreshold(Duration.ZERO)
                .build()) {
            FiberMetrics before = io.metrics();
            int injectorDepth = io.call(() -> {
                for (int i = 0; i < 3_000; i++) {
                    assertTrue(Io.async(() -> 1).cancel()); // the only worker runs this task: none started
                }
                return io.metrics().injectorDepth();
            });
            assertEquals(0, injectorDepth, "the full queue dropped the cancelled entries instead of overflowing");
            assertEachEndCountedOnce(io, before, 3_000);
        }
    }

    /**
     * A task cancelled before it starts is ended where a worker meets its queued entry: counted
     * once (live tasks back to zero, each cancel counted once), and no runner is woken or started
     * to find it done (before, each entry was handed to a runner: a poll each).
     */
    @Test
    void tasksCancelledBeforeTheyStartEndWithoutARunner() {
        try (FiberIo io =
                FiberIo.builder().workers(1).stallThreshold(Duration.ZERO).build()) {
            FiberMetrics before = io.metrics();
            int cancelled = io.call(() -> {
                List<Future<Integer>> children = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    children.add(Io.async(() -> 1));
                }
                int count = 0;
                for (Future<Integer> child : children) {
                    count += child.cancel() ? 1 : 0; // the only worker runs this task: none started
                }
                return count;
            });
            assertEquals(100, cancelled);
            FiberMetrics after = assertEachEndCountedOnce(io, before, 100);
            long polls =
                    after.workers().get(0).polls() - before.workers().get(0).polls();
            assertTrue(polls < 100, "a cancelled task was handed to a runner: " + polls + " polls");
        }
    }

    /**
     * Waits until no task of {@code io} is live, then checks that {@code cancelled} cancels and
     * every end since {@code before} were counted once; returns the metrics it read.
     */
    private static FiberMetrics assertEachEndCountedOnce(FiberIo io, FiberMetrics before, long cancelled) {
        await().until(() -> io.liveTasks() == 0);
        FiberMetrics after = io.metrics();
        assertEquals(cancelled, after.cancelled() - before.cancelled(), "each cancelled task counted once");
        // liveTasks() stops at zero: a second count of an end shows here
        assertEquals(
                after.spawned() - before.spawned(), after.completed() - before.completed(), "every end counted once");
        return after;
    }

    /**
     * Tasks still queued when close begins are cancelled before they start: their bodies never run.
     * (No spare workers here: one would run the tasks queued behind the spinner.)
     */
    @Test
    void closeCancelsQueuedTasksBeforeTheyStart() throws InterruptedException {
        FiberIo io = FiberIo.builder().workers(1).stallThreshold(Duration.ZERO).build();
        AtomicBoolean release = new AtomicBoolean();
        AtomicInteger bodiesRun = new AtomicInteger();
        List<Future<Integer>> queued = queueBehindASpinner(io, 10, bodiesRun::incrementAndGet, release);
        Thread closer = Thread.ofPlatform().start(io::close);
        await().until(() -> io.toString().contains(", closed")); // close has begun (a spawn would now be refused)
        release.set(true);
        closer.join();
        assertEquals(0, bodiesRun.get());
        for (Future<Integer> f : queued) {
            assertEquals(Future.State.CANCELLED, f.state());
        }
        assertEquals(0, io.liveTasks());
    }

    /**
     * A task run in place under a shielded awaiter is cancelled by close (the awaiter's deferred
     * cancel does not reach it; close must), so close neither waits out its timeout nor reports it.
     */
    @Test
    void closeCancelsATaskRunInPlaceUnderAShieldedAwaiter() {
        FiberIo io = FiberIo.builder().workers(1).build();
        AtomicReference<Future<String>> child = new AtomicReference<>();
        AtomicBoolean childStarted = new AtomicBoolean();
        Future<String> awaiter = Io.with(io)
                .call(() -> Io.async(() -> Io.shield(() -> {
                    Future<String> c = Io.async(() -> {
                        childStarted.set(true);
                        Io.sleep(Duration.ofHours(1));
                        return "slept";
                    });
                    child.set(c);
                    return c.await(); // not started: runs here, in place, inside the shield
                })));
        await().untilTrue(childStarted);
        List<io.weft.RawTask> unfinished = io.shutdown(Duration.ofSeconds(20));
        assertEquals(List.of(), unfinished);
        assertEquals(Future.State.CANCELLED, child.get().state());
        assertTrue(awaiter.isDone());
    }

    /**
     * Close on a worker that stays stuck (a task that never reaches a suspend point): the tasks
     * queued behind it are cancelled when the workers are stopped, so their awaiters wake.
     */
    @Test
    void tasksQueuedOnAStuckWorkerAreCancelledWhenCloseGivesUp() {
        FiberIo io = FiberIo.builder().workers(1).stallThreshold(Duration.ZERO).build();
        AtomicBoolean release = new AtomicBoolean();
        try {
            List<Future<Integer>> queued = queueBehindASpinner(io, 1, () -> 1, release);
            io.shutdown(Duration.ofMillis(200));
            assertEquals(Future.State.CANCELLED, queued.get(0).state(), "settled when the workers were stopped");
        } finally {
            release.set(true);
        }
    }

    /**
     * A runner runs the jobs that follow each other in place, at most 4,096 of them, then ends and
     * a new runner takes the next: a chain longer than two runners' lives runs every link once,
     * in order (none lost or run twice where a runner ends), on exactly three threads, each
     * running an unbroken stretch of the chain.
     */
    @Test
    void aChainLongerThanARunnersLifeRunsEveryLinkOnceInOrderOnConsecutiveRunners() throws Exception {
        int perRunner = 4_096; // Runner.JOBS_PER_RUNNER
        int links = 2 * perRunner + 3;
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Integer> done = new CompletableFuture<>();
        // No stall watch: a spare worker it started would take a link from the slot on another thread
        try (FiberIo io =
                FiberIo.builder().workers(1).stallThreshold(Duration.ZERO).build()) {
            io.spawn(() -> link(links, order, threads, done));
            String lost = "a link lost where a runner ends never completes";
            assertEquals(links, done.get(10, TimeUnit.SECONDS), lost);
            // Every end counted, the retiring runners' last jobs included
            await().until(() -> io.liveTasks() == 0);
        }
        List<Integer> expected = new ArrayList<>();
        for (int left = links; left >= 1; left--) {
            expected.add(left);
        }
        assertEquals(expected, order);
        List<Thread> runners = new ArrayList<>(new LinkedHashSet<>(threads));
        assertEquals(3, runners.size(), "a runner ends after its 4,096th job; the next goes on");
        for (int i = 0; i < links; i++) {
            Thread expectedRunner = runners.get(Math.min(i / perRunner, 2));
            assertSame(expectedRunner, threads.get(i), "link " + i + " ran in place");
        }
    }

    /** One link: records itself, then spawns the next or completes {@code done}. */
    private static Void link(int left, List<Integer> order, List<Thread> threads, CompletableFuture<Integer> done) {
        order.add(left);
        threads.add(Thread.currentThread());
        if (left == 1) {
            done.complete(order.size());
        } else {
            Io.async(() -> link(left - 1, order, threads, done));
        }
        return null;
    }

    /** Io.yield lets the other tasks of a one-worker FiberIo run (a checkpoint alone would spin forever). */
    @Test
    void yieldLetsAnotherTaskRunOnTheOnlyWorker() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            int laps = io.call(() -> {
                AtomicBoolean flag = new AtomicBoolean();
                Future<Integer> spinner = Io.async(() -> {
                    int n = 0;
                    while (!flag.get()) {
                        Io.yield();
                        n++;
                    }
                    return n;
                });
                Future<Boolean> setter = Io.async(() -> {
                    flag.set(true);
                    return true;
                });
                Io.yield(); // the root steps aside too: both children get the worker
                return spinner.await() + (setter.await() ? 0 : -1_000);
            });
            assertTrue(laps >= 0, "the spinner saw the flag after " + laps + " yields");
        }
    }

    /**
     * A yield lets external submissions in: the only worker, whose only task yields in a loop,
     * looks at the Injector at the pick after each yield, not only every injector interval (up to
     * 255 tasks once the interval has adapted to short tasks). So a task spawned from a plain
     * thread runs within two yields of its spawn: the yield under way may have looked already, the
     * next one finds it. Each round counts the yields from after the spawn returned until the task
     * ran, which is never more than from the push itself.
     */
    @Test
    void aTaskSpawnedFromAPlainThreadRunsWithinTwoYieldsOfAYieldLoopingTask() {
        try (FiberIo io = // no spare worker: the only worker takes the probe
                FiberIo.builder().workers(1).stallThreshold(Duration.ZERO).build()) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger yields = new AtomicInteger();
            Future<Integer> yielder = io.spawn(() -> {
                while (!stop.get()) {
                    Io.yield();
                    yields.incrementAndGet();
                }
                return yields.get();
            });
            await().until(() -> yields.get() > 10_000); // past several maintenances: the interval has adapted
            int worst = 0;
            for (int round = 0; round < 50; round++) {
                Future<Integer> probe = io.spawn(yields::get);
                int afterSpawn = yields.get();
                worst = Math.max(worst, probe.await() - afterSpawn);
            }
            stop.set(true);
            yielder.await();
            assertTrue(worst <= 2, "a task from a plain thread waited " + worst + " yields of the only task");
        }
    }

    /**
     * On a one-worker {@code io}, starts a task that spawns {@code count} tasks running {@code body}
     * (queued behind it) and then spins until {@code release}: it holds the only worker, and having
     * no suspend point it ignores a cancel. Returns the queued tasks once it spins.
     */
    private static List<Future<Integer>> queueBehindASpinner(
            FiberIo io, int count, java.util.concurrent.Callable<Integer> body, AtomicBoolean release) {
        AtomicBoolean spinning = new AtomicBoolean();
        List<Future<Integer>> queued = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.run(() -> Io.async(() -> {
            for (int i = 0; i < count; i++) {
                queued.add(Io.async(body));
            }
            spinning.set(true);
            while (!release.get()) {
                Thread.onSpinWait();
            }
            return null;
        }));
        await().untilTrue(spinning);
        return queued;
    }
}
