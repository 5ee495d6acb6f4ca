package io.weft.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §3.3: cancel is a request that returns at once and takes effect at the task's next
 * suspend point; it wakes a parked task, is sticky, and a task cancelled before it starts never
 * runs its body.
 */
public abstract class CancellationContract extends IoContract {

    /** For the test class of one Io implementation. */
    protected CancellationContract() {}

    @Test
    void cancelOnADoneFutureReturnsFalseAndChangesNothing() {
        Future<String> f = inIo(() -> Io.async(() -> "done"));
        awaitDone(f);
        assertFalse(f.cancel());
        assertEquals(Future.State.SUCCESS, f.state());
        assertEquals("done", f.resultNow());
    }

    @Test
    void cancelWakesAParkedTaskAtItsSuspendPointAndItsFinallyRuns() {
        List<String> log = new CopyOnWriteArrayList<>();
        Started<Void> started = startElsewhere(() -> {
            try {
                log.add("parking");
                return parkUntilCancelled();
            } finally {
                log.add("finally");
            }
        });
        started.awaitParked();
        assertTrue(started.future().cancel());
        awaitDone(started.future());
        assertEquals(List.of("parking", "finally"), log);
        assertEquals(Future.State.CANCELLED, started.future().state());
        assertThrows(Cancelled.class, () -> inIo(() -> started.future().await()));
    }

    @Test
    void theParkedTaskSeesCancelledThrownFromItsSuspendPoint() {
        Throwable seen = thrownAtTheSuspendPointOfACancelledTask();
        assertTrue(seen instanceof Cancelled, "suspendRaw threw " + seen);
    }

    @Test
    void theCancelledASuspendPointThrowsHasNoStackTraceButSaysWhatWasCancelled() {
        assumeFalse(Boolean.getBoolean("io.weft.cancelledStackTraces"), "this JVM asked for cancellation stack traces");
        Throwable seen = thrownAtTheSuspendPointOfACancelledTask();
        assertTrue(seen instanceof Cancelled, "suspendRaw threw " + seen);
        assertEquals(0, seen.getStackTrace().length, "control flow: no stack walk per cancelled task");
        assertTrue(seen.getMessage().endsWith("was cancelled"), seen.getMessage());
    }

    /** Parks a task elsewhere, cancels it, and returns what its suspend point threw (null if nothing). */
    private Throwable thrownAtTheSuspendPointOfACancelledTask() {
        AtomicReference<Throwable> seen = new AtomicReference<>();
        Started<Void> started = startElsewhere(() -> {
            try {
                return parkUntilCancelled();
            } catch (Throwable t) {
                seen.set(t);
                throw t;
            }
        });
        started.awaitParked();
        started.future().cancel();
        awaitDone(started.future());
        return seen.get();
    }

    @Test
    void aComputingTaskKeepsComputingUntilItsNextSuspendPoint() throws InterruptedException {
        CountDownLatch computing = new CountDownLatch(1);
        AtomicBoolean cancelRequested = new AtomicBoolean();
        List<String> log = new CopyOnWriteArrayList<>();
        Started<String> started = startElsewhere(() -> {
            computing.countDown();
            while (!cancelRequested.get()) {
                Thread.onSpinWait(); // computing: no suspend point
            }
            log.add("computed after the cancel request");
            Io.sleep(Duration.ofMillis(1)); // the next suspend point
            log.add("after the suspend point");
            return "finished";
        });
        computing.await();
        assertTrue(started.future().cancel());
        assertFalse(started.future().isDone(), "cancel returned before the task reached a suspend point");
        cancelRequested.set(true);
        awaitDone(started.future());
        assertEquals(List.of("computed after the cancel request"), log);
        assertEquals(Future.State.CANCELLED, started.future().state());
    }

    @Test
    void cancellationIsStickyEverySuspendPointThrows() {
        List<String> log = new CopyOnWriteArrayList<>();
        Started<String> started = startElsewhere(() -> {
            try {
                parkUntilCancelled();
            } catch (Cancelled first) {
                log.add("first");
            }
            try {
                Io.sleep(Duration.ofMillis(1));
                log.add("slept");
            } catch (Cancelled second) {
                log.add("second");
            }
            try {
                Future.from(new CompletableFuture<String>()).await();
                log.add("awaited");
            } catch (Cancelled third) {
                log.add("third");
            }
            return "swallowed every cancel";
        });
        started.awaitParked();
        started.future().cancel();
        awaitDone(started.future());
        assertEquals(List.of("first", "second", "third"), log);
        assertEquals(Future.State.CANCELLED, started.future().state(), "a value returned after cancel is dropped");
    }

    @Test
    void aTaskCancelledBeforeItStartsNeverRunsItsBody() throws Exception {
        assumeFalse(runsTasksInline(), "an inline Io starts every task before async returns");
        int rounds = 100;
        AtomicIntegerArray runs = new AtomicIntegerArray(rounds);
        boolean[] cancelledBeforeStart = inIo(() -> Io.async(() -> {
                    boolean[] beforeStart = new boolean[rounds];
                    for (int i = 0; i < rounds; i++) {
                        int round = i;
                        AtomicBoolean looked = new AtomicBoolean();
                        // Once started, the body cannot end before `looked` is set: a child that is done
                        // right after cancel() returned was cancelled before it started.
                        Future<Integer> child = Io.async(() -> {
                            runs.incrementAndGet(round);
                            while (!looked.get()) {
                                Thread.onSpinWait();
                            }
                            return round;
                        });
                        assertTrue(
                                child.cancel(),
                                "round " + round + ": a child that cannot have ended refused the cancel");
                        beforeStart[round] = child.isDone();
                        looked.set(true);
                        assertThrows(Cancelled.class, child::await, "round " + round);
                        assertEquals(Future.State.CANCELLED, child.state(), "round " + round);
                    }
                    return beforeStart;
                })
                .await());
        closeIo(); // nothing runs after close: a body that has not run by now never will
        int unstarted = 0;
        for (int round = 0; round < rounds; round++) {
            if (cancelledBeforeStart[round]) {
                unstarted++;
                assertEquals(0, runs.get(round), "round " + round + ": the body of a task cancelled before start ran");
            } else {
                assertEquals(1, runs.get(round), "round " + round + ": a task that started ran its body once");
            }
        }
        // With no suspend point between spawn and cancel, the spawner's own worker cannot start the child.
        assertTrue(unstarted > 0, "no cancel landed before its task started in " + rounds + " rounds");
    }

    @Test
    void cancelReturnsAtOnceWithoutWaitingForTheTaskToUnwind() {
        AtomicReference<ParkToken> release = new AtomicReference<>();
        Started<String> started = startElsewhere(() -> Io.shield(() -> {
            ParkToken park = ParkToken.create();
            release.set(park);
            Io.current().suspendRaw(park);
            return "released";
        }));
        started.awaitParked();
        assertTrue(started.future().cancel());
        assertTrue(started.future().cancel(), "a second request while pending also reports true");
        assertEquals(Future.State.PENDING, started.future().state(), "still unwinding");
        io.ready(release.get());
        awaitDone(started.future());
        assertEquals(Future.State.CANCELLED, started.future().state());
        assertFalse(started.future().cancel(), "done now");
    }

    @Test
    void aFailureThrownWhileUnwindingIsKeptNotReplaced() {
        IllegalStateException cleanupFailure = new IllegalStateException("cleanup failed");
        Started<Void> started = startElsewhere(() -> {
            try {
                return parkUntilCancelled();
            } catch (Cancelled c) {
                throw cleanupFailure; // e.g. a rollback that failed while unwinding
            }
        });
        started.awaitParked();
        started.future().cancel();
        awaitDone(started.future());
        assertEquals(Future.State.FAILED, started.future().state());
        assertSame(cleanupFailure, started.future().exceptionNow());
    }

    @Test
    void cancellingAnAwaiterLeavesTheAwaitedFutureAlone() {
        CompletableFuture<String> source = new CompletableFuture<>();
        Future<String> awaited = Future.from(source);
        Started<String> awaiter = startElsewhere(awaited::await);
        awaiter.awaitParked();
        assertEquals(1, waiterCount(awaited), "the parked awaiter is registered");
        awaiter.future().cancel();
        awaitDone(awaiter.future());
        assertEquals(Future.State.CANCELLED, awaiter.future().state());
        assertEquals(Future.State.PENDING, awaited.state());
        assertFalse(source.isDone());
        assertEquals(0, waiterCount(awaited), "the cancelled awaiter deregistered");
    }

    @Test
    void cancellingAPendingFutureFromAStageCompletesItAtOnce() {
        CompletableFuture<String> source = new CompletableFuture<>();
        Future<String> f = Future.from(source);
        assertTrue(f.cancel());
        assertEquals(Future.State.CANCELLED, f.state());
        assertFalse(f.cancel());
        assertFalse(source.isDone(), "the stage is left alone");
        source.complete("late");
        assertEquals(Future.State.CANCELLED, f.state(), "a late completion does not undo the cancel");
    }

    @Test
    void cancelFromManyThreadsAtOnceIsOneCancellation() throws InterruptedException {
        AtomicInteger cancelledAtThePark = new AtomicInteger();
        AtomicInteger finallyRuns = new AtomicInteger();
        CompletableFuture<Void> everyCancelReturned = new CompletableFuture<>();
        Started<Void> started = startElsewhere(() -> {
            try {
                return parkUntilCancelled();
            } catch (Cancelled c) {
                cancelledAtThePark.incrementAndGet();
                throw c;
            } finally {
                finallyRuns.incrementAndGet();
                // still unwinding, so pending, until every canceller has its answer
                Io.shield(() -> {
                    Future.from(everyCancelReturned).await();
                });
            }
        });
        started.awaitParked();
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger trues = new AtomicInteger();
        Thread[] cancellers = new Thread[4];
        for (int i = 0; i < cancellers.length; i++) {
            cancellers[i] = helper("canceller-" + i, () -> {
                go.await();
                if (started.future().cancel()) {
                    trues.incrementAndGet();
                }
            });
        }
        go.countDown();
        for (Thread canceller : cancellers) {
            canceller.join(PATIENCE.toMillis());
        }
        // Future.cancel: true while the task is not done, whichever request registered first.
        assertEquals(cancellers.length, trues.get(), "a cancel of a pending task returned false");
        everyCancelReturned.complete(null);
        awaitDone(started.future());
        assertEquals(1, cancelledAtThePark.get(), "one Cancelled woke the parked task");
        assertEquals(1, finallyRuns.get());
        assertEquals(Future.State.CANCELLED, started.future().state());
        assertFalse(started.future().cancel(), "done now");
    }

    /**
     * A cancel racing the park (issue 15): the task says it is about to park, then parks; the
     * cancel lands anywhere from before the park's check to inside the park (a random spin after
     * seeing the signal), in many rounds. Every cancel must wake the task: a lost one leaves a
     * round that never ends.
     */
    @Test
    void aCancelLandingAnywhereAroundTheParkAlwaysEndsTheTask() throws InterruptedException {
        int rounds = 1_000;
        AtomicInteger started = new AtomicInteger();
        AtomicReference<Future<?>> parking = new AtomicReference<>();
        AtomicInteger endedCancelled = new AtomicInteger();
        Thread runner = helper("runner", () -> {
            for (int i = 0; i < rounds; i++) {
                Future<Void> task = inIo(() -> Io.async(() -> {
                    Io current = Io.current();
                    ParkToken token = ParkToken.create(); // nobody readies it: only the cancel ends the park
                    parking.set(Io.currentTask().orElseThrow());
                    started.incrementAndGet();
                    current.suspendRaw(token);
                    throw new AssertionError("the park returned normally");
                }));
                try {
                    task.await();
                } catch (Cancelled expected) {
                    // checked through the state
                }
                if (task.state() == Future.State.CANCELLED) {
                    endedCancelled.incrementAndGet();
                }
            }
        });
        SplittableRandom random = new SplittableRandom(15);
        for (int round = 0; round < rounds; round++) {
            int count = round + 1;
            spinUntil(() -> started.get() == count, "round " + round + " to start (the previous one never ended?)");
            int spins = random.nextInt(round % 4 == 0 ? 2_048 : 48);
            for (int i = 0; i < spins; i++) {
                Thread.onSpinWait();
            }
            assertTrue(parking.get().cancel(), "round " + round + ": a parked task refused the cancel");
        }
        runner.join(PATIENCE.toMillis());
        assertFalse(runner.isAlive(), "the last round never ended: its cancel was lost");
        assertEquals(rounds, endedCancelled.get());
    }

    /** Spins until {@code condition} holds (yielding now and then), or fails after {@link #PATIENCE}. */
    private static void spinUntil(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        for (int spins = 1; !condition.getAsBoolean(); spins++) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("gave up waiting for " + what);
            }
            if (spins % 1_024 == 0) {
                Thread.yield(); // two cores: let the task's thread run
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * Cancel racing completion (issue 15), 10^4 rounds: on a scheduling Io with several workers
     * another worker may be running the task while the cancel lands. Once {@code cancel()}
     * returned true the task never succeeds; once it returned false the task was already done.
     */
    @Test
    void aCancelThatReturnedTrueNeverLetsTheTaskSucceed() {
        int rounds = 10_000;
        int[] outcomes = inIo(() -> Io.async(() -> {
                    int[] counts = new int[2]; // [cancelled, succeeded]
                    for (int i = 0; i < rounds; i++) {
                        int value = i;
                        Future<Integer> task = Io.async(() -> {
                            if ((value & 1) == 0) {
                                Thread.yield(); // not a suspend point: the task goes on computing
                            }
                            return value;
                        });
                        // FiberIo: the canceller takes the spawner's LIFO slot and pushes the task to its
                        // queue, where another worker may start it while the cancel is on its way.
                        Future<Boolean> canceller = Io.async(task::cancel);
                        boolean requested = canceller.await();
                        try {
                            int result = task.await();
                            if (requested) {
                                throw new AssertionError(
                                        "round " + i + ": cancel() returned true, yet the task succeeded");
                            }
                            assertEquals(value, result, "round " + i);
                            counts[1]++;
                        } catch (Cancelled c) {
                            if (!requested) {
                                throw new AssertionError("round " + i + ": cancelled, yet cancel() returned false", c);
                            }
                            counts[0]++;
                        }
                    }
                    return counts;
                })
                .await());
        assertEquals(rounds, outcomes[0] + outcomes[1]);
    }

    // ---------------------------------------------------------------- checkpoint, yield, launch (DESIGN §2)

    @Test
    void checkpointThrowsOnlyOnceCancellationIsInEffectAndNotUnderAShield() {
        Io.checkpoint(); // a plain thread: nothing to check
        Future<String> task = inIo(() -> Io.async(() -> {
            Io.checkpoint(); // not cancelled: returns
            Io.currentTask().orElseThrow().cancel();
            Io.shield(Io::checkpoint); // deferred inside a shield
            Io.checkpoint(); // in effect now
            return "went on past a cancelled checkpoint";
        }));
        awaitDone(task);
        assertEquals(Future.State.CANCELLED, task.state());
    }

    @Test
    void yieldIsASuspendPointThatComesBackAndThrowsOnceCancelled() {
        AtomicInteger laps = new AtomicInteger();
        AtomicBoolean threw = new AtomicBoolean();
        Future<Void> task = inIo(() -> Io.async(() -> {
            for (int i = 0; i < 3; i++) {
                Io.yield(); // not cancelled: steps aside and returns
                laps.incrementAndGet();
            }
            Io.currentTask().orElseThrow().cancel();
            try {
                Io.yield();
            } catch (Cancelled expected) {
                threw.set(true);
                throw expected;
            }
            return null;
        }));
        awaitDone(task);
        assertEquals(3, laps.get());
        assertTrue(threw.get(), "the yield after cancel() threw Cancelled");
        assertEquals(Future.State.CANCELLED, task.state());
    }

    @Test
    void aLaunchedTaskRunsDetachedAndItsFailureReachesTheUncaughtExceptionHandler() throws Exception {
        IllegalStateException failure = new IllegalStateException("a detached failure");
        CompletableFuture<Throwable> reported = new CompletableFuture<>();
        CompletableFuture<String> ran = new CompletableFuture<>();
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.UncaughtExceptionHandler capture = (thread, e) -> {
            if (e == failure) {
                reported.complete(e);
            } else if (previous != null) {
                previous.uncaughtException(thread, e);
            }
        };
        Thread.UncaughtExceptionHandler callerOwn = Thread.currentThread().getUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler(capture); // where a fiber's failure goes
        Thread.currentThread().setUncaughtExceptionHandler(capture); // where an inline Io's goes
        try {
            runInIo(() -> {
                Io.launch(() -> ran.complete("ran"));
                Io.launch(() -> {
                    throw failure;
                });
                Io.launch(() -> {
                    Io.currentTask().orElseThrow().cancel();
                    Io.checkpoint(); // its own cancellation: not a failure to report
                });
            });
            assertEquals("ran", ran.get(10, java.util.concurrent.TimeUnit.SECONDS));
            assertSame(failure, reported.get(10, java.util.concurrent.TimeUnit.SECONDS));
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous);
            Thread.currentThread()
                    .setUncaughtExceptionHandler(
                            callerOwn == Thread.currentThread().getThreadGroup() ? null : callerOwn);
        }
        assertThrows(NullPointerException.class, () -> Io.launch(null));
    }

    @Test
    void aLaunchedTasksFailureGoesToItsIosOwnHandlerWhenItHasOne() throws Exception {
        assumeTrue(subject().withHandler() != null, "no configurable handler");
        IllegalStateException failure = new IllegalStateException("a detached failure");
        CompletableFuture<Thread> reported = new CompletableFuture<>();
        List<Throwable> elsewhere = new CopyOnWriteArrayList<>();
        Io withHandler = subject().withHandler().apply((thread, e) -> {
            if (e == failure) {
                reported.complete(thread);
            }
            throw new IllegalStateException("a throwing handler is ignored");
        });
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.UncaughtExceptionHandler callerOwn = Thread.currentThread().getUncaughtExceptionHandler();
        Thread.UncaughtExceptionHandler wrong = (thread, e) -> elsewhere.add(e);
        Thread.setDefaultUncaughtExceptionHandler(wrong);
        Thread.currentThread().setUncaughtExceptionHandler(wrong);
        try {
            CompletableFuture<String> after = new CompletableFuture<>();
            Io.with(withHandler).run(() -> {
                Io.launch(() -> {
                    throw failure;
                });
                Io.launch(() -> after.complete("the Io runs on after its handler threw"));
            });
            assertNotNull(reported.get(10, java.util.concurrent.TimeUnit.SECONDS));
            assertEquals(
                    "the Io runs on after its handler threw", after.get(10, java.util.concurrent.TimeUnit.SECONDS));
            assertEquals(List.of(), elsewhere, "the thread's handlers saw it too");
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous);
            Thread.currentThread()
                    .setUncaughtExceptionHandler(
                            callerOwn == Thread.currentThread().getThreadGroup() ? null : callerOwn);
            if (withHandler instanceof AutoCloseable closeable) {
                closeable.close();
            }
        }
    }
    /**
     * Only a launched task's own cancellation goes unreported. A Cancelled from elsewhere (an
     * await of a future someone cancelled, a race lost to one) is a failure nobody else can see,
     * and it used to be dropped as if the task had been cancelled.
     */
    @Test
    void aLaunchedTaskEndedByACancelledThatIsNotItsOwnIsReported() throws Exception {
        assumeTrue(subject().withHandler() != null, "no configurable handler");
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        Io withHandler = subject().withHandler().apply((thread, e) -> reported.add(e));
        Future<String> cancelledElsewhere = Future.from(new CompletableFuture<>());
        cancelledElsewhere.cancel();
        Cancelled notItsOwn = new Cancelled("thrown by the body, not this task's cancellation");
        try {
            Io.with(withHandler).run(() -> {
                Io.launch(() -> cancelledElsewhere.await());
                Io.launch(() -> {
                    throw notItsOwn;
                });
            });
            eventually().until(() -> reported.size() >= 2);
            assertTrue(reported.contains(notItsOwn), reported::toString);
            assertTrue(reported.stream().allMatch(e -> e instanceof Cancelled), reported::toString);
        } finally {
            if (withHandler instanceof AutoCloseable closeable) {
                closeable.close();
            }
        }
    }
    // ---------------------------------------------------------------- cancel reaches blocking JDK calls (issue 13)

    @Test
    void aCancelInterruptsATaskBlockedInAJdkCallAndTheTaskEndsCancelled() {
        LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
        AtomicReference<Throwable> seen = new AtomicReference<>();
        Started<String> started = startElsewhere(() -> {
            try {
                return queue.take(); // a JDK call that honours interrupts, not a Weft suspend point
            } catch (InterruptedException e) {
                seen.set(e);
                throw e; // escaping after a cancel: the task ends cancelled, not failed
            }
        });
        started.awaitParked();
        assertTrue(started.future().cancel());
        awaitDone(started.future());
        assertInstanceOf(InterruptedException.class, seen.get());
        assertEquals(Future.State.CANCELLED, started.future().state());
    }

    /**
     * Io.blocking's promise: a cancelled caller throws Cancelled and its task ends cancelled.
     * Inline, the body's interrupt came out of Io.blocking wrapped in a CompletionException (a
     * checked exception, as the Callable rule wraps one) and the task ended failed.
     */
    @Test
    void aCancelledCallerOfIoBlockingThrowsCancelledAndItsTaskEndsCancelled() {
        LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
        assertACancelledBlockingCallerThrowsCancelled(queue::take);
    }

    /** A body that swallows its interrupt and returns: the cancelled caller still throws Cancelled, the value is dropped. */
    @Test
    void aCancelledCallerOfIoBlockingDropsTheValueOfABodyThatSwallowedTheInterrupt() {
        LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
        assertACancelledBlockingCallerThrowsCancelled(() -> {
            try {
                return queue.take();
            } catch (InterruptedException swallowed) {
                return "the body's value after the interrupt";
            }
        });
    }

    /**
     * Starts a task that calls {@code Io.blocking(body)}, a body that blocks until interrupted,
     * cancels the task once it waits, and checks that Io.blocking threw Cancelled and the task
     * ended cancelled.
     */
    private void assertACancelledBlockingCallerThrowsCancelled(java.util.concurrent.Callable<String> body) {
        AtomicReference<Object> seen = new AtomicReference<>();
        Started<String> started = startElsewhere(() -> {
            try {
                String value = Io.blocking(body);
                seen.set(value);
                return value;
            } catch (RuntimeException e) {
                seen.set(e);
                throw e;
            }
        });
        started.awaitParked();
        assertTrue(started.future().cancel());
        awaitDone(started.future());
        assertInstanceOf(Cancelled.class, seen.get());
        assertEquals(Future.State.CANCELLED, started.future().state());
    }

    /** A caller whose cancellation is in effect starts no blocking body: Io.blocking is a suspend point. */
    @Test
    void aCancelledCallerStartsNoBlockingBody() {
        AtomicBoolean ran = new AtomicBoolean();
        AtomicReference<Throwable> seen = new AtomicReference<>();
        Future<Object> task = inIo(() -> Io.async(() -> {
            Io.currentTask().orElseThrow().cancel();
            try {
                return Io.blocking(() -> ran.getAndSet(true));
            } catch (RuntimeException e) {
                seen.set(e);
                throw e;
            }
        }));
        awaitDone(task);
        assertFalse(ran.get(), "the body ran");
        assertInstanceOf(Cancelled.class, seen.get());
        assertEquals(Future.State.CANCELLED, task.state());
    }

    @Test
    void afterTheInterruptTheNextSuspendPointThrowsCancelled() {
        LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicBoolean cancelledAfter = new AtomicBoolean();
        Started<String> started = startElsewhere(() -> {
            try {
                queue.take();
            } catch (InterruptedException swallowed) {
                interrupted.set(true); // a body may swallow the interrupt...
            }
            try {
                Io.sleep(Duration.ofMillis(1)); // ...but the cancellation stays in effect
                return "went on";
            } catch (Cancelled expected) {
                cancelledAfter.set(true);
                throw expected;
            }
        });
        started.awaitParked();
        started.future().cancel();
        awaitDone(started.future());
        assertTrue(interrupted.get());
        assertTrue(cancelledAfter.get());
        assertEquals(Future.State.CANCELLED, started.future().state());
    }

    @Test
    void shieldedCodeIsNeverInterruptedAndTheInterruptComesBackAfterTheShield() {
        LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
        AtomicReference<String> inShield = new AtomicReference<>();
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        Started<String> started = startElsewhere(() -> {
            inShield.set(Io.shield(() -> queue.take())); // a cancel now does not interrupt this
            try {
                queue.take(); // out of the shield, the cancellation is in effect: interrupted at once
                return "not interrupted";
            } catch (InterruptedException expected) {
                interruptedAfter.set(true);
                throw expected;
            }
        });
        started.awaitParked();
        started.future().cancel();
        assertFalse(started.future().isDone(), "the shielded take was interrupted");
        queue.add("delivered");
        awaitDone(started.future());
        assertEquals("delivered", inShield.get());
        assertTrue(interruptedAfter.get());
        assertEquals(Future.State.CANCELLED, started.future().state());
    }

    @Test
    void anInterruptDeliveredBeforeAShieldDoesNotReachInsideIt() {
        AtomicReference<String> inShield = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean();
        Future<String> task = inIo(() -> Io.async(() -> {
            Io.currentTask().orElseThrow().cancel(); // running, not parked: its thread is interrupted
            inShield.set(Io.shield(() -> {
                Thread.sleep(2); // would throw at once with the flag set
                return "slept in the shield";
            }));
            flagAfter.set(Thread.currentThread().isInterrupted()); // back once the shield ends
            return "ended";
        }));
        awaitDone(task);
        assertEquals("slept in the shield", inShield.get());
        assertTrue(flagAfter.get());
        assertEquals(Future.State.CANCELLED, task.state());
    }

    /**
     * A task a cancelled task starts does not get the cancel's interrupt, even where it runs on
     * the same thread above it (an inline Io), and the cancelled task has it again after.
     */
    @Test
    void aTaskStartedByACancelledTaskDoesNotGetItsInterrupt() {
        AtomicReference<Boolean> childFlag = new AtomicReference<>();
        AtomicReference<Boolean> flagAfter = new AtomicReference<>();
        Future<String> task = inIo(() -> Io.async(() -> {
            Io.currentTask().orElseThrow().cancel(); // running, not parked: its thread is interrupted
            Io.async(() -> {
                childFlag.set(Thread.currentThread().isInterrupted());
                return "child";
            });
            flagAfter.set(Thread.currentThread().isInterrupted());
            return "ended";
        }));
        awaitDone(task);
        eventually().until(() -> childFlag.get() != null); // inline: at once; else when it runs
        assertEquals(Boolean.FALSE, childFlag.get());
        assertEquals(Boolean.TRUE, flagAfter.get());
        assertEquals(Future.State.CANCELLED, task.state());
    }

    @Test
    void theInterruptOfACancelStaysWithTheCancelledTask() {
        LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
        AtomicReference<Future<?>> child = new AtomicReference<>();
        AtomicReference<Thread> childThread = new AtomicReference<>();
        AtomicReference<Boolean> parentFlag = new AtomicReference<>();
        AtomicReference<Boolean> laterTaskFlag = new AtomicReference<>();
        Started<String> parent = startElsewhere(() -> {
            Future<String> blocked = Io.async(() -> {
                childThread.set(Thread.currentThread());
                child.set(Io.currentTask().orElseThrow());
                try {
                    return queue.take();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // the JDK idiom: restore the flag...
                    return "restored the flag";
                }
            });
            try {
                blocked.await();
            } catch (Cancelled expected) {
                // the child's value after the cancel is dropped
            }
            parentFlag.set(Thread.currentThread().isInterrupted()); // ...which must not reach its parent
            laterTaskFlag.set(
                    Io.async(() -> Thread.currentThread().isInterrupted()).await()); // nor a later task
            return "parent done";
        });
        eventually().until(() -> child.get() != null);
        awaitParked(childThread.get());
        child.get().cancel();
        awaitDone(parent.future());
        assertEquals("parent done", parent.future().resultNow());
        assertEquals(Future.State.CANCELLED, child.get().state());
        assertEquals(Boolean.FALSE, parentFlag.get());
        assertEquals(Boolean.FALSE, laterTaskFlag.get());
    }
}
