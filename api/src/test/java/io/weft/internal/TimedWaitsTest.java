package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Future.State;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.TimedOut;
import io.weft.TimerHandle;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Io.sleep and Future.await(Duration) on the manual clock of DeferredIo. */
class TimedWaitsTest {
    private static final Duration JOIN = Duration.ofSeconds(10);

    @Test
    void sleepWakesExactlyWhenTheClockReachesItsDeadline() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        Task<Long> task = io.async(() -> {
            Io.sleep(Duration.ofMillis(10));
            return io.nowMs();
        });
        Thread runner = io.runNextOnNewThread("sleeper");
        DeferredIo.awaitParkedOnToken(runner);

        io.advance(9);
        assertEquals(1, io.armedTimers(), "the timer must not fire before its deadline");
        io.advance(1);
        assertTrue(runner.join(JOIN));
        assertEquals(10L, task.resultNow());
    }

    @Test
    void zeroOrNegativeSleepsReturnAtOnceWithoutASuspendPoint() {
        DeferredIo io = new DeferredIo();
        AtomicBoolean passedBothSleeps = new AtomicBoolean();
        Task<String> task = io.async(() -> {
            Io.currentTask().orElseThrow().cancel(); // a suspend point would now throw Cancelled
            Io.sleep(Duration.ZERO);
            Io.sleep(Duration.ofMillis(-1));
            passedBothSleeps.set(true);
            return "dropped";
        });
        io.runAll();

        assertTrue(passedBothSleeps.get());
        assertEquals(0, io.armedTimers());
        assertEquals(State.CANCELLED, task.state());
    }

    @Test
    void aCancelledSleeperWakesAtOnceAndItsTimerIsCancelled() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        Task<String> task = io.async(() -> {
            Io.sleep(Duration.ofDays(1));
            return "slept a day";
        });
        Thread runner = io.runNextOnNewThread("sleeper");
        DeferredIo.awaitParkedOnToken(runner);

        assertTrue(task.cancel());
        assertTrue(runner.join(JOIN));
        assertEquals(State.CANCELLED, task.state());
        assertEquals(0, io.armedTimers());
        assertEquals(0, io.nowMs(), "no time passed");
    }

    @Test
    void awaitWithATimeoutThrowsTimedOutAtTheDeadlineAndLeavesTheFutureAndNoWaiterBehind() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        Task<String> future = Task.of(Future.from(new CompletableFuture<String>()), "future");
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread awaiter = awaitOnNewThread(io, () -> future.await(Duration.ofMillis(5)), outcome);
        DeferredIo.awaitParkedOnToken(awaiter);
        assertEquals(1, future.waiterCount());

        io.advance(4);
        assertEquals(1, io.armedTimers());
        io.advance(1);
        assertTrue(awaiter.join(JOIN));
        assertInstanceOf(TimedOut.class, outcome.get());
        assertEquals(State.PENDING, future.state(), "giving up does not cancel the future");
        assertEquals(0, future.waiterCount(), "the timed-out awaiter deregistered");
    }

    /**
     * A timed await used to look at the clock before its first park: when the reading reached the
     * deadline in between (a real clock's millisecond ticks over a few microseconds after the
     * deadline was computed), it timed out without waiting. On a real clock a deadline has passed
     * only once the reading has passed it, which the Io's timer knows and a reading does not. Here
     * the reading ticks over between the two looks, and timers fire once the reading has passed
     * their deadline, as on a real clock.
     */
    @Test
    void aTimedAwaitEndsWhenItsTimerFiresNotWhenTheReadingReachesTheDeadline() throws InterruptedException {
        AtomicInteger readings = new AtomicInteger();
        DeferredIo io = new DeferredIo() {
            @Override
            public long nowMs() {
                if (readings.incrementAndGet() == 2) {
                    advance(1); // the await computed its deadline from reading 1: it is reached now
                }
                return super.nowMs();
            }

            @Override
            public TimerHandle armTimer(long deadlineMs, ParkToken park) {
                return super.armTimer(deadlineMs == NO_DEADLINE ? NO_DEADLINE : deadlineMs + 1, park);
            }
        };
        Task<String> future = Task.of(Future.from(new CompletableFuture<String>()), "future");
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread awaiter = awaitOnNewThread(io, () -> future.await(Duration.ofMillis(1)), outcome);
        DeferredIo.awaitParkedOnToken(awaiter);
        assertEquals(1, io.nowMs(), "the reading reached the deadline");
        assertEquals(1, io.armedTimers());

        io.advance(1);
        assertTrue(awaiter.join(JOIN));
        assertInstanceOf(TimedOut.class, outcome.get());
        assertEquals(0, future.waiterCount());
    }

    @Test
    void awaitWithATimeoutReturnsTheValueWhenDoneInTimeAndCancelsItsTimer() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        CompletableFuture<String> stage = new CompletableFuture<>();
        Task<String> future = Task.of(Future.from(stage), "future");
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread awaiter = awaitOnNewThread(io, () -> future.await(Duration.ofMillis(5)), outcome);
        DeferredIo.awaitParkedOnToken(awaiter);

        stage.complete("in time");
        assertTrue(awaiter.join(JOIN));
        assertEquals("in time", outcome.get());
        assertEquals(0, io.armedTimers());
    }

    @Test
    void awaitWithAZeroTimeoutOnlyLooks() {
        DeferredIo io = new DeferredIo();
        Future<String> pending = Future.from(new CompletableFuture<>());

        assertThrows(TimedOut.class, () -> Io.with(io).call(() -> pending.await(Duration.ZERO)));
        assertEquals("done", Io.with(io).call(() -> Future.completed("done").await(Duration.ZERO)));
        assertEquals(0, io.armedTimers());
    }

    @Test
    void awaitWithAHugeTimeoutDoesNotOverflowIntoAnImmediateTimeout() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        io.advance(1_000);
        CompletableFuture<String> stage = new CompletableFuture<>();
        Future<String> future = Future.from(stage);
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread awaiter = awaitOnNewThread(io, () -> future.await(Duration.ofSeconds(Long.MAX_VALUE)), outcome);
        DeferredIo.awaitParkedOnToken(awaiter);

        stage.complete("eventually");
        assertTrue(awaiter.join(JOIN));
        assertSame("eventually", outcome.get());
    }

    @Test
    void aTaskAwaitingItsOwnFutureWithAHugeTimeoutWaitsLikeATimedAwaitInsteadOfFailing() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        Task<String> self = io.async(() -> {
            Future<?> me = Io.currentTask().orElseThrow();
            me.await(Duration.ofSeconds(Long.MAX_VALUE)); // saturates to "no deadline", but is still timed
            return "unreachable";
        });
        Thread runner = io.runNextOnNewThread("self-awaiter");
        DeferredIo.awaitParkedOnToken(runner); // before the fix: failed at once as a self-await
        self.cancel();
        assertTrue(runner.join(JOIN));
        assertEquals(State.CANCELLED, self.state());
    }

    @Test
    void aTimedAwaitFromAPlainThreadWithNothingInstalledUsesTheFuturesOwnIo() throws InterruptedException {
        DeferredIo io = new DeferredIo(); // no default Io on this module's test path
        Task<String> queued = io.async(() -> "ran");
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread awaiter = Thread.ofPlatform().name("plain").daemon().start(() -> {
            try {
                outcome.set(queued.await(Duration.ofMillis(5)));
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        DeferredIo.awaitParkedOnToken(awaiter); // before the fix: IllegalStateException, no default Io
        assertEquals(1, io.armedTimers(), "the deadline is on the future's Io's clock");
        io.advance(5);
        assertTrue(awaiter.join(JOIN));
        assertInstanceOf(TimedOut.class, outcome.get());

        Thread second = Thread.ofPlatform()
                .name("plain-2")
                .daemon()
                .start(() -> outcome.set(queued.await(Duration.ofMillis(5))));
        DeferredIo.awaitParkedOnToken(second);
        io.runNext();
        assertTrue(second.join(JOIN));
        assertEquals("ran", outcome.get());
        assertEquals(0, io.armedTimers());
    }

    /** Calls {@code body} with {@code io} installed on a new plain thread; its value or exception lands in {@code outcome}. */
    private static Thread awaitOnNewThread(DeferredIo io, Callable<String> body, AtomicReference<Object> outcome) {
        return Thread.ofPlatform().name("awaiter").daemon().start(() -> {
            try {
                outcome.set(Io.with(io).call(body));
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
    }
}
