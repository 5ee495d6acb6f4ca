package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Future.State;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.internal.Task.CancelOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A task's life: start, cancel requests and their outcomes, completion, Io inheritance. */
class TaskLifecycleTest {
    private static final Duration JOIN = Duration.ofSeconds(10);

    // ---------------------------------------------------------------- starting

    @Test
    void aTaskCancelledBeforeItStartsNeverRunsItsBodyAndIsCancelledAtOnce() {
        DeferredIo io = new DeferredIo();
        AtomicInteger bodyRuns = new AtomicInteger();
        Task<String> viaCancel = io.async(() -> {
            bodyRuns.incrementAndGet();
            return "ran";
        });
        Task<String> viaRequest = io.async(() -> {
            bodyRuns.incrementAndGet();
            return "ran";
        });

        assertTrue(viaCancel.cancel());
        assertEquals(CancelOutcome.CANCELLED_BEFORE_START, viaRequest.requestCancel());
        for (Task<String> task : List.of(viaCancel, viaRequest)) {
            assertTrue(task.isDone(), task.toString());
            assertEquals(State.CANCELLED, task.state());
        }

        assertEquals(2, io.runAll(), "the Io still runs both tasks once");
        viaCancel.run(); // and running it again is just as harmless
        assertEquals(0, bodyRuns.get());
        assertEquals(State.CANCELLED, viaCancel.state());
        assertEquals(State.CANCELLED, viaRequest.state());
        assertThrows(Cancelled.class, viaCancel::await);
        assertEquals(CancelOutcome.ALREADY_DONE, viaCancel.requestCancel());
        assertFalse(viaRequest.cancel());
    }

    @Test
    void runningATaskTwiceThrowsIllegalStateException() {
        DeferredIo io = new DeferredIo();
        AtomicInteger bodyRuns = new AtomicInteger();
        Task<Integer> task = Task.spawned(io, bodyRuns::incrementAndGet);

        task.run();
        assertThrows(IllegalStateException.class, task::run);
        assertEquals(1, bodyRuns.get());
        assertEquals(1, task.resultNow());
    }

    /** runHelped runs only a task an awaiter claimed, and only once; anything else is an Io bug. */
    @Test
    void runHelpedRefusesATaskNoAwaiterClaimedAndATaskItAlreadyRan() {
        DeferredIo io = new DeferredIo();
        AtomicInteger bodyRuns = new AtomicInteger();
        Task<Integer> awaiter = Task.spawned(io, () -> 0);
        Task<Integer> unclaimed = Task.spawned(io, bodyRuns::incrementAndGet);
        assertThrows(IllegalStateException.class, () -> unclaimed.runHelped(awaiter, Context.slot()));
        assertEquals(0, bodyRuns.get(), "a task nobody claimed does not run");

        Task<Integer> claimed = Task.spawned(io, bodyRuns::incrementAndGet);
        assertTrue(claimed.claimForHelper(awaiter));
        claimed.runHelped(awaiter, Context.slot());
        assertEquals(1, claimed.resultNow());
        assertTrue(claimed.ranInPlace());
        assertThrows(IllegalStateException.class, () -> claimed.runHelped(awaiter, Context.slot()));
        claimed.run(); // its queued entry, run by the Io later: nothing to do
        assertEquals(1, bodyRuns.get());

        // From inside a body: a task the Io started itself (not HELPED), and a helped one (HELPED,
        // running, its thread set) are both refused, and the refusal is the body's failure
        AtomicReference<Task<?>> self = new AtomicReference<>();
        Task<Object> started = Task.spawned(io, () -> {
            self.get().runHelped(awaiter, Context.slot());
            return "ran twice";
        });
        self.set(started);
        started.run();
        assertInstanceOf(IllegalStateException.class, started.exceptionNow());

        AtomicReference<Task<?>> helpedSelf = new AtomicReference<>();
        Task<Object> helped = Task.spawned(io, () -> {
            helpedSelf.get().runHelped(awaiter, Context.slot());
            return "ran twice";
        });
        helpedSelf.set(helped);
        assertTrue(helped.claimForHelper(awaiter));
        helped.runHelped(awaiter, Context.slot());
        assertInstanceOf(IllegalStateException.class, helped.exceptionNow());
    }

    /**
     * An Io's give-up of a queued entry: it cancels only a task nothing started or claimed, and
     * leaves a claimed one (running in place), a started one and a done one as they are.
     */
    @Test
    void tryCancelUnstartedCancelsOnlyATaskNothingStartedOrClaimed() {
        DeferredIo io = new DeferredIo();
        AtomicInteger bodyRuns = new AtomicInteger();
        Task<Integer> queued = Task.spawned(io, bodyRuns::incrementAndGet);
        assertTrue(queued.tryCancelUnstarted());
        assertEquals(State.CANCELLED, queued.state());
        assertFalse(queued.tryCancelUnstarted(), "once is enough");
        queued.run();
        assertEquals(0, bodyRuns.get(), "a task given up never runs");

        Task<Integer> awaiter = Task.spawned(io, () -> 0);
        AtomicReference<Boolean> giveUpInPlace = new AtomicReference<>();
        AtomicReference<Task<?>> self = new AtomicReference<>();
        Task<Integer> claimed = Task.spawned(io, () -> {
            giveUpInPlace.set(self.get().tryCancelUnstarted());
            return bodyRuns.incrementAndGet();
        });
        self.set(claimed);
        assertTrue(claimed.claimForHelper(awaiter));
        assertFalse(claimed.tryCancelUnstarted(), "claimed: the helper runs it");
        claimed.runHelped(awaiter, Context.slot());
        assertFalse(giveUpInPlace.get(), "running in place: not cancelled");
        assertEquals(1, claimed.resultNow());
        assertFalse(claimed.isCancellationEffective());

        AtomicReference<Task<?>> startedSelf = new AtomicReference<>();
        Task<Boolean> started = Task.spawned(io, () -> startedSelf.get().tryCancelUnstarted());
        startedSelf.set(started);
        started.run();
        assertFalse(started.resultNow(), "started by the Io: not cancelled");
        assertFalse(started.tryCancelUnstarted(), "done: nothing to give up");
        assertEquals(State.SUCCESS, started.state());
    }

    @Test
    void runningAFailedTaskAgainThrowsAndKeepsTheFailure() {
        IllegalArgumentException boom = new IllegalArgumentException("boom");
        Task<Integer> task = Task.spawned(new DeferredIo(), () -> {
            throw boom;
        });

        task.run();
        assertThrows(IllegalStateException.class, task::run);
        assertSame(boom, task.exceptionNow());
    }

    /**
     * Guards the STARTED bit: a task cancelled while running is not "cancelled before start", so
     * running it again is an Io bug and throws IllegalStateException.
     */
    @Test
    void runningATaskAgainAfterItWasCancelledWhileRunningThrows() {
        AtomicInteger bodyRuns = new AtomicInteger();
        Task<String> task = Task.spawned(new DeferredIo(), () -> {
            bodyRuns.incrementAndGet();
            Io.currentTask().orElseThrow().cancel();
            return "dropped";
        });
        task.run();
        assertEquals(State.CANCELLED, task.state());

        assertThrows(IllegalStateException.class, task::run);
        assertEquals(1, bodyRuns.get());
    }

    @Test
    void runningABodilessTaskThrowsAndChangesNothing() {
        Task<Integer> completed = Task.of(Future.completed(7), "completed");
        Task<Integer> pending = Task.of(Future.from(new CompletableFuture<Integer>()), "pending");

        assertThrows(IllegalStateException.class, completed::run);
        assertThrows(IllegalStateException.class, pending::run);
        assertEquals(7, completed.resultNow());
        assertEquals(State.PENDING, pending.state());
    }

    @Test
    void asyncTasksInheritTheInstalledIoWhenRunLaterOnAnotherThread() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        AtomicReference<Optional<Future<?>>> currentTask = new AtomicReference<>();
        AtomicReference<Task<Io>> child = new AtomicReference<>();
        Task<Io> task = io.async(() -> {
            ranOn.set(Thread.currentThread());
            currentTask.set(Io.currentTask());
            child.set(Task.of(Io.async(Io::current), "child")); // spawned from inside, run later too
            return Io.current();
        });
        assertFalse(task.isDone());

        Thread runner = Thread.ofPlatform().name("runner").start(io::runAll);
        assertTrue(runner.join(JOIN));

        assertNull(Context.currentIo(), "nothing is installed on the test thread");
        assertSame(runner, ranOn.get());
        assertEquals(
                State.SUCCESS,
                task.state(),
                () -> task + (task.state() == State.FAILED ? " threw " + task.exceptionNow() : ""));
        assertSame(io, task.resultNow());
        assertSame(task, currentTask.get().orElseThrow());
        assertSame(io, child.get().resultNow(), "a task spawned by a task inherits the Io too");
        assertSame(io, child.get().io());
    }

    /**
     * What an Io does when its run of a task threw instead of returning (an OutOfMemoryError while
     * the task completed): Task.tryFailAfterEscape fails the task with what escaped and wakes its
     * awaiters; the body's value that comes later, a second call, and a call on a task already done
     * change nothing.
     */
    @Test
    void aTaskWhoseRunThrewIsFailedWithWhatEscapedAndItsWaitersRunOnce() {
        DeferredIo io = new DeferredIo();
        OutOfMemoryError escaped = new OutOfMemoryError("escaped from run (test)");
        AtomicReference<Task<String>> self = new AtomicReference<>();
        AtomicReference<Boolean> failedIt = new AtomicReference<>();
        Task<String> task = io.async(() -> {
            failedIt.set(self.get().tryFailAfterEscape(escaped)); // as the running thread would after run() threw
            return "the body's value, too late";
        });
        self.set(task);
        AtomicInteger woken = new AtomicInteger();
        assertNotNull(task.addWaiter(woken::incrementAndGet));

        assertEquals(1, io.runAll());

        assertEquals(Boolean.TRUE, failedIt.get());
        assertEquals(State.FAILED, task.state());
        assertSame(escaped, task.exceptionNow());
        assertEquals(1, woken.get());
        assertFalse(task.tryFailAfterEscape(new OutOfMemoryError("a second one (test)")));
        assertSame(escaped, task.exceptionNow());
        Task<String> succeeded = Task.succeeded("v");
        assertFalse(succeeded.tryFailAfterEscape(escaped));
        assertEquals(State.SUCCESS, succeeded.state());
    }

    /**
     * What threw came before the task started (a runner out of memory naming its thread): the task
     * fails without running, its waiters wake, and a later run of it runs nothing.
     */
    @Test
    void aTaskNotStartedWhenItsRunThrewFailsWithoutRunningItsBody() {
        DeferredIo io = new DeferredIo();
        AtomicInteger bodyRuns = new AtomicInteger();
        Task<String> task = io.async(() -> {
            bodyRuns.incrementAndGet();
            return "ran";
        });
        AtomicInteger woken = new AtomicInteger();
        assertNotNull(task.addWaiter(woken::incrementAndGet));
        OutOfMemoryError escaped = new OutOfMemoryError("before the start (test)");

        assertTrue(task.tryFailAfterEscape(escaped));

        assertEquals(State.FAILED, task.state());
        assertSame(escaped, task.exceptionNow());
        assertEquals(1, woken.get());
        assertEquals(1, io.runAll(), "the Io still runs it once");
        assertEquals(0, bodyRuns.get());
        assertSame(escaped, task.exceptionNow());
    }

    /** tryFailAfterEscape from a thread that is not the one running the task changes nothing. */
    @Test
    void tryFailAfterEscapeLeavesATaskRunningOnAnotherThreadAlone() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Task<String> task = io.async(() -> {
            started.countDown();
            release.await();
            return "value";
        });
        Thread runner = io.runNextOnNewThread("runs-the-task");
        assertTrue(started.await(JOIN.toMillis(), TimeUnit.MILLISECONDS));

        assertFalse(task.tryFailAfterEscape(new OutOfMemoryError("not this thread's to report (test)")));

        assertEquals(State.PENDING, task.state());
        release.countDown();
        runner.join(JOIN.toMillis());
        assertEquals("value", task.resultNow());
    }

    /**
     * An awaiter claimed a task to run it in place and its help threw before the body started (an
     * OutOfMemoryError where the Io sets the thread's state aside): the claimed task fails with what
     * escaped and its other waiters wake, the awaiter's await throws it, and the task's queued
     * entry runs nothing later. Left claimed, the task would run nowhere, and its waiters sleep.
     */
    @Test
    void aTaskWhoseHelpThrewBeforeItsBodyFailsWithWhatEscapedAndRunsNowhereElse() {
        HelpFailsIo io = new HelpFailsIo();
        OutOfMemoryError escaped = new OutOfMemoryError("escaped from a help (test)");
        io.escape = escaped;
        AtomicInteger childRuns = new AtomicInteger();
        AtomicReference<Task<String>> child = new AtomicReference<>();
        AtomicInteger woken = new AtomicInteger();
        Task<String> parent = Task.of(
                Io.with(io)
                        .call(() -> Io.async(() -> {
                            Task<String> c = Task.of(
                                    Io.async(() -> {
                                        childRuns.incrementAndGet();
                                        return "child";
                                    }),
                                    "child");
                            child.set(c);
                            assertNotNull(c.addWaiter(woken::incrementAndGet));
                            return c.await(); // not started: this task claims it and helps (the helper throws)
                        })),
                "parent");

        assertTrue(io.runNext(), "the parent ran");

        assertEquals(1, io.helps.get(), "the await helped");
        assertEquals(State.FAILED, child.get().state());
        assertSame(escaped, child.get().exceptionNow());
        assertEquals(1, woken.get());
        assertEquals(State.FAILED, parent.state());
        assertSame(escaped, parent.exceptionNow(), "the help's escape reached the awaiter's await");
        assertEquals(1, io.runAll(), "the child's queued entry");
        assertEquals(0, childRuns.get());
    }

    /** A DeferredIo whose tasks help their awaiters, with a helper that throws {@code escape} if set. */
    static final class HelpFailsIo extends DeferredIo {
        static {
            HelpsAwaiters.register(HelpFailsIo.class, (io, task, awaiter, slot) -> {
                HelpFailsIo self = (HelpFailsIo) io;
                self.helps.incrementAndGet();
                Error escape = self.escape;
                if (escape != null) {
                    throw escape;
                }
                task.runHelped(awaiter, slot);
            });
        }

        final AtomicInteger helps = new AtomicInteger();
        volatile Error escape;
    }

    // ---------------------------------------------------------------- cancel outcomes

    @Test
    void cancellingARunningTaskIsRequestedThenAlreadyRequestedAndItsValueIsDropped() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Task<String> task = io.async(() -> {
            started.countDown();
            while (release.getCount() > 0) {
                Thread.onSpinWait(); // computing, not a suspend point: the task keeps going after cancel
            }
            return "value";
        });
        Thread runner = io.runNextOnNewThread("runner");
        assertTrue(started.await(10, TimeUnit.SECONDS));

        assertEquals(CancelOutcome.REQUESTED, task.requestCancel());
        assertEquals(CancelOutcome.ALREADY_REQUESTED, task.requestCancel());
        assertTrue(task.cancel(), "a registered request still reports true");
        assertFalse(task.isDone(), "cancellation is cooperative: the task is still running");
        assertEquals(State.PENDING, task.state());
        assertTrue(task.toString().contains("cancelling"), task.toString());

        release.countDown();
        assertTrue(runner.join(JOIN));
        assertEquals(State.CANCELLED, task.state());
        assertThrows(IllegalStateException.class, task::resultNow);
        assertThrows(Cancelled.class, task::await);
    }

    @Test
    void cancellingInsideAShieldIsDeferredUntilTheNextSuspendPointAfterIt() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        CountDownLatch shielded = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<String> shieldReturned = new AtomicReference<>();
        AtomicInteger suspendPointsPassedAfterShield = new AtomicInteger();
        Task<String> task = io.async(() -> {
            String inside = Io.shield(() -> {
                shielded.countDown();
                release.await();
                suspendOnReadiedToken(io); // a suspend point inside the shield does not throw
                return "shielded";
            });
            shieldReturned.set(inside);
            suspendOnReadiedToken(io); // the first suspend point after the shield throws
            suspendPointsPassedAfterShield.incrementAndGet();
            return "unreachable";
        });
        Thread runner = io.runNextOnNewThread("runner");
        assertTrue(shielded.await(10, TimeUnit.SECONDS));

        assertEquals(CancelOutcome.DEFERRED_BY_SHIELD, task.requestCancel());
        assertTrue(task.toString().contains("shield=1"), task.toString());
        assertEquals(CancelOutcome.ALREADY_REQUESTED, task.requestCancel());

        release.countDown();
        assertTrue(runner.join(JOIN));
        assertEquals("shielded", shieldReturned.get());
        assertEquals(0, suspendPointsPassedAfterShield.get());
        assertEquals(State.CANCELLED, task.state());
    }

    @Test
    void cancellingADoneTaskIsAlreadyDoneAndReturnsFalse() {
        DeferredIo io = new DeferredIo();
        Task<String> task = io.async(() -> "done");
        io.runAll();

        assertEquals(CancelOutcome.ALREADY_DONE, task.requestCancel());
        assertFalse(task.cancel());
        assertEquals(State.SUCCESS, task.state());
        assertEquals("done", task.resultNow());
    }

    @Test
    void aValueReturnedAfterTheTaskCancelledItselfIsDropped() {
        DeferredIo io = new DeferredIo();
        AtomicReference<CancelOutcome> outcome = new AtomicReference<>();
        Task<String> task = io.async(() -> {
            outcome.set(Task.of(Io.currentTask().orElseThrow(), "self").requestCancel());
            return "value";
        });
        io.runAll();

        assertEquals(CancelOutcome.REQUESTED, outcome.get());
        assertEquals(State.CANCELLED, task.state());
        assertThrows(IllegalStateException.class, task::resultNow);
        assertThrows(IllegalStateException.class, task::exceptionNow);
    }

    @Test
    void aNonCancelledFailureThrownAfterCancelWasRequestedIsKept() {
        DeferredIo io = new DeferredIo();
        IllegalArgumentException failure = new IllegalArgumentException("thrown while cancelling");
        Task<String> task = io.async(() -> {
            Io.currentTask().orElseThrow().cancel();
            throw failure;
        });
        io.runAll();

        assertEquals(State.FAILED, task.state());
        assertSame(failure, task.exceptionNow());
        assertSame(failure, assertThrows(IllegalArgumentException.class, task::await));
    }

    @Test
    void anExceptionThrownInsideAShieldIsNeverReplacedByCancelled() {
        DeferredIo io = new DeferredIo();
        IllegalStateException failure = new IllegalStateException("from the shield");
        Task<String> task = io.async(() -> Io.shield(() -> {
            Io.currentTask().orElseThrow().cancel();
            suspendOnReadiedToken(io);
            throw failure;
        }));
        io.runAll();

        assertEquals(State.FAILED, task.state());
        assertSame(failure, task.exceptionNow());
    }

    // ---------------------------------------------------------------- suspend points

    @Test
    void cancelWakesAParkedTaskWhoseSuspendPointThrowsCancelled() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        AtomicReference<Cancelled> thrown = new AtomicReference<>();
        Task<String> task = io.async(() -> {
            ParkToken neverReadied = ParkToken.create();
            try {
                io.suspendRaw(neverReadied);
                return "woken without cancel";
            } catch (Cancelled c) {
                thrown.set(c);
                throw c;
            }
        });
        Thread runner = io.runNextOnNewThread("parked-task");
        DeferredIo.awaitParkedOnToken(runner);

        assertEquals(CancelOutcome.REQUESTED, task.requestCancel());
        assertTrue(runner.join(JOIN), "the cancelled task was not woken");
        assertNotNull(thrown.get());
        assertEquals(State.CANCELLED, task.state());
        Cancelled reported = assertThrows(Cancelled.class, task::await);
        assertSame(thrown.get(), reported.getCause(), "await reports the Cancelled that unwound the task");
    }

    @Test
    void cancellationIsStickyEveryLaterSuspendPointThrows() {
        DeferredIo io = new DeferredIo();
        AtomicInteger cancelledSuspendPoints = new AtomicInteger();
        Task<String> task = io.async(() -> {
            Io.currentTask().orElseThrow().cancel();
            for (int i = 0; i < 3; i++) {
                try {
                    suspendOnReadiedToken(io);
                } catch (Cancelled swallowed) {
                    cancelledSuspendPoints.incrementAndGet();
                }
            }
            return "swallowed every Cancelled";
        });
        io.runAll();

        assertEquals(3, cancelledSuspendPoints.get());
        assertEquals(State.CANCELLED, task.state(), "the value after cancel is dropped");
    }

    @Test
    void suspendingOnAReadiedTokenOutsideAnyTaskReturnsAtOnce() {
        DeferredIo io = new DeferredIo();
        ParkToken park = ParkToken.create();
        io.ready(park);
        io.suspendRaw(park); // returns at once: the token was readied first

        assertTrue(park.isReady());
    }

    /** Passes one suspend point that does not wait: the token is readied before the park. */
    static void suspendOnReadiedToken(Io io) {
        ParkToken park = ParkToken.create();
        io.ready(park);
        io.suspendRaw(park);
    }
}
