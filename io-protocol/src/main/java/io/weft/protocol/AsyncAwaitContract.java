package io.weft.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.TimedOut;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §3.1–3.2: {@code async} runs its body as a task; {@code await} returns its value or
 * reports its failure by Weft's rules, for any number of awaiters, from tasks and plain threads.
 */
public abstract class AsyncAwaitContract extends IoContract {

    /** For the test class of one Io implementation. */
    protected AsyncAwaitContract() {}

    @Test
    void awaitReturnsTheBodysValue() {
        assertEquals(42, (int) inIo(() -> Io.async(() -> 6 * 7).await()));
    }

    @Test
    void asyncRunsTheBodyExactlyOnce() {
        AtomicInteger runs = new AtomicInteger();
        Future<Integer> f = inIo(() -> Io.async(runs::incrementAndGet));
        assertEquals(1, (int) inIo(f::await));
        assertEquals(1, (int) inIo(f::await), "awaiting again does not run the body again");
        assertEquals(1, runs.get());
    }

    @Test
    void awaitRethrowsAnUncheckedFailureAsTheSameInstance() {
        IllegalStateException boom = new IllegalStateException("boom");
        Future<Object> f = inIo(() -> Io.async(() -> {
            throw boom;
        }));
        assertSame(boom, assertThrows(IllegalStateException.class, () -> inIo(f::await)));
        assertSame(boom, f.exceptionNow());
        assertEquals(Future.State.FAILED, f.state());
    }

    @Test
    void awaitRethrowsAnErrorAsTheSameInstance() {
        StackOverflowError error = new StackOverflowError("deep");
        Future<Object> f = inIo(() -> Io.async(() -> {
            throw error;
        }));
        assertSame(error, assertThrows(StackOverflowError.class, () -> inIo(f::await)));
    }

    @Test
    void awaitWrapsACheckedFailureInCompletionException() {
        IOException io = new IOException("disk");
        Future<Object> f = inIo(() -> Io.async(() -> {
            throw io;
        }));
        CompletionException e = assertThrows(CompletionException.class, () -> inIo(f::await));
        assertSame(io, e.getCause());
        assertSame(io, f.exceptionNow(), "exceptionNow reports the failure as thrown");
    }

    @Test
    void aBodyThrowingCancelledEndsCancelled() {
        Future<Object> f = inIo(() -> Io.async(() -> {
            throw new Cancelled("gave up");
        }));
        awaitDone(f);
        assertEquals(Future.State.CANCELLED, f.state());
        assertThrows(Cancelled.class, () -> inIo(f::await));
    }

    @Test
    void resultNowAndExceptionNowReportOnlyTheirOwnOutcome() {
        Future<String> ok = inIo(() -> Io.async(() -> "ok"));
        awaitDone(ok);
        assertEquals("ok", ok.resultNow());
        assertThrows(IllegalStateException.class, ok::exceptionNow);

        Future<String> pending = Future.from(new CompletableFuture<String>());
        assertThrows(IllegalStateException.class, pending::resultNow);
        assertThrows(IllegalStateException.class, pending::exceptionNow);
        assertEquals(Future.State.PENDING, pending.state());
    }

    @Test
    void manyAwaitersAllSeeTheValue() {
        CompletableFuture<String> source = new CompletableFuture<>();
        Future<String> shared = Future.from(source);
        List<Started<String>> awaiters = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            awaiters.add(startElsewhere(shared::await));
        }
        awaiters.forEach(Started::awaitParked);
        source.complete("everyone");
        for (Started<String> awaiter : awaiters) {
            assertEquals("everyone", inIo(() -> awaiter.future().await()));
        }
    }

    @Test
    void manyAwaitersAllSeeTheFailure() {
        CompletableFuture<String> source = new CompletableFuture<>();
        Future<String> shared = Future.from(source);
        List<Started<String>> awaiters = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            awaiters.add(startElsewhere(shared::await));
        }
        awaiters.forEach(Started::awaitParked);
        IllegalArgumentException failure = new IllegalArgumentException("bad");
        source.completeExceptionally(failure);
        for (Started<String> awaiter : awaiters) {
            assertSame(
                    failure,
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> inIo(() -> awaiter.future().await())));
        }
    }

    @Test
    void awaitFromAPlainThreadBlocksUntilDone() {
        CompletableFuture<String> source = new CompletableFuture<>();
        Future<String> f = Future.from(source);
        Thread me = Thread.currentThread();
        helper("completer", () -> {
            awaitParked(me);
            source.complete("late");
        });
        assertEquals("late", inIo(f::await));
    }

    @Test
    void anInterruptedPlainThreadStopsWaitingWithCancelledAndKeepsItsFlag() {
        CompletableFuture<String> source = new CompletableFuture<>();
        Future<String> never = Future.from(source);
        Thread me = Thread.currentThread();
        helper("interrupter", () -> {
            awaitParked(me);
            eventually().until(() -> waiterCount(never) == 1); // the await is registered on the future
            me.interrupt();
        });
        Throwable thrown = thrownBy(() -> inIo(never::await));
        assertTrue(Thread.interrupted(), "the interrupt flag is left set (and cleared here)");
        assertInstanceOf(Cancelled.class, thrown);
        assertEquals(Future.State.PENDING, never.state(), "the awaited future is left alone");
        assertEquals(0, waiterCount(never), "the waiter was deregistered");
    }

    @Test
    void anInterruptedTaskKeepsWaitingUntilReadied() {
        CompletableFuture<String> source = new CompletableFuture<>();
        Started<String> started = startElsewhere(() -> Future.from(source).await());
        started.awaitParked();
        started.thread().interrupt();
        started.awaitParked(); // the interrupt did not end the wait: the task parks again
        assertEquals(Future.State.PENDING, started.future().state());
        source.complete("still waited");
        assertEquals("still waited", inIo(() -> started.future().await()));
    }

    @Test
    void awaitFromAPlainThreadNeedsNoInstalledIo() {
        CompletableFuture<String> source = new CompletableFuture<>();
        Future<String> f = Future.from(source);
        Thread me = Thread.currentThread();
        helper("completer", () -> {
            awaitParked(me);
            source.complete("no Io needed");
        });
        assertEquals("no Io needed", f.await()); // no Io.with around it
    }

    @Test
    void aParentAndAChildAwaitingEachOtherFailInsteadOfHanging() {
        Future<Object> parent = inIo(() -> Io.async(() -> {
            Future<?> self = Io.currentTask().orElseThrow();
            Future<Object> child = Io.async(() -> self.await());
            return child.await();
        }));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> inIo(parent::await));
        assertTrue(e.getMessage().contains("awaits"), e.getMessage());
    }

    @Test
    void onDoneRunsOnceWhenDoneAndAClosedRegistrationNeverRuns() {
        CompletableFuture<String> source = new CompletableFuture<>();
        Future<String> f = Future.from(source);
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger withdrawn = new AtomicInteger();
        f.onDone(ran::incrementAndGet);
        io.weft.Registration registration = f.onDone(withdrawn::incrementAndGet);
        assertEquals(2, waiterCount(f));
        registration.close();
        registration.close();
        assertEquals(1, waiterCount(f), "closing the registration deregistered its action, and only it");
        assertEquals(0, ran.get());
        source.complete("done");
        assertEquals(1, ran.get());
        assertEquals(0, withdrawn.get(), "a closed registration ran");
        assertEquals(0, waiterCount(f));
        f.onDone(ran::incrementAndGet); // already done: runs at once, registers nothing
        assertEquals(2, ran.get());
        assertEquals(0, waiterCount(f));
    }

    @Test
    void aTaskAwaitingAnotherTaskGetsItsValue() {
        String result = inIo(() -> Io.async(() -> {
                    Future<String> child = Io.async(() -> "child");
                    return "parent+" + child.await();
                })
                .await());
        assertEquals("parent+child", result);
    }

    @Test
    void aTaskAwaitingItsOwnFutureFailsInsteadOfHanging() {
        Future<Object> f =
                inIo(() -> Io.async(() -> Io.currentTask().orElseThrow().await()));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> inIo(f::await));
        assertTrue(e.getMessage().contains("own"), e.getMessage());
    }

    @Test
    void anAwaitCycleBetweenTwoTasksFailsInsteadOfHanging() {
        CompletableFuture<Future<?>> firstHandle = new CompletableFuture<>();
        CompletableFuture<Future<?>> secondHandle = new CompletableFuture<>();
        Started<Object> first =
                startElsewhere(() -> Future.from(secondHandle).await().await());
        firstHandle.complete(first.future());
        Started<Object> second =
                startElsewhere(() -> Future.from(firstHandle).await().await());
        secondHandle.complete(second.future());
        awaitDone(first.future());
        awaitDone(second.future());
        Throwable a = first.future().exceptionNow();
        Throwable b = second.future().exceptionNow();
        assertTrue(
                a instanceof IllegalStateException || b instanceof IllegalStateException,
                "one side sees the cycle: " + a + " / " + b);
        assertTrue(String.valueOf(a.getMessage()).contains("cycle")
                || String.valueOf(b.getMessage()).contains("cycle"));
    }

    @Test
    void anAwaitCycleOfThreeTasksFailsInsteadOfHanging() {
        List<CompletableFuture<Future<?>>> handles =
                List.of(new CompletableFuture<>(), new CompletableFuture<>(), new CompletableFuture<>());
        List<Started<Object>> tasks = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            CompletableFuture<Future<?>> next = handles.get((i + 1) % 3);
            tasks.add(startElsewhere(() -> Future.from(next).await().await())); // task i awaits task i + 1
        }
        for (int i = 0; i < 3; i++) {
            handles.get(i).complete(tasks.get(i).future());
        }
        for (Started<Object> task : tasks) {
            awaitDone(task.future());
        }
        for (Started<Object> task : tasks) {
            // the task that saw the cycle fails with it; each of the others rethrows what the task it awaited threw
            Throwable failure = task.future().exceptionNow();
            assertInstanceOf(IllegalStateException.class, failure);
            assertTrue(String.valueOf(failure.getMessage()).contains("cycle"), failure.getMessage());
        }
    }

    @Test
    void anOnDoneActionMayAwaitTheFutureItWatches() throws Exception {
        CompletableFuture<String> release = new CompletableFuture<>();
        Started<String> task = startElsewhere(() -> Future.from(release).await() + "!");
        CompletableFuture<String> seenWhenItCompleted = new CompletableFuture<>();
        task.future().onDone(() -> awaitInto(task.future(), seenWhenItCompleted)); // runs on the completing thread
        release.complete("done");
        assertEquals("done!", seenWhenItCompleted.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS));
        CompletableFuture<String> seenOnceDone = new CompletableFuture<>();
        task.future().onDone(() -> awaitInto(task.future(), seenOnceDone)); // done: runs here, at once
        assertEquals("done!", seenOnceDone.getNow("the action did not run at once"));
    }

    /** Completes {@code into} with what awaiting {@code future} returns or throws. */
    private static void awaitInto(Future<String> future, CompletableFuture<String> into) {
        try {
            into.complete(future.await());
        } catch (Throwable t) {
            into.completeExceptionally(t);
        }
    }

    @Test
    void anOnDoneActionThatThrowsIsReportedAndTheOtherWaitersStillRun() throws Exception {
        CompletableFuture<String> source = new CompletableFuture<>();
        Future<String> f = Future.from(source);
        IllegalStateException boom = new IllegalStateException("an onDone action failed");
        List<String> ran = new CopyOnWriteArrayList<>();
        f.onDone(() -> ran.add("registered before"));
        f.onDone(() -> {
            throw boom;
        });
        f.onDone(() -> ran.add("registered after"));
        Started<String> awaiter = startElsewhere(f::await);
        awaiter.awaitParked();
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        Thread completer = helper("completer", () -> {
            Thread.currentThread().setUncaughtExceptionHandler((thread, e) -> reported.add(e));
            source.complete("value");
        });
        completer.join(PATIENCE.toMillis());
        assertEquals(List.of(boom), reported, "the completing thread's handler got the action's exception");
        assertEquals(
                List.of("registered after", "registered before"),
                ran.stream().sorted().toList());
        assertEquals("value", f.resultNow(), "the future keeps its value");
        assertEquals("value", inIo(() -> awaiter.future().await()), "the parked awaiter was woken");
    }

    @Test
    void anOnDoneActionThatThrowsOnADoneFutureIsReportedToo() {
        Future<String> done = Future.completed("value");
        IllegalStateException boom = new IllegalStateException("an onDone action failed");
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        Thread me = Thread.currentThread();
        Thread.UncaughtExceptionHandler own = me.getUncaughtExceptionHandler();
        me.setUncaughtExceptionHandler((thread, e) -> reported.add(e));
        try {
            done.onDone(() -> {
                throw boom;
            }); // runs at once on this thread: same rule as on the completing thread
        } finally {
            me.setUncaughtExceptionHandler(own == me.getThreadGroup() ? null : own);
        }
        assertEquals(List.of(boom), reported);
    }

    /**
     * An await chain of 10^5 tasks, each awaiting the one spawned before it (issue 15), spawned at
     * once: a scheduling Io that runs an awaited task in place (join helping) nests tasks on one
     * stack, and must bound that nesting; then the chain parks and unwinds link by link. It ends
     * within the test's timeout, without a StackOverflowError.
     */
    @Test
    void anAwaitChainOfAHundredThousandTasksUnwinds() {
        assumeFalse(
                runsTasksInline(), "an inline Io runs each task to its end inside async: no chain of parked awaits");
        int depth = 100_000;
        CompletableFuture<Integer> release = new CompletableFuture<>();
        AtomicInteger awaiting = new AtomicInteger();
        Future<Integer> last = inIo(() -> {
            Future<Integer> link = Io.async(() -> {
                awaiting.incrementAndGet();
                return Future.from(release).await();
            });
            for (int i = 1; i < depth; i++) {
                Future<Integer> previous = link;
                link = Io.async(() -> {
                    awaiting.incrementAndGet();
                    return previous.await() + 1;
                });
            }
            return link;
        });
        eventually().until(() -> awaiting.get() == depth || last.isDone()); // every link waits on the one before it
        assertEquals(
                Future.State.PENDING,
                last.state(),
                () -> "the chain ended before its release: " + thrownBy(last::await));
        release.complete(0);
        assertEquals(depth - 1, (int) inIo(last::await));
    }

    @Test
    void timedAwaitReturnsTheValueWhenDoneInTime() {
        Future<String> f = inIo(() -> Io.async(() -> "quick"));
        assertEquals("quick", inIo(() -> f.await(Duration.ofSeconds(10))));
    }

    @Test
    void timedAwaitThrowsTimedOutOnTheIosClockAndLeavesTheFutureAlone() {
        Future<String> never = Future.from(new CompletableFuture<String>());
        long start = io.nowMs();
        TimedOut e = assertThrows(TimedOut.class, () -> inIo(() -> never.await(Duration.ofMillis(30))));
        assertTrue(io.nowMs() >= start + 30, "gave up before the timeout on the Io's clock");
        assertTrue(e.getMessage().contains("PT0.03S"), e.getMessage());
        assertEquals(Future.State.PENDING, never.state());
    }

    @Test
    void aTaskAwaitingItsOwnFutureWithATimeoutTooLongToRepresentWaitsUntilCancelled() {
        Started<Object> self =
                startElsewhere(() -> Io.currentTask().orElseThrow().await(Duration.ofSeconds(Long.MAX_VALUE)));
        self.awaitParked(); // a timed await: not a self-await error, however far its deadline
        assertFalse(self.future().isDone(), String.valueOf(self.future()));
        self.future().cancel();
        awaitDone(self.future());
        assertEquals(Future.State.CANCELLED, self.future().state());
    }

    @Test
    void aTimedAwaitFromAPlainThreadUsesTheClockOfTheFuturesIo() {
        Started<Void> parked = startElsewhere(IoContract::parkUntilCancelled);
        parked.awaitParked();
        Future<Void> pending = parked.future();
        long start = io.nowMs();
        // nothing installed on this thread: the deadline is on the task's Io's clock (on a virtual
        // clock an hour passes at once; on a real one, the test waits 30 ms)
        Duration timeout = hasVirtualClock() ? Duration.ofHours(1) : Duration.ofMillis(30);
        assertThrows(TimedOut.class, () -> pending.await(timeout));
        assertTrue(io.nowMs() >= start + timeout.toMillis(), io.nowMs() + " < " + start + " + " + timeout);
        pending.cancel();
        awaitDone(pending);
    }

    @Test
    void timedAwaitWithZeroTimeoutOnlyLooks() {
        Future<String> never = Future.from(new CompletableFuture<String>());
        assertThrows(TimedOut.class, () -> inIo(() -> never.await(Duration.ZERO)));
        Future<String> done = Future.completed("here");
        assertEquals("here", inIo(() -> done.await(Duration.ZERO)));
    }

    @Test
    void toCompletableFutureMirrorsValueFailureAndCancellation() throws Exception {
        assertEquals("v", inIo(() -> Io.async(() -> "v")).toCompletableFuture().get());

        IllegalStateException boom = new IllegalStateException("boom");
        Future<String> failed = inIo(() -> Io.async(() -> {
            throw boom;
        }));
        awaitDone(failed);
        ExecutionException e = assertThrows(
                ExecutionException.class, () -> failed.toCompletableFuture().get());
        assertSame(boom, e.getCause());

        Future<String> pending = Future.from(new CompletableFuture<String>());
        CompletableFuture<String> mirror = pending.toCompletableFuture();
        pending.cancel();
        assertTrue(mirror.isCancelled());
    }

    @Test
    void cancellingTheCompletableFutureCancelsTheTask() {
        AtomicReference<String> cleanup = new AtomicReference<>();
        Started<Void> started = startElsewhere(() -> {
            try {
                return parkUntilCancelled();
            } finally {
                cleanup.set("ran");
            }
        });
        started.awaitParked();
        assertTrue(started.future().toCompletableFuture().cancel(true));
        awaitDone(started.future());
        assertEquals(Future.State.CANCELLED, started.future().state());
        assertEquals("ran", cleanup.get());
    }

    @Test
    void fromCompletionStageCarriesValueFailureAndCancellation() {
        assertEquals(
                "v",
                inIo(() -> Future.from(CompletableFuture.completedFuture("v")).await()));

        IllegalStateException boom = new IllegalStateException("boom");
        CompletableFuture<String> failing = CompletableFuture.supplyAsync(() -> {
            throw boom;
        });
        assertSame(
                boom,
                assertThrows(
                        IllegalStateException.class,
                        () -> inIo(() -> Future.from(failing).await())));

        CompletableFuture<String> cancelled = new CompletableFuture<>();
        cancelled.cancel(false);
        Future<String> f = Future.from(cancelled);
        assertEquals(Future.State.CANCELLED, f.state());
        assertInstanceOf(Cancelled.class, thrownBy(() -> inIo(f::await)));
    }

    @Test
    void anAwaiterParkedOnAFutureWakesWhenItCompletes() throws InterruptedException {
        CountDownLatch parked = new CountDownLatch(1);
        CompletableFuture<Integer> source = new CompletableFuture<>();
        Started<Integer> awaiter = startElsewhere(() -> {
            parked.countDown();
            return Future.from(source).await() + 1;
        });
        parked.await();
        awaiter.awaitParked();
        source.complete(1);
        assertEquals(2, (int) inIo(() -> awaiter.future().await()));
    }
}
